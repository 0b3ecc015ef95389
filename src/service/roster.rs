//! The live roster: rows built from the registry and the driver's view,
//! pushed to subscribers on every change, and the crash watcher, with what
//! keeps an operator's stop from showing as a failure (clearing the unit's
//! `failed`, which stop and the watcher both call).

use std::sync::Arc;

use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;

use super::messaging::Wakes;
use super::snapshot::Roster;
use super::{Hive, HiveError};
use crate::containers::{StopMode, UnitChange, UnitState};
use crate::hive::roster;
use crate::hive::topology::Topology;
use crate::hive::{Outcome, Recipient};
use crate::store::{agents, hooks, immediate, reminders};
use crate::wire::events::HelperEvent;
use crate::wire::host::{AgentStatusRow, HiveUrls};
use crate::wire::ident::Ident;

/// How long a stop waits for systemd to report the cleared failed state.
const CLEAR_BUDGET: Duration = Duration::from_secs(2);

impl Hive {
    /// Set (empty: clear) `agent`'s free-text status and push its row
    /// (held to the messaging room's body cap).
    pub async fn set_status_text(&self, agent: &Ident, text: String) -> Result<(), HiveError> {
        self.messaging().check_body(&text)?;
        let (n, now) = (agent.clone(), self.now());
        self.store()
            .run(move |c| {
                let text = (!text.is_empty()).then_some(text);
                agents::set_status(c, &n, text.as_deref(), now)
            })
            .await?;
        self.publish(agent).await;
        Ok(())
    }

    /// An agent's record and whether its container runs.
    pub async fn agent_meta(&self, name: &Ident) -> Result<(agents::AgentRecord, bool), HiveError> {
        let record = self.require(name).await?;
        let running = self
            .driver()
            .view()
            .get(name)
            .is_some_and(UnitState::is_running);
        Ok((record, running))
    }

    /// `of`'s descendants, parents first then by name, with whether each
    /// container runs.
    pub async fn descendants(&self, of: &Ident) -> Result<Vec<(Ident, bool)>, HiveError> {
        let topology = Topology::new(self.store().read(agents::parents).await?);
        let view = self.driver().view();
        Ok(topology
            .descendants(of)
            .into_iter()
            .map(|n| {
                let running = view.get(&n).is_some_and(UnitState::is_running);
                (n, running)
            })
            .collect())
    }

    /// Managed agents by name.
    pub async fn list(&self) -> Result<Vec<Ident>, HiveError> {
        let all = self.store().read(agents::all).await?;
        Ok(all.into_iter().map(|a| a.name).collect())
    }

    /// One row per managed agent, by name, from the roster in memory: no
    /// query, no stat, no D-Bus call per request.
    pub async fn agent_status(&self) -> Result<Vec<AgentStatusRow>, HiveError> {
        Ok(self.roster().rows().to_vec())
    }

    /// The current roster (rows and their JSON, serialized once per change),
    /// for `agent_status` and dashboards.
    pub fn roster(&self) -> Arc<Roster> {
        self.inner.roster.current()
    }

    /// Rebuild the whole roster from the store.
    pub(super) async fn reload_roster(&self) -> Result<(), HiveError> {
        let ticket = self.inner.roster.ticket();
        let (records, reminders) = self
            .store()
            .read(|c| Ok((agents::all(c)?, reminders::pending_counts(c)?)))
            .await?;
        let rows = self.build_rows(&records, reminders);
        self.inner.roster.replace_all(rows, ticket);
        Ok(())
    }

    /// The current row of one agent, if managed.
    pub async fn row(&self, name: &Ident) -> Result<Option<AgentStatusRow>, HiveError> {
        self.inner.rows.row(name).await
    }

    /// Bring an agent's row in the roster up to date and push it to
    /// subscribers (an agent no longer managed leaves the roster).
    pub async fn publish(&self, name: &Ident) {
        self.inner.rows.publish(name).await;
    }

    /// The hive's URLs.
    pub fn urls(&self) -> HiveUrls {
        let c = self.config();
        roster::urls(
            c.domain.as_deref(),
            c.forge_url.as_deref(),
            c.matrix_url.as_deref(),
        )
    }

    /// Pause (`true`) or resume an agent's turns: a flag in the store
    /// that `recv` honours (a paused agent's `recv` pops nothing, as for a
    /// reached budget) and the roster shows. Nothing of the agent's decides
    /// it. Works whether or not the container runs; a turn in progress
    /// finishes.
    pub async fn set_paused(&self, name: &Ident, paused: bool) -> Result<Outcome, HiveError> {
        self.require(name).await?;
        let n = name.clone();
        let changed = self
            .store()
            .run(move |c| agents::set_paused(c, &n, paused))
            .await?;
        if !changed {
            return Ok(Outcome::AlreadyInState);
        }
        tracing::info!(agent = %name, paused, "{name}: {}", if paused { "paused" } else { "resumed" });
        self.publish(name).await;
        if !paused {
            self.mail().wake(Wakes::of(Recipient::Agent(name.clone())));
        }
        Ok(Outcome::Done)
    }

    /// Move `child` under `new_parent` (`None` = root). Checked and applied in
    /// one write transaction, so racing moves cannot build a cycle.
    pub async fn set_parent(
        &self,
        child: &Ident,
        new_parent: Option<&Ident>,
    ) -> Result<Outcome, HiveError> {
        let (c, p) = (child.clone(), new_parent.cloned());
        let moved = self
            .transact(move |conn| {
                let tx = immediate(conn)?;
                let topology = Topology::new(agents::parents(&tx)?);
                let verdict = topology.check_move(&c, p.as_ref())?;
                if verdict == Outcome::Done {
                    agents::set_parent(&tx, &c, p.as_ref())?;
                    tx.commit()?;
                }
                Ok(verdict)
            })
            .await?;
        if moved == Outcome::AlreadyInState {
            return Ok(Outcome::AlreadyInState);
        }
        tracing::info!(agent = %child, parent = ?new_parent, "{child}: moved in the topology, now under {}", new_parent.as_ref().map_or("the root", |p| p.as_str()));
        self.publish(child).await;
        Ok(Outcome::Done)
    }

    /// An operator's stop leaves the unit stopped, not failed: a SIGKILL
    /// (a hard stop, or a graceful one past its deadline) leaves systemd's
    /// unit `failed`, which the roster and its subscribers would show as a
    /// failure. A stop of the failed unit clears it, as `systemctl
    /// reset-failed` does (the drivers' documented behaviour).
    pub(super) async fn reset_failed_after_stop(&self, name: &Ident) {
        if !self
            .driver()
            .view()
            .get(name)
            .is_some_and(UnitState::is_failed)
        {
            return;
        }
        let clear = StopMode::Graceful {
            deadline: self.config().stop_deadline(),
        };
        // Subscribed first: systemd's signal that the unit left `failed`
        // may come before the call returns.
        let mut changes = self.driver().changes();
        if let Err(e) = self.driver().stop(name, clear).await {
            tracing::warn!(agent = %name, "{name}: cannot clear the failed state after a stop: {e}");
            return;
        }
        // The answer comes once the roster shows it, so the operator who
        // reads the roster next sees `stopped`, not the moment before.
        let cleared = async {
            while self
                .driver()
                .view()
                .get(name)
                .is_some_and(UnitState::is_failed)
            {
                if let Err(RecvError::Closed) = changes.recv().await {
                    return;
                }
            }
        };
        if tokio::time::timeout(CLEAR_BUDGET, cleared).await.is_err() {
            tracing::warn!(agent = %name, "{name}: the failed state did not clear within {CLEAR_BUDGET:?}");
        }
    }

    /// Follow the driver's changes for as long as the hive lives: record
    /// crashes, push rows.
    pub async fn watch_units(self) {
        let mut changes = self.driver().changes();
        loop {
            match changes.recv().await {
                Ok(change) => self.on_unit_change(change).await,
                Err(RecvError::Lagged(missed)) => {
                    // Changes were dropped: push every row so subscribers
                    // reconcile, as after a resync.
                    tracing::warn!(missed, "unit changes lagged; republishing every row");
                    if let Err(err) = self.reload_roster().await {
                        tracing::error!("cannot reload the roster: {err:#}");
                    }
                    if let Ok(names) = self.list().await {
                        for name in names {
                            self.publish(&name).await;
                        }
                    }
                }
                Err(RecvError::Closed) => return,
            }
        }
    }

    async fn on_unit_change(&self, change: UnitChange) {
        let name = change.agent.clone();
        let went_down = change.old.as_ref().is_some_and(UnitState::is_running)
            && !change.new.as_ref().is_some_and(UnitState::is_running);
        let on_the_way = change.old.as_ref().is_some_and(UnitState::is_changing);
        let settled = !change.new.as_ref().is_some_and(UnitState::is_changing);
        let expected =
            (went_down || on_the_way) && self.inner.roster.going_down_expected(&name, settled);
        if change.new.as_ref().is_some_and(UnitState::is_running) {
            self.inner.roster.set_crashed(&name, false);
        }
        if went_down {
            let n = name.clone();
            match self.store().run(move |c| hooks::clear_session(c, &n)).await {
                Ok(true) => {
                    tracing::info!(agent = %name, "{name}: session state cleared (its container went down)")
                }
                Ok(false) => {}
                Err(err) => {
                    tracing::error!(agent = %name, "{name}: cannot clear the session state: {err:#}")
                }
            }
        }
        if roster::is_crash(change.old.as_ref(), change.new.as_ref(), expected) {
            self.inner.roster.set_crashed(&name, true);
            let result = change
                .new
                .as_ref()
                .map_or_else(|| "unit removed".to_owned(), |s| s.result.clone());
            let (at, n, r) = (self.now(), name.clone(), result.clone());
            match self
                .store()
                .run(move |c| agents::record_crash(c, &n, at, &r))
                .await
            {
                Ok(()) => {
                    tracing::warn!(agent = %name, %result, "{name}: container crashed (unit result: {result})")
                }
                Err(err) => tracing::error!(agent = %name, "{name}: cannot record crash: {err:#}"),
            }
            self.mail()
                .to_operator(crate::wire::notify::NotifyEvent::Crashed {
                    agent: name.clone(),
                    result: result.clone(),
                });
            let event = HelperEvent::ContainerCrash {
                agent: name.to_string(),
                note: Some(format!("unit result: {result}")),
            };
            self.mail().to_manager(event).await;
        }
        // An operator's hard stop leaves the unit failed for a moment, until
        // the stop clears it: subscribers see the stopped row, not a
        // failure (a dashboard would raise a "container failed" alert).
        if expected && change.new.as_ref().is_some_and(UnitState::is_failed) {
            // A stop clears it itself; an operator's signal has only this.
            let hive = self.clone();
            tokio::spawn(async move { hive.reset_failed_after_stop(&name).await });
            return;
        }
        self.publish(&name).await;
    }
}
