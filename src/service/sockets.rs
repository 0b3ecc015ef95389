//! The seam between the service and the agents' sockets: `spawn` opens an
//! agent's socket before its container starts, `destroy` closes it.
//!
//! Decision: the daemon owns the registry of listeners (it owns every other
//! listener and the shutdown token) and hands the hive this small trait.
//! Rejected alternative: the service binding sockets itself, which would
//! pull the server's dispatchers below the service they call. How a socket
//! is bound and kept in systemd's fd store is the registry's business
//! (`crate::server::agent_sockets`), not the service's.

use std::fmt;

use super::{Hive, HiveError};
use crate::systemd::activation::BindError;
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
