//! What the daemon does once at start-up, before it serves: open the store
//! and end what a previous run left half done, learn which containers to
//! watch, bind every managed agent's socket. The daemon composes these; it
//! runs no store query of its own.

use std::path::Path;

use super::{Hive, HiveError};
use crate::config::Config;
use crate::store::{Store, StoreError, agents, approvals};
use crate::wire::ident::Ident;

/// Open (and migrate) the store at `path`; approvals claimed by a daemon
/// that died while running their action end `failed` (their effect is
/// unknown), each logged.
pub async fn open_store(path: &Path, now: i64) -> Result<Store, StoreError> {
    let path = path.to_owned();
    let store = tokio::task::spawn_blocking(move || Store::open(&path))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))?;
    for row in store
        .run(move |c| approvals::fail_interrupted(c, now))
        .await?
    {
        tracing::warn!(id = row.id, agent = %row.agent, "{}: approval {} interrupted by a restart; marked failed", row.agent, row.id);
    }
    Ok(store)
}

/// The containers the driver watches: every managed agent and the manager.
pub async fn container_names(store: &Store, config: &Config) -> Result<Vec<Ident>, StoreError> {
    let mut names: Vec<Ident> = store
        .read(agents::all)
        .await?
        .into_iter()
        .map(|a| a.name)
        .collect();
    if !names.contains(&config.manager()) {
        names.push(config.manager());
    }
    Ok(names)
}

impl Hive {
    /// Bind the socket of every managed agent (the manager's is its own), as
    /// spawn does for a new one.
    pub async fn open_agent_sockets(&self) -> Result<(), HiveError> {
        let manager = self.config().manager();
        for name in self.list().await? {
            if name != manager {
                self.open_socket(&name)?;
            }
        }
        Ok(())
    }
}
