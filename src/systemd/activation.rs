//! Getting host.sock: from systemd's socket activation, by name, or bound by
//! the daemon itself when it was not activated (development, tests).
//!
//! Decisions:
//! - **Fds are looked up by name** (`LISTEN_FDNAMES`, `FileDescriptorName=`
//!   in the .socket unit). systemd does not keep the order of several fds
//!   stable, so "fd 3 is host.sock" would break the day a second socket unit
//!   is added.
//! - **Binding ourselves never steals a live socket**: a socket file that
//!   answers a connect belongs to a running daemon ([`BindError::AlreadyRunning`]);
//!   one that refuses is stale and is replaced (a crash must not leave the
//!   daemon unstartable).
//! - **An activated socket is never unlinked** on exit: it is systemd's.

#![allow(unsafe_code)] // taking ownership of inherited fds; see the SAFETY notes

use std::collections::HashMap;
use std::os::fd::{FromRawFd, OwnedFd};
use std::os::unix::net::{UnixListener, UnixStream};
use std::path::{Path, PathBuf};

use nix::sys::socket::{SockType, getsockopt, sockopt};

/// The `FileDescriptorName=` of host.sock in `hive-c0re.socket`.
pub const HOST_FD_NAME: &str = "host";
/// The `FileDescriptorName=` of the dashboard's web.sock in
/// `hive-c0re-web.socket`.
pub const WEB_FD_NAME: &str = "web";

/// Why the activation fds could not be taken.
#[derive(Debug, thiserror::Error)]
pub enum ActivationError {
    /// `LISTEN_FDS`/`LISTEN_FDNAMES` are malformed: the unit or the launcher
    /// is misconfigured.
    #[error("socket activation variables are invalid")]
    Env(#[source] std::io::Error),
    /// The fd named `name` is not a listening stream socket: fix the
    /// `.socket` unit (ListenStream=, not ListenDatagram= or Accept=yes).
    #[error("activation fd {name:?} is not a listening stream socket")]
    NotAListener { name: String },
}

/// Why binding host.sock ourselves failed.
#[derive(Debug, thiserror::Error)]
pub enum BindError {
    /// Another daemon answers on this socket. Stop it, or point this one at
    /// another `--runtime-dir`.
    #[error("hive-c0re is already running on {0}")]
    AlreadyRunning(PathBuf),
    /// `sockaddr_un` holds about 100 bytes; choose a shorter `--runtime-dir`.
    #[error("the socket path is {len} bytes, past the ~100 a unix socket allows: {path}")]
    PathTooLong { path: PathBuf, len: usize },
    #[error("cannot bind {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
}

/// Take every fd systemd passed, by name, and clear the activation
/// variables so children do not inherit them.
///
/// Must be called before any thread is started (it edits the environment).
pub fn take_named_fds() -> Result<HashMap<String, OwnedFd>, ActivationError> {
    // SAFETY: called from `main` before the runtime or any other thread
    // exists, which is remove_var's precondition.
    let fds = unsafe { sd_notify::listen_fds_with_names_and_unset_env() }
        .map_err(ActivationError::Env)?;
    let mut named = HashMap::new();
    for (raw, name) in fds {
        // SAFETY: LISTEN_PID named this process, so fds 3..3+LISTEN_FDS were
        // passed to us and nothing else in the process owns them.
        let fd = unsafe { OwnedFd::from_raw_fd(raw) };
        named.insert(name, fd);
    }
    Ok(named)
}

/// Turn the activation fd for host.sock into a listener, checking that it is
/// one.
pub fn listener_from_fd(name: &str, fd: OwnedFd) -> Result<UnixListener, ActivationError> {
    let is_stream = getsockopt(&fd, sockopt::SockType).is_ok_and(|t| t == SockType::Stream);
    let listening = getsockopt(&fd, sockopt::AcceptConn).unwrap_or(false);
    if !(is_stream && listening) {
        return Err(ActivationError::NotAListener { name: name.into() });
    }
    Ok(UnixListener::from(fd))
}

/// Bind `path` ourselves: replace a stale socket file, never a live one.
pub fn bind(path: &Path) -> Result<UnixListener, BindError> {
    let io = |source| BindError::Io {
        path: path.to_path_buf(),
        source,
    };
    let len = path.as_os_str().len();
    if len >= 108 {
        return Err(BindError::PathTooLong {
            path: path.to_path_buf(),
            len,
        });
    }
    // Connecting is the only honest liveness test: the file outlives its
    // daemon, and a pid file answers a different question.
    if UnixStream::connect(path).is_ok() {
        return Err(BindError::AlreadyRunning(path.to_path_buf()));
    }
    match std::fs::remove_file(path) {
        Ok(()) => {}
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
        Err(e) => return Err(io(e)),
    }
    if let Some(dir) = path.parent() {
        std::fs::create_dir_all(dir).map_err(io)?;
    }
    UnixListener::bind(path).map_err(|source| match source.kind() {
        std::io::ErrorKind::InvalidInput => BindError::PathTooLong {
            path: path.to_path_buf(),
            len,
        },
        // Lost a race with another daemon between the probe and the bind.
        std::io::ErrorKind::AddrInUse => BindError::AlreadyRunning(path.to_path_buf()),
        _ => io(source),
    })
}

/// Create `dir` (and its parents) and give it exactly `mode`, whatever the
/// umask.
pub fn make_dir(dir: &Path, mode: u32) -> Result<(), BindError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |source| BindError::Io {
        path: dir.to_path_buf(),
        source,
    };
    std::fs::create_dir_all(dir).map_err(io)?;
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode)).map_err(io)
}

/// Give the socket file we just bound `mode` and, when the group exists and
/// we may (root), the group `group`. Without the group (a development
/// machine), the file keeps our own and the log says so.
pub fn set_mode_and_group(path: &Path, mode: u32, group: &str) -> Result<(), BindError> {
    use std::os::unix::fs::PermissionsExt;
    let io = |source| BindError::Io {
        path: path.to_path_buf(),
        source,
    };
    match nix::unistd::Group::from_name(group) {
        Ok(Some(g)) => {
            if let Err(err) = nix::unistd::chown(path, None, Some(g.gid)) {
                tracing::warn!(path = %path.display(), "cannot give the socket to group {group}: {err}");
            }
        }
        _ => {
            tracing::warn!(path = %path.display(), "no group {group}: the socket keeps the daemon's group")
        }
    }
    std::fs::set_permissions(path, std::fs::Permissions::from_mode(mode)).map_err(io)
}

/// Bind a socket at `path`, inside a directory someone else (an agent's
/// container) can write, whatever that someone left there: a directory, a
/// symlink (never followed), a file, a live socket of its own. The socket
/// is bound in `staging` (the daemon's own directory, `0700`), given
/// `mode` there, and renamed over `path` — `rename(2)` replaces the entry
/// itself and never follows it, and the path is never missing a socket in
/// between. A directory at `path` is removed first (rename cannot replace
/// one).
///
/// Only for paths the state-directory lock makes this daemon's: there is
/// no "already running" probe, since an agent can answer one.
pub fn bind_replacing(path: &Path, staging: &Path, mode: u32) -> Result<UnixListener, BindError> {
    use std::os::unix::fs::{DirBuilderExt, PermissionsExt};
    let io = |p: &Path| {
        let p = p.to_path_buf();
        move |source| BindError::Io { path: p, source }
    };
    let Some(name) = path.file_name() else {
        return Err(io(path)(std::io::Error::from(
            std::io::ErrorKind::InvalidInput,
        )));
    };
    std::fs::DirBuilder::new()
        .recursive(true)
        .mode(0o700)
        .create(staging)
        .map_err(io(staging))?;
    std::fs::set_permissions(staging, std::fs::Permissions::from_mode(0o700))
        .map_err(io(staging))?;
    let parent = path.parent().unwrap_or(Path::new("/"));
    let tag = parent.file_name().unwrap_or_default();
    let mut temp = staging.join(tag);
    temp.as_mut_os_string().push(".");
    temp.as_mut_os_string().push(name);
    let _ = std::fs::remove_file(&temp);
    let listener = bind(&temp)?;
    std::fs::set_permissions(&temp, std::fs::Permissions::from_mode(mode)).map_err(io(&temp))?;
    std::fs::create_dir_all(parent).map_err(io(parent))?;
    // An agent may race us (recreate a directory between the removal and
    // the rename); a few rounds, then give up with the reason.
    let mut last = None;
    for _ in 0..5 {
        match std::fs::rename(&temp, path) {
            Ok(()) => return Ok(listener),
            Err(e) => {
                match std::fs::symlink_metadata(path) {
                    Ok(meta) if meta.is_dir() => {
                        // remove_dir_all does not follow symlinks inside.
                        let _ = std::fs::remove_dir_all(path);
                    }
                    _ => {}
                }
                last = Some(e);
            }
        }
    }
    let _ = std::fs::remove_file(&temp);
    Err(io(path)(
        last.unwrap_or_else(|| std::io::Error::other("rename failed")),
    ))
}

#[cfg(test)]
#[path = "activation_tests.rs"]
mod tests;
