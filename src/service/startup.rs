//! What the daemon does once at start-up, before it serves: open the store
//! and end what a previous run left half done (the registry's spawns and
//! destroys here, approvals in `approval_actions`), learn which containers
//! to watch, bind every managed agent's socket, tell which agents need an
//! update (and, with `auto_update`, rebuild them). The daemon composes these; it
//! runs no store query of its own.

use std::path::Path;

use super::{Hive, HiveError};
use crate::config::Config;
use crate::hive::names;
use crate::store::agents::Intent;
use crate::store::lock::{LockError, StateLock};
use crate::store::{Store, StoreError, agents, approvals};
use crate::wire::host::ApprovalKind;
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

/// Agents registered before the pause moved into the store (migration 16)
/// keep it: each one's old marker file `<agent state>/paused` is read once,
/// by `lstat` (a link counts as no marker and is never followed), then
/// removed, and the flag written. From then on only the store decides.
/// Before the roster is first built, so the first rows are right.
pub async fn import_pause_markers(store: &Store, config: &Config) -> Result<(), StoreError> {
    for name in store.read(agents::pause_undecided).await? {
        let marker = config.agent_state_dir(&name).join("paused");
        let paused = tokio::fs::symlink_metadata(&marker)
            .await
            .is_ok_and(|m| m.file_type().is_file());
        match tokio::fs::remove_file(&marker).await {
            Ok(()) => {}
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {}
            Err(e) => {
                tracing::warn!(agent = %name, "{name}: cannot remove its old pause marker {}: {e}", marker.display())
            }
        }
        if paused {
            tracing::info!(agent = %name, "{name}: paused before the upgrade; the pause is now the hive's");
        }
        store
            .run(move |c| agents::set_paused(c, &name, paused))
            .await?;
    }
    Ok(())
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
        for (name, why) in names::reserved_among(&names, &manager) {
            let arg = name.as_argument();
            tracing::error!(
                agent = %name,
                "agent \"{name}\" predates a rule on names ({why}); it keeps working, but move \
                 its work to an agent of another name and `hivectl destroy {arg}` it"
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

    /// Finish, in the background, every spawn and destroy a stopped daemon
    /// left half done, so the registry, machined, systemd and the settings
    /// files agree again:
    /// - a destroy (or purge) that had begun is carried out as asked;
    /// - a spawn that had begun, or an agent registered without a complete
    ///   container (an older daemon's), is made and started, and the
    ///   manager hears `spawned{ok}`; the spawn of an interrupted approval
    ///   is left to [`Hive::reconcile_interrupted`], which ends its row too.
    ///
    /// Each is logged at warn with what is being finished; while it runs, a
    /// spawn or destroy of that agent answers "in progress". Answers the
    /// agents being finished and how. Call after the first container view
    /// and before [`Hive::reconcile_interrupted`].
    pub async fn reconcile_registry(&self) -> Result<Vec<(Ident, Intent)>, HiveError> {
        let (unfinished, registered, approved) = self
            .store()
            .read(|c| {
                let approved: Vec<Ident> = approvals::interrupted(c)?
                    .into_iter()
                    .filter(|row| row.kind == ApprovalKind::Spawn)
                    .map(|row| row.agent)
                    .collect();
                Ok((agents::unfinished(c)?, agents::all(c)?, approved))
            })
            .await?;
        let manager = self.config().manager();
        let mut todo: Vec<(Ident, Intent)> = unfinished;
        for agent in registered {
            // The manager's container is the installation's, never spawned.
            if agent.name != manager
                && !todo.iter().any(|(n, _)| *n == agent.name)
                && !self.container_made(&agent.name).await?
            {
                todo.push((agent.name, Intent::Spawn));
            }
        }
        todo.retain(|(name, intent)| *intent != Intent::Spawn || !approved.contains(name));
        for (name, intent) in &todo {
            tracing::warn!(agent = %name, "{name}: the daemon stopped during its {}; finishing it", intent.verb());
            let (hive, name, intent) = (self.clone(), name.clone(), *intent);
            tokio::spawn(async move {
                let done = match intent {
                    Intent::Spawn => hive.spawn_now(&name).await,
                    Intent::Destroy => hive.destroy_now(&name, false).await,
                    Intent::Purge => hive.destroy_now(&name, true).await,
                };
                match done {
                    Ok(()) => {
                        tracing::info!(agent = %name, "{name}: finished the {} a stop interrupted", intent.verb())
                    }
                    Err(e) => {
                        tracing::error!(agent = %name, "{name}: finishing the {} a stop interrupted failed: {}", intent.verb(), crate::errors::chain(&e))
                    }
                }
            });
        }
        Ok(todo)
    }

    /// Which agents the hive's base left behind (`base`): the
    /// `needs_update` of every managed agent but the manager, set by what
    /// it would be built from now; answers those that need an update. One
    /// that cannot be checked is logged and skipped. Call once the
    /// registry is whole ([`Hive::reconcile_registry`], the config repos
    /// seeded).
    pub async fn check_bases(&self) -> Result<Vec<Ident>, HiveError> {
        let manager = self.config().manager();
        let mut stale = Vec::new();
        for n in self.list().await? {
            if n == manager {
                continue;
            }
            match self.recheck_base(&n).await {
                Ok(true) => stale.push(n),
                Ok(false) => {}
                Err(e) => {
                    tracing::warn!(agent = %n, "{n}: cannot tell whether it needs an update: {}", crate::errors::chain(&e));
                }
            }
        }
        Ok(stale)
    }

    /// `auto_update`: rebuild each of `stale` in the build queue, one after
    /// another, in the background (the task, if any; none without
    /// `auto_update`). A running container is restarted; one that was not
    /// running is rebuilt and left stopped.
    pub fn auto_update(&self, stale: Vec<Ident>) -> Option<tokio::task::JoinHandle<()>> {
        if !self.config().auto_update || stale.is_empty() {
            return None;
        }
        let hive = self.clone();
        Some(tokio::spawn(async move {
            for n in stale {
                tracing::info!(agent = %n, "{n}: auto_update: rebuilding it against the hive's current base");
                if let Err(e) = hive.rebuild_now(&n, false).await {
                    tracing::error!(agent = %n, "{n}: auto_update: the rebuild failed: {}", crate::errors::chain(&e));
                }
            }
        }))
    }
}

#[cfg(test)]
#[path = "startup_tests.rs"]
mod tests;
