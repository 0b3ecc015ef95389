//! The swarm's state in memory, owned here and reached only through these
//! methods: the relay's wake-up (a cross-hive send was queued), the other
//! hives' roster rows as last heard on the bus, the channel their changes
//! go out on, and the bus's last refusal or error.
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
    /// The bus's last refusal or error (a permission violation, say):
    /// when (unix seconds) and what the server or client said.
    bus_error: Mutex<Option<(i64, String)>>,
}

impl Default for SwarmState {
    fn default() -> Self {
        Self {
            relay: Notify::new(),
            roster: Mutex::default(),
            changes: broadcast::channel(CHANGES_BACKLOG).0,
            bus_error: Mutex::default(),
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

    /// Remember (or replace) one row, unless a newer one (by its
    /// `published_at`) is kept already: two readers feed this (the swarm's
    /// roster watch and its live feed), and a watch recreated after a gap
    /// replays what the bucket stored, which may be older than what the
    /// feed heard. A row of a hive other than `own` that changed goes to
    /// live views.
    pub(crate) fn heard(&self, row: SwarmAgentRow, own: &Ident) {
        let key = (row.hive.clone(), row.row.name.clone());
        let mut roster = self.roster();
        let previous = match roster.get(&key) {
            Some(kept) if kept.published_at > row.published_at => return,
            _ => roster.insert(key, row.clone()),
        };
        drop(roster);
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

    /// The rows of hives other than `own`, by hive then name: those not
    /// republished within `stale` seconds of `now` marked stale (their
    /// hive may be gone, or the bus out of reach: the row is what was last
    /// heard), those older than `forget` seconds left out (and dropped).
    pub(crate) fn others(
        &self,
        own: &Ident,
        now: i64,
        stale: i64,
        forget: i64,
    ) -> Vec<SwarmAgentRow> {
        let mut roster = self.roster();
        roster.retain(|_, r| now.saturating_sub(r.published_at) <= forget);
        roster
            .values()
            .filter(|r| r.hive != *own)
            .map(|r| SwarmAgentRow {
                stale: now.saturating_sub(r.published_at) > stale,
                ..r.clone()
            })
            .collect()
    }

    /// Remember what the bus last refused or failed, at `at` (unix
    /// seconds), for `status --swarm`.
    pub(crate) fn bus_error(&self, at: i64, what: String) {
        *self
            .bus_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner) = Some((at, what));
    }

    /// The bus's last refusal or error, if any: when, and what.
    pub(crate) fn last_bus_error(&self) -> Option<(i64, String)> {
        self.bus_error
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}
