//! What the daemon does once at start-up, before it serves: open the store
//! and end what a previous run left half done, learn which containers to
//! watch, bind every managed agent's socket. The daemon composes these; it
//! runs no store query of its own.

use std::path::Path;

use super::{Hive, HiveError};
use crate::config::Config;
use crate::hive::names;
use crate::store::lock::{LockError, StateLock};
use crate::store::{Store, StoreError, agents};
use crate::wire::ident::Ident;

/// Take the state directory's exclusive lock (one daemon per state
/// directory; a second one's error names the first's PID). Hold it for the
/// daemon's life.
pub fn lock_state_dir(dir: &Path) -> Result<StateLock, LockError> {
    crate::store::lock::acquire(dir)
}

/// Open (and migrate) the store at `path`. Approvals a crashed daemon left
/// half done are ended once the hive exists
/// ([`Hive::reconcile_interrupted`]).
pub async fn open_store(path: &Path) -> Result<Store, StoreError> {
    let path = path.to_owned();
    let store = tokio::task::spawn_blocking(move || Store::open(&path))
        .await
        .unwrap_or_else(|e| std::panic::resume_unwind(e.into_panic()))?;
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
    ///
    /// One agent's socket that cannot be bound is logged and skipped: it
    /// must not keep the hive from starting (the next daemon start tries
    /// again).
    /// Rows whose names are now reserved (they predate the rule) are
    /// reported, each naming what to do.
    pub async fn open_agent_sockets(&self) -> Result<(), HiveError> {
        let manager = self.config().manager();
        let names = self.list().await?;
        for name in names::reserved_among(&names, &manager) {
            tracing::error!(
                agent = %name,
                "agent \"{name}\" has a reserved name (messages from it read like the daemon's \
                 or the operator's); destroy it with `hivectl destroy {name}` and spawn it again \
                 under another name"
            );
        }
        for name in names {
            if name != manager
                && let Err(err) = self.open_socket(&name)
            {
                tracing::error!(agent = %name, "{}", crate::errors::chain(&err));
            }
        }
        Ok(())
    }
}
