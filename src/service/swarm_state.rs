//! The swarm's state in memory, owned here and reached only through these
//! methods: the relay's wake-up (a cross-hive send was queued), the other
//! hives' roster rows as last heard on the bus, and the channel their
//! changes go out on.
//!
//! Decision: one owner, so every lock of these fields is in this file; it
//! knows nothing of the store or of [`Hive`](super::Hive). Rejected: the
//! fields on the hive itself, where any of the service's files could lock
//! them.

use std::collections::BTreeMap;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::{Notify, broadcast};

use crate::wire::host::SwarmAgentRow;
use crate::wire::ident::Ident;

/// A change to another hive's part of the swarm roster.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum SwarmChange {
    /// A row is new or differs from the last one heard (a republish of the
    /// same row is no change).
    Row(Box<SwarmAgentRow>),
    /// An agent of another hive left the roster.
    Gone { hive: Ident, agent: Ident },
}

/// How many swarm changes a subscriber may fall behind before it lags.
const CHANGES_BACKLOG: usize = 256;

#[derive(Debug)]
pub(crate) struct SwarmState {
    /// Wakes the relay when a cross-hive send was queued.
    relay: Notify,
    /// Every hive's rows by (hive, agent), as last heard.
    roster: Mutex<BTreeMap<(Ident, Ident), SwarmAgentRow>>,
    /// Other hives' rows as they change, for live views (the dashboard).
    changes: broadcast::Sender<SwarmChange>,
}

impl Default for SwarmState {
    fn default() -> Self {
        Self {
            relay: Notify::new(),
            roster: Mutex::default(),
            changes: broadcast::channel(CHANGES_BACKLOG).0,
        }
    }
}

impl SwarmState {
    fn roster(&self) -> MutexGuard<'_, BTreeMap<(Ident, Ident), SwarmAgentRow>> {
        self.roster.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// A cross-hive send was queued: wake the relay (or its next wait).
    pub(crate) fn relay_wake(&self) {
        self.relay.notify_one();
    }

    /// Wait until a cross-hive send may have queued something.
    pub(crate) async fn relay_changed(&self) {
        self.relay.notified().await;
    }

    /// Remember (or replace) one row; a row of a hive other than `own`
    /// that changed goes to live views.
    pub(crate) fn heard(&self, row: SwarmAgentRow, own: &Ident) {
        let key = (row.hive.clone(), row.row.name.clone());
        let previous = self.roster().insert(key, row.clone());
        if row.hive != *own && previous.is_none_or(|p| p.row != row.row) {
            let _ = self.changes.send(SwarmChange::Row(Box::new(row)));
        }
    }

    /// Forget one row; a row of a hive other than `own` that was there
    /// goes to live views as gone.
    pub(crate) fn gone(&self, hive: &Ident, agent: &Ident, own: &Ident) {
        let had = self
            .roster()
            .remove(&(hive.clone(), agent.clone()))
            .is_some();
        if had && hive != own {
            let _ = self.changes.send(SwarmChange::Gone {
                hive: hive.clone(),
                agent: agent.clone(),
            });
        }
    }

    /// Other hives' changes as they are heard.
    pub(crate) fn subscribe(&self) -> broadcast::Receiver<SwarmChange> {
        self.changes.subscribe()
    }

    /// The rows of hives other than `own` published within `stale`
    /// seconds of `now`, by hive then name.
    pub(crate) fn others(&self, own: &Ident, now: i64, stale: i64) -> Vec<SwarmAgentRow> {
        self.roster()
            .values()
            .filter(|r| r.hive != *own && now.saturating_sub(r.published_at) <= stale)
            .cloned()
            .collect()
    }
}
