//! The seam between the service and the agents' sockets: `spawn` opens an
//! agent's socket before its container starts, `destroy` closes it.
//!
//! Decision: the daemon owns the registry of listeners (it owns every other
//! listener and the shutdown token) and hands the hive this small trait.
//! Rejected alternative: the service binding sockets itself, which would
//! pull the server's dispatchers below the service they call.

use std::fmt;

use super::{Hive, HiveError};
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixListener;
use std::path::Path;

pub use crate::systemd::activation::BindError;
use crate::wire::ident::Ident;

/// Opens and closes agents' sockets.
pub trait AgentSockets: Send + Sync + fmt::Debug {
    /// Bind `<runtime>/agents/<name>/mcp.sock` and serve it as `name`.
    /// Opening an open socket is a no-op.
    fn open(&self, hive: &Hive, name: &Ident) -> Result<(), BindError>;
    /// Stop serving `name`'s socket (its connections end) and remove its
    /// file. Closing a closed socket is a no-op.
    fn close(&self, name: &Ident);
}

/// Bind an agent's socket file (mode `0600`: the container's root only),
/// replacing whatever the agent left at its path without following it.
pub fn bind_replacing(path: &Path, staging: &Path) -> Result<UnixListener, BindError> {
    crate::systemd::activation::bind_replacing(path, staging, 0o600)
}

/// The `FDNAME=` an agent's socket has in systemd's fd store.
pub fn agent_fd_name(name: &Ident) -> String {
    format!("agent-{name}")
}

/// The `FDNAME=` of the manager's socket.
pub const MANAGER_FD_NAME: &str = "manager";

/// Whether this daemon keeps its agent sockets in systemd's fd store
/// (`$FDSTORE` > 0 and a notify socket).
pub fn fd_store_enabled() -> bool {
    crate::systemd::notify::fd_store_enabled()
}

/// Hand `listener` to systemd's fd store under `name`; a failure is logged
/// (the socket still serves; a restart will bind it again).
pub fn store_fd(name: &str, listener: &UnixListener) {
    use std::os::fd::AsFd;
    if let Err(err) = crate::systemd::notify::store_fd(name, listener.as_fd()) {
        tracing::warn!(
            fd = name,
            "cannot keep the socket in systemd's fd store: {err}"
        );
    }
}

/// Ask systemd to close its copy of `name` (the agent was destroyed).
pub fn remove_stored_fd(name: &str) {
    if let Err(err) = crate::systemd::notify::remove_fd(name) {
        tracing::warn!(
            fd = name,
            "cannot remove the socket from systemd's fd store: {err}"
        );
    }
}

/// A listener systemd handed back from its fd store, checked to be one.
pub fn stored_listener(name: &str, fd: OwnedFd) -> Option<UnixListener> {
    match crate::systemd::activation::listener_from_fd(name, fd) {
        Ok(listener) => Some(listener),
        Err(err) => {
            tracing::warn!(fd = name, "{err}; binding the socket again");
            None
        }
    }
}

impl Hive {
    /// Install the daemon's socket registry (once; later calls are ignored).
    pub fn set_agent_sockets(&self, sockets: std::sync::Arc<dyn AgentSockets>) {
        if self.inner.sockets.set(sockets).is_err() {
            tracing::warn!("agent socket registry installed twice; keeping the first");
        }
    }

    /// Open `name`'s socket, if the daemon serves agent sockets.
    pub(crate) fn open_socket(&self, name: &Ident) -> Result<(), HiveError> {
        match self.inner.sockets.get() {
            Some(sockets) => sockets
                .open(self, name)
                .map_err(|reason| HiveError::AgentSocket {
                    agent: name.clone(),
                    reason,
                }),
            None => Ok(()),
        }
    }

    /// Close `name`'s socket, if any.
    pub(crate) fn close_socket(&self, name: &Ident) {
        if let Some(sockets) = self.inner.sockets.get() {
            sockets.close(name);
        }
    }
}
