//! One daemon per state directory: an exclusive `flock` on
//! `<state>/hive-c0re.lock`, held for the daemon's life, with its PID in the
//! file so a second daemon's refusal names the first.
//!
//! Decision: `flock`, not a PID file alone — the kernel drops the lock when
//! its holder dies (even by SIGKILL), so a crash never leaves the state
//! directory locked, and a recycled PID never looks alive. Rejected
//! alternative: probing host.sock, which misses two daemons whose runtime
//! directories differ (they would both write one database and one set of
//! agent sockets could be rebound under the other).

use std::fs::File;
use std::io::{Read, Seek, Write};
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};

use nix::fcntl::{Flock, FlockArg};

/// The lock file's name inside the state directory.
pub const LOCK_NAME: &str = "hive-c0re.lock";

/// Held while the daemon runs; dropping it releases the lock.
#[derive(Debug)]
pub struct StateLock {
    _lock: Flock<File>,
}

/// Why the state directory could not be locked.
#[derive(Debug, thiserror::Error)]
pub enum LockError {
    /// Another daemon holds it: stop that one (its PID is named), or give
    /// this one another `--state-dir`.
    #[error(
        "another hive-c0re ({holder}) is running on the state directory {}; stop it or use another --state-dir",
        .dir.display()
    )]
    Held { dir: PathBuf, holder: String },
    #[error("cannot lock the state directory {}", .dir.display())]
    Io {
        dir: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Take the state directory's lock (creating the directory, `0750`, and
/// the lock file, `0600`, as needed) and write our PID into it.
pub fn acquire(dir: &Path) -> Result<StateLock, LockError> {
    use std::os::unix::fs::DirBuilderExt;
    let io = |source| LockError::Io {
        dir: dir.to_path_buf(),
        source,
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o750)
        .create(dir)
        .map_err(io)?;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .write(true)
        .create(true)
        .truncate(false)
        .mode(0o600)
        .custom_flags(nix::libc::O_NOFOLLOW | nix::libc::O_CLOEXEC)
        .open(dir.join(LOCK_NAME))
        .map_err(io)?;
    let mut lock = match Flock::lock(file, FlockArg::LockExclusiveNonblock) {
        Ok(lock) => lock,
        Err((mut file, nix::errno::Errno::EWOULDBLOCK)) => {
            let mut pid = String::new();
            let _ = file.read_to_string(&mut pid);
            let holder = match pid.trim() {
                "" => "PID unknown".to_owned(),
                pid => format!("PID {pid}"),
            };
            return Err(LockError::Held {
                dir: dir.to_path_buf(),
                holder,
            });
        }
        Err((_, errno)) => return Err(io(errno.into())),
    };
    lock.set_len(0).map_err(io)?;
    lock.rewind().map_err(io)?;
    writeln!(&mut *lock, "{}", std::process::id()).map_err(io)?;
    Ok(StateLock { _lock: lock })
}

#[cfg(test)]
#[path = "lock_tests.rs"]
mod tests;
