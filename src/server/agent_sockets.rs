//! The registry of agent sockets the daemon serves: one listener per
//! managed agent at `<runtime>/agents/<n>/mcp.sock` (the container sees the
//! directory as `/run/hive/`), and the manager's at
//! `<runtime>/manager/mcp.sock`.
//!
//! Binding replaces whatever is at the path, never following it
//! (`bind_replacing`): the directory is the container's
//! `/run/hive`, writable from inside, so a directory, symlink or socket an
//! agent left there must not stop the daemon (the state-directory lock,
//! not a connect probe an agent could answer, keeps two daemons apart). Each listener has its own cancellation
//! token, a child of the daemon's shutdown token, so destroying an agent
//! ends its listener and its open connections while the daemon's shutdown
//! ends them all. Socket files are `0600` and owned by the owner of their
//! directory: an agent's directory belongs to the harness's user in the
//! agent's own user range (`systemd::dbus::userns`), so that user, and no
//! other user of the container or the host but root, may connect.
//!
//! Rejected alternative: one socket for every agent with a name in each
//! request, which would make identity a claim instead of a fact.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::os::unix::net::UnixListener;
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::Semaphore;

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::agent;
use super::egress_socket::{self, EGRESS_SLOTS, EGRESS_SOCKET_NAME};
use super::listener;
use crate::service::sockets::AgentSockets;
use crate::service::{Caller, Hive};
use crate::systemd::activation::{self, BindError};
use crate::systemd::notify;
use crate::wire::ident::Ident;

/// The socket file's name inside an agent's (or the manager's) directory.
pub const SOCKET_NAME: &str = "mcp.sock";

/// Bind an agent's socket file (mode `0600`: the container's root only),
/// replacing whatever the agent left at its path without following it.
fn bind_replacing(path: &Path, staging: &Path) -> Result<UnixListener, BindError> {
    activation::bind_replacing(path, staging, 0o600)
}

/// The `FDNAME=` an agent's socket has in systemd's fd store.
fn agent_fd_name(name: &Ident) -> String {
    format!("agent-{name}")
}

/// The `FDNAME=` an agent's egress socket has in systemd's fd store.
fn egress_fd_name(name: &Ident) -> String {
    format!("egress-{name}")
}

/// The `FDNAME=` of the manager's socket.
const MANAGER_FD_NAME: &str = "manager";

/// The `FDNAME=` of the manager's egress socket.
const MANAGER_EGRESS_FD_NAME: &str = "manager-egress";

/// Hand `listener` to systemd's fd store under `name`; a failure is logged
/// (the socket still serves; a restart will bind it again).
fn store_fd(name: &str, listener: &UnixListener) {
    use std::os::fd::AsFd;
    if let Err(err) = notify::store_fd(name, listener.as_fd()) {
        tracing::warn!(
            fd = name,
            "cannot keep the socket in systemd's fd store: {err}"
        );
    }
}

/// Ask systemd to close its copy of `name` (the agent was destroyed).
fn remove_stored_fd(name: &str) {
    if let Err(err) = notify::remove_fd(name) {
        tracing::warn!(
            fd = name,
            "cannot remove the socket from systemd's fd store: {err}"
        );
    }
}

/// A listener systemd handed back from its fd store, checked to be one.
fn stored_listener(name: &str, fd: OwnedFd) -> Option<UnixListener> {
    match activation::listener_from_fd(name, fd) {
        Ok(listener) => Some(listener),
        Err(err) => {
            tracing::warn!(fd = name, "{err}; binding the socket again");
            None
        }
    }
}

#[derive(Debug)]
struct Open {
    /// `mcp.sock`, and an agent's `egress.sock`.
    paths: Vec<PathBuf>,
    stop: CancellationToken,
}

/// What a listener serves.
#[derive(Debug, Clone)]
enum Door {
    /// The agent (or manager) socket of this caller.
    Agent(Caller),
    /// This agent's egress proxy.
    Egress(Ident),
}

/// Every agent socket being served.
#[derive(Debug)]
pub struct SocketRegistry {
    shutdown: CancellationToken,
    tasks: TaskTracker,
    agents: Mutex<HashMap<Ident, Open>>,
    manager: Mutex<Option<Open>>,
    /// Sockets systemd handed back from its fd store, by `FDNAME`, until
    /// they are served again.
    stored: Mutex<HashMap<String, OwnedFd>>,
    /// Whether bound sockets go into systemd's fd store.
    fd_store: bool,
}

impl SocketRegistry {
    /// A registry whose listeners stop with `shutdown` and whose
    /// connections are tracked by `tasks`.
    pub fn new(shutdown: CancellationToken, tasks: TaskTracker) -> Self {
        Self {
            shutdown,
            tasks,
            agents: Mutex::new(HashMap::new()),
            manager: Mutex::new(None),
            stored: Mutex::new(HashMap::new()),
            fd_store: false,
        }
    }

    /// Keep new sockets in systemd's fd store (`fd_store`), and serve the
    /// ones it handed back (`stored`, by `FDNAME`) instead of binding:
    /// a restart or a crash then never rebinds a path an agent can touch,
    /// and connects made while no daemon runs wait in the kept socket's
    /// backlog instead of being refused.
    pub fn with_fd_store(mut self, fd_store: bool, stored: HashMap<String, OwnedFd>) -> Self {
        self.fd_store = fd_store;
        self.stored = Mutex::new(stored);
        self
    }

    /// Stored fds no managed agent claimed (destroyed while the daemon
    /// was down): dropped from systemd's store; their names.
    pub fn forget_unclaimed(&self) -> Vec<String> {
        let left: Vec<String> = self
            .stored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .drain()
            .map(|(name, _fd)| name)
            .collect();
        for name in &left {
            remove_stored_fd(name);
        }
        left
    }

    fn agents(&self) -> MutexGuard<'_, HashMap<Ident, Open>> {
        self.agents.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn manager(&self) -> MutexGuard<'_, Option<Open>> {
        self.manager.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Bind and serve `<runtime>/manager/mcp.sock`; its path.
    pub fn open_manager(&self, hive: &Hive) -> Result<PathBuf, BindError> {
        let mut slot = self.manager();
        if let Some(open) = slot.as_ref() {
            return Ok(open.paths[0].clone());
        }
        let dir = hive.config().manager_runtime_dir();
        let (path, egress) = (dir.join(SOCKET_NAME), dir.join(EGRESS_SOCKET_NAME));
        let manager = hive.config().manager();
        let stop = self.shutdown.child_token();
        let slots = Arc::new(Semaphore::new(hive.config().agent_max_connections));
        let door = Door::Agent(Caller::Manager(manager.clone()));
        let both = (&stop, slots.clone());
        self.serve(
            hive,
            path.clone(),
            door,
            (MANAGER_FD_NAME, "manager socket"),
            both,
        )
        .and_then(|()| {
            let door = Door::Egress(manager);
            let fd = (MANAGER_EGRESS_FD_NAME, "manager egress socket");
            self.serve(hive, egress.clone(), door, fd, (&stop, slots))
        })
        .inspect_err(|_| stop.cancel())?;
        *slot = Some(Open {
            paths: vec![path.clone(), egress],
            stop,
        });
        Ok(path)
    }

    /// Bind (or take back) `path` and serve `door` on it until `stop`,
    /// its connections taking `slots`.
    fn serve(
        &self,
        hive: &Hive,
        path: PathBuf,
        door: Door,
        (fd_name, label): (&str, &'static str),
        (stop, slots): (&CancellationToken, Arc<Semaphore>),
    ) -> Result<(), BindError> {
        let io = |source| BindError::Io {
            path: path.clone(),
            source,
        };
        let kept = self
            .stored
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .remove(fd_name)
            .and_then(|fd| stored_listener(fd_name, fd));
        let listener = match kept {
            Some(listener) => {
                tracing::info!(path = %path.display(), "{label} taken back from systemd's fd store");
                listener
            }
            None => {
                let staging = hive.config().socket_staging_dir();
                let listener = bind_replacing(&path, &staging)?;
                give_to_directory_owner(&path);
                if self.fd_store {
                    store_fd(fd_name, &listener);
                }
                listener
            }
        };
        listener.set_nonblocking(true).map_err(io)?;
        let listener = tokio::net::UnixListener::from_std(listener).map_err(io)?;
        let (hive, stop2) = (hive.clone(), stop.clone());
        let max = hive.config().agent_max_connections;
        let refused = AtomicU64::new(0);
        let need = match door {
            Door::Agent(_) => 1,
            Door::Egress(_) => EGRESS_SLOTS,
        };
        // Tracked like the connections: the drain waits for the loop too, so
        // a connection it accepts as the stop fires is served (or closed)
        // before the process exits, never dropped unanswered after the
        // tracker emptied (seen once in 7,000 requests across 20 restarts).
        self.tasks.spawn(listener::accept_loop(
            listener,
            label,
            stop.clone(),
            self.tasks.clone(),
            move |stream| {
                let (hive, door, stop) = (hive.clone(), door.clone(), stop2.clone());
                let slot = slots.clone().try_acquire_many_owned(need);
                let n = if slot.is_err() {
                    refused.fetch_add(1, Ordering::Relaxed) + 1
                } else {
                    0
                };
                async move {
                    match (slot, door) {
                        (Ok(_slot), Door::Agent(caller)) => {
                            agent::serve(hive, caller, stream, stop).await;
                        }
                        (Ok(_slot), Door::Egress(name)) => {
                            egress_socket::serve(hive, name, stream, stop).await;
                        }
                        (Err(_), Door::Agent(caller)) => {
                            agent::refuse_busy(caller, stream, max, n).await;
                        }
                        (Err(_), Door::Egress(name)) => {
                            egress_socket::refuse_busy(hive, name, stream, max, n).await;
                        }
                    }
                }
            },
        ));
        tracing::info!(path = %path.display(), "serving {label}");
        Ok(())
    }

    /// Remove every socket file this registry bound (on exit; the
    /// listeners stop with the shutdown token). With the fd store the files
    /// stay: they name the sockets systemd keeps for the next daemon.
    pub fn remove_files(&self) {
        if self.fd_store {
            return;
        }
        let agents: Vec<PathBuf> = self
            .agents()
            .values()
            .flat_map(|o| o.paths.clone())
            .collect();
        let manager: Vec<PathBuf> = self
            .manager()
            .iter()
            .flat_map(|o| o.paths.clone())
            .collect();
        for path in agents.iter().chain(manager.iter()) {
            let _ = std::fs::remove_file(path);
        }
    }

    /// The names whose sockets are open, sorted.
    pub fn open_agents(&self) -> Vec<Ident> {
        let mut names: Vec<Ident> = self.agents().keys().cloned().collect();
        names.sort();
        names
    }
}

/// Chown a freshly bound socket to the owner of its directory (the agent's
/// user, once its directory is in the agent's user range; root otherwise,
/// a no-op). On failure the socket stays root's: the agent cannot connect,
/// said in the journal, never more open than meant.
fn give_to_directory_owner(path: &std::path::Path) {
    use std::os::unix::fs::MetadataExt;
    let (Some(dir), Ok(sock)) = (path.parent(), std::fs::symlink_metadata(path)) else {
        return;
    };
    let Ok(owner) = std::fs::metadata(dir) else {
        return;
    };
    if (owner.uid(), owner.gid()) == (sock.uid(), sock.gid()) {
        return;
    }
    if let Err(e) = std::os::unix::fs::lchown(path, Some(owner.uid()), Some(owner.gid())) {
        tracing::warn!(path = %path.display(), error = %e, "cannot give the socket to its directory's owner");
    }
}

impl AgentSockets for SocketRegistry {
    fn open(&self, hive: &Hive, name: &Ident) -> Result<(), BindError> {
        let mut agents = self.agents();
        if agents.contains_key(name) {
            return Ok(());
        }
        let dir = hive.config().agent_runtime_dir(name);
        let (path, egress) = (dir.join(SOCKET_NAME), dir.join(EGRESS_SOCKET_NAME));
        let stop = self.shutdown.child_token();
        // One budget for both doors: an agent's connections cost the
        // daemon's fds whichever socket they came through.
        let slots = Arc::new(Semaphore::new(hive.config().agent_max_connections));
        let door = Door::Agent(Caller::Agent(name.clone()));
        let (mcp_fd, egress_fd) = (agent_fd_name(name), egress_fd_name(name));
        let both = (&stop, slots.clone());
        self.serve(hive, path.clone(), door, (&mcp_fd, "agent socket"), both)
            .and_then(|()| {
                let door = Door::Egress(name.clone());
                let both = (&stop, slots);
                self.serve(
                    hive,
                    egress.clone(),
                    door,
                    (&egress_fd, "egress socket"),
                    both,
                )
            })
            .inspect_err(|_| stop.cancel())?;
        let paths = vec![path, egress];
        agents.insert(name.clone(), Open { paths, stop });
        Ok(())
    }

    fn close(&self, name: &Ident) {
        if let Some(open) = self.agents().remove(name) {
            if self.fd_store {
                remove_stored_fd(&agent_fd_name(name));
                remove_stored_fd(&egress_fd_name(name));
            }
            open.stop.cancel();
            for path in &open.paths {
                let _ = std::fs::remove_file(path);
            }
            tracing::info!(agent = %name, "{name}: agent socket closed");
        }
    }
}

#[cfg(test)]
#[path = "agent_sockets_tests.rs"]
mod tests;
