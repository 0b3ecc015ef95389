//! The registry of agent sockets the daemon serves: one listener per
//! managed agent at `<runtime>/agents/<n>/mcp.sock` (the container sees the
//! directory as `/run/hive/`), and the manager's at
//! `<runtime>/manager/mcp.sock`.
//!
//! Binding follows host.sock's rules ([`sockets::bind`]): a stale file is
//! replaced, a live one never stolen. Each listener has its own cancellation
//! token, a child of the daemon's shutdown token, so destroying an agent
//! ends its listener and its open connections while the daemon's shutdown
//! ends them all. Socket files are `0600`: only root (the container's
//! harness runs as root) may connect.
//!
//! Rejected alternative: one socket for every agent with a name in each
//! request, which would make identity a claim instead of a fact.

use std::collections::HashMap;
use std::os::unix::fs::PermissionsExt;
use std::path::PathBuf;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use super::agent;
use super::listener;
use crate::service::sockets::{self, AgentSockets, BindError};
use crate::service::{Caller, Hive};
use crate::wire::ident::Ident;

/// The socket file's name inside an agent's (or the manager's) directory.
pub const SOCKET_NAME: &str = "mcp.sock";

#[derive(Debug)]
struct Open {
    path: PathBuf,
    stop: CancellationToken,
}

/// Every agent socket being served.
#[derive(Debug)]
pub struct SocketRegistry {
    shutdown: CancellationToken,
    tasks: TaskTracker,
    agents: Mutex<HashMap<Ident, Open>>,
    manager: Mutex<Option<Open>>,
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
        }
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
            return Ok(open.path.clone());
        }
        let path = hive.config().manager_runtime_dir().join(SOCKET_NAME);
        let caller = Caller::Manager(hive.config().manager());
        let open = self.serve(hive, path.clone(), caller, "manager socket")?;
        *slot = Some(open);
        Ok(path)
    }

    fn serve(
        &self,
        hive: &Hive,
        path: PathBuf,
        caller: Caller,
        label: &'static str,
    ) -> Result<Open, BindError> {
        let io = |source| BindError::Io {
            path: path.clone(),
            source,
        };
        let listener = sockets::bind(&path)?;
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o600)).map_err(io)?;
        listener.set_nonblocking(true).map_err(io)?;
        let listener = tokio::net::UnixListener::from_std(listener).map_err(io)?;
        let stop = self.shutdown.child_token();
        let (hive, stop2) = (hive.clone(), stop.clone());
        tokio::spawn(listener::accept_loop(
            listener,
            label,
            stop.clone(),
            self.tasks.clone(),
            move |stream| agent::serve(hive.clone(), caller.clone(), stream, stop2.clone()),
        ));
        tracing::info!(path = %path.display(), "serving {label}");
        Ok(Open { path, stop })
    }

    /// Remove every socket file this registry bound (on exit; the
    /// listeners stop with the shutdown token).
    pub fn remove_files(&self) {
        let agents: Vec<PathBuf> = self.agents().values().map(|o| o.path.clone()).collect();
        let manager = self.manager().as_ref().map(|o| o.path.clone());
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

impl AgentSockets for SocketRegistry {
    fn open(&self, hive: &Hive, name: &Ident) -> Result<(), BindError> {
        let mut agents = self.agents();
        if agents.contains_key(name) {
            return Ok(());
        }
        let path = hive.config().agent_runtime_dir(name).join(SOCKET_NAME);
        let open = self.serve(hive, path, Caller::Agent(name.clone()), "agent socket")?;
        agents.insert(name.clone(), open);
        Ok(())
    }

    fn close(&self, name: &Ident) {
        if let Some(open) = self.agents().remove(name) {
            open.stop.cancel();
            let _ = std::fs::remove_file(&open.path);
            tracing::info!(agent = %name, "{name}: agent socket closed");
        }
    }
}

#[cfg(test)]
mod tests {
    use crate::testing::{config_in, hive_at, id};
    use std::sync::Arc;

    use super::*;

    fn hive(dir: &tempfile::TempDir) -> (Hive, Arc<SocketRegistry>) {
        let (hive, _) = hive_at(config_in(dir.path()), 1);
        let registry = Arc::new(SocketRegistry::new(
            CancellationToken::new(),
            TaskTracker::new(),
        ));
        hive.set_agent_sockets(registry.clone());
        (hive, registry)
    }

    #[tokio::test]
    async fn spawn_binds_the_socket_and_destroy_removes_it() {
        let dir = tempfile::tempdir().unwrap();
        let (hive, registry) = hive(&dir);
        hive.spawn(&id("alice")).await.unwrap();
        let path = dir.path().join("run/agents/alice/mcp.sock");
        assert!(path.exists());
        assert_eq!(registry.open_agents(), vec![id("alice")]);
        // Opening again is a no-op, not a second bind.
        registry.open(&hive, &id("alice")).unwrap();
        hive.destroy(&id("alice"), false).await.unwrap();
        assert!(!path.exists());
        assert!(registry.open_agents().is_empty());
    }

    #[tokio::test]
    async fn a_live_socket_at_the_agents_path_fails_the_spawn_and_leaves_no_agent() {
        let dir = tempfile::tempdir().unwrap();
        let (hive, registry) = hive(&dir);
        let path = dir.path().join("run/agents/zed/mcp.sock");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        let _someone_else = std::os::unix::net::UnixListener::bind(&path).unwrap();
        let err = hive.spawn(&id("zed")).await.unwrap_err();
        assert!(
            err.to_string().starts_with(
                "cannot serve the socket of agent \"zed\": hive-c0re is already running on"
            ),
            "{err}"
        );
        assert!(hive.row(&id("zed")).await.unwrap().is_none());
        assert!(registry.open_agents().is_empty());
    }

    #[tokio::test]
    async fn a_stale_socket_file_is_replaced_and_the_manager_gets_its_own_path() {
        let dir = tempfile::tempdir().unwrap();
        let (hive, registry) = hive(&dir);
        let path = dir.path().join("run/manager/mcp.sock");
        std::fs::create_dir_all(path.parent().unwrap()).unwrap();
        drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
        assert_eq!(registry.open_manager(&hive).unwrap(), path);
        assert!(std::os::unix::net::UnixStream::connect(&path).is_ok());
        registry.remove_files();
        assert!(!path.exists());
    }
}
