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

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_stale_socket_file_is_replaced() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.sock");
        drop(UnixListener::bind(&path).unwrap());
        assert!(path.exists());
        let l = bind(&path).unwrap();
        assert!(UnixStream::connect(&path).is_ok());
        drop(l);
    }

    #[test]
    fn a_live_socket_is_never_stolen() {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.sock");
        let _live = UnixListener::bind(&path).unwrap();
        assert!(matches!(bind(&path), Err(BindError::AlreadyRunning(p)) if p == path));
    }

    #[test]
    fn a_path_too_long_for_a_unix_socket_says_so() {
        let path = PathBuf::from(format!("/tmp/{}/host.sock", "d".repeat(120)));
        let err = bind(&path).unwrap_err();
        assert!(matches!(err, BindError::PathTooLong { .. }));
        assert!(err.to_string().contains("past the ~100"), "{err}");
    }

    #[test]
    fn a_datagram_socket_is_not_taken_as_the_listener() {
        let (a, _b) = std::os::unix::net::UnixDatagram::pair().unwrap();
        let err = listener_from_fd("host", OwnedFd::from(a)).unwrap_err();
        assert!(matches!(err, ActivationError::NotAListener { .. }));
    }
}
