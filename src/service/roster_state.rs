//! The roster's state in memory, owned here and reached only through these
//! methods: the published rows (with their build tickets, see
//! [`snapshot`](super::snapshot)), the channel their changes go out on,
//! the agents whose unit crashed, and the agents going down on purpose.
//!
//! Decision: one owner, so every lock of these fields is in this file and
//! a change is sent under the rows' lock (subscribers hear changes in the
//! order the roster took them). It knows nothing of the store, the driver
//! or [`Hive`](super::Hive): `service/roster.rs` builds the rows and
//! decides what a unit change means, then tells this part. Rejected: the
//! fields on the hive itself, where any of the service's files could lock
//! them.

use std::collections::{HashMap, HashSet};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};
use std::time::Instant;

use tokio::sync::broadcast;

use super::snapshot::{Roster, Rows, Ticket};
use crate::wire::host::AgentStatusRow;
use crate::wire::ident::Ident;

/// One change of the roster.
#[derive(Debug, Clone, PartialEq)]
pub enum RosterChange {
    /// An agent's row is new or differs.
    Row(Box<AgentStatusRow>),
    /// The agent is no longer managed.
    Removed(Ident),
}

/// How many roster changes a subscriber may fall behind before it lags.
const CHANGES_BACKLOG: usize = 256;

#[derive(Debug)]
pub(super) struct RosterState {
    /// Every roster change, sent under the rows' lock (so in the order
    /// the roster took them), for `subscribe_roster`, dashboards and the
    /// swarm bucket.
    changes: broadcast::Sender<RosterChange>,
    /// The roster in memory, updated by every publish.
    rows: Mutex<Rows>,
    /// Agents whose unit crashed and has not run since (the roster's
    /// `crashed`); memory only: a daemon restart forgets them.
    crashed: Mutex<HashSet<Ident>>,
    /// Agents an operator (or the hive) is taking down, each until an
    /// instant: their unit leaving `active` before then is not a crash. A
    /// mark is consumed when the watcher sees the unit go down, dropped when
    /// the agent is started again, and expires by itself (a stop that found
    /// the unit already down leaves no transition to consume it).
    expect_down: Mutex<HashMap<Ident, Instant>>,
    /// Agents a spawn or destroy is working on now: a second one of the
    /// same agent waits for the roster instead of racing the first.
    busy: Mutex<HashSet<Ident>>,
}

impl Default for RosterState {
    fn default() -> Self {
        Self {
            changes: broadcast::channel(CHANGES_BACKLOG).0,
            rows: Mutex::default(),
            crashed: Mutex::default(),
            expect_down: Mutex::default(),
            busy: Mutex::default(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl RosterState {
    /// Roster changes as they happen, in the roster's order.
    pub(super) fn subscribe(&self) -> broadcast::Receiver<RosterChange> {
        self.changes.subscribe()
    }

    /// The current published roster.
    pub(super) fn current(&self) -> Arc<Roster> {
        lock(&self.rows).current()
    }

    /// A ticket for a build about to read the state it builds rows from.
    pub(super) fn ticket(&self) -> Ticket {
        lock(&self.rows).ticket()
    }

    /// Replace every row (see [`Rows::replace_all`]) and send what changed.
    pub(super) fn replace_all(&self, rows: Vec<AgentStatusRow>, ticket: Ticket) {
        let mut roster = lock(&self.rows);
        let (changed, removed) = roster.replace_all(rows, ticket);
        for change in changed
            .into_iter()
            .map(|row| RosterChange::Row(Box::new(row)))
            .chain(removed.into_iter().map(RosterChange::Removed))
        {
            let _ = self.changes.send(change);
        }
    }

    /// Put one row built under `ticket`, sending it if it changed.
    pub(super) fn put(&self, row: AgentStatusRow, ticket: Ticket) {
        let mut roster = lock(&self.rows);
        if roster.put(row.clone(), ticket).is_some() {
            let _ = self.changes.send(RosterChange::Row(Box::new(row)));
        }
    }

    /// Drop the row of an agent no longer managed, sending its removal.
    pub(super) fn remove(&self, name: &Ident, ticket: Ticket) {
        let mut roster = lock(&self.rows);
        if roster.remove(name, ticket) {
            let _ = self.changes.send(RosterChange::Removed(name.clone()));
        }
    }

    /// Is `name` paused? Read from its published row (the store's flag,
    /// see [`Hive::set_paused`](super::Hive::set_paused)), so `recv` asks
    /// no query.
    pub(super) fn is_paused(&self, name: &Ident) -> bool {
        lock(&self.rows).is_paused(name)
    }

    /// Has `name`'s unit crashed and not run since?
    pub(super) fn is_crashed(&self, name: &Ident) -> bool {
        lock(&self.crashed).contains(name)
    }

    /// Record that `name`'s unit crashed (`true`), or that it runs or is
    /// gone (`false`).
    pub(super) fn set_crashed(&self, name: &Ident, crashed: bool) {
        let mut set = lock(&self.crashed);
        if crashed {
            set.insert(name.clone());
        } else {
            set.remove(name);
        }
    }

    /// Mark `name` as going down on purpose until `until`.
    pub(super) fn mark_going_down(&self, name: &Ident, until: Instant) {
        lock(&self.expect_down).insert(name.clone(), until);
    }

    /// Was `name`'s going down expected? The mark is consumed once the unit
    /// `settled` (a real unit passes through `deactivating`, and for a
    /// reboot `activating`, before it ends `inactive`, `failed` or running
    /// again: the whole way down is the operator's).
    pub(super) fn going_down_expected(&self, name: &Ident, settled: bool) -> bool {
        let mut marks = lock(&self.expect_down);
        let expected = marks.get(name).is_some_and(|until| Instant::now() < *until);
        if settled || !expected {
            marks.remove(name);
        }
        expected
    }

    /// Drop `name`'s going-down mark (it is started again).
    pub(super) fn clear_going_down(&self, name: &Ident) {
        lock(&self.expect_down).remove(name);
    }

    /// Claim `name` for a spawn or destroy; false if one already runs.
    pub(super) fn claim(&self, name: &Ident) -> bool {
        lock(&self.busy).insert(name.clone())
    }

    /// Release a [`RosterState::claim`].
    pub(super) fn release(&self, name: &Ident) {
        lock(&self.busy).remove(name);
    }
}
