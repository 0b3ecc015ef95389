//! Spend caps' state in memory, owned here and reached only through these
//! methods: the agents a reached cap holds (what `recv` and the roster
//! read, without a query) and the caps reached at the last evaluation (so
//! the manager hears of each once). Rebuilt from the store (the operator's
//! caps, the meter's sums) at start-up, before any agent socket serves.
//!
//! Decision: one owner, the usage room, which alone writes it (the writers
//! are private to the room); the roster's rows and the messaging room's
//! `Holds` port read it through the `pub(crate)` readers. It knows nothing
//! of the store. Evaluations are serialized (`evaluating`), so an older
//! one never overwrites a newer.

use std::collections::{BTreeMap, HashSet};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use crate::hive::spend::{Evaluation, Hold};
use crate::wire::ident::Ident;
use crate::wire::spend::{BudgetRow, SpendCap, SpendScope};

#[derive(Debug)]
pub(crate) struct SpendState {
    /// Agents no new turn starts for (and whose model requests the
    /// gateway holds), and why; watched by the daemon's push of the holds
    /// to the egress service ([`SpendState::watch_held`]).
    held: watch::Sender<BTreeMap<Ident, Hold>>,
    /// The caps reached at the last evaluation.
    reached: Mutex<HashSet<(SpendScope, SpendCap)>>,
    /// Each agent's spend since 00:00 UTC (the roster's), in micro-dollars.
    today: Mutex<BTreeMap<Ident, u64>>,
    /// Held across an evaluation's read and its [`SpendState::replace`].
    pub(super) evaluating: tokio::sync::Mutex<()>,
    /// A metered request was committed that no evaluation has read yet
    /// (one will: whoever set it runs it).
    pending: AtomicBool,
}

impl Default for SpendState {
    fn default() -> Self {
        Self {
            held: watch::Sender::new(BTreeMap::new()),
            reached: Mutex::default(),
            today: Mutex::default(),
            evaluating: tokio::sync::Mutex::default(),
            pending: AtomicBool::default(),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// What an evaluation changed.
#[derive(Debug, Default)]
pub(super) struct SpendChange {
    /// Agents held or let go, or held for another reason: their rows change.
    pub changed: Vec<Ident>,
    /// Agents let go: their waiting `recv`s are woken.
    pub released: Vec<Ident>,
    /// Caps reached now that were not before.
    pub newly_reached: Vec<BudgetRow>,
    /// Agents held now that were not, or for another reason, with the
    /// roster's words for why.
    pub newly_held: Vec<(Ident, String)>,
}

impl SpendState {
    /// Is `name` held by a reached cap?
    pub(crate) fn is_held(&self, name: &Ident) -> bool {
        self.held.borrow().contains_key(name)
    }

    /// Why `name` is held, in the roster's words.
    pub(crate) fn words(&self, name: &Ident) -> Option<String> {
        self.held.borrow().get(name).map(|h| h.words.clone())
    }

    /// The hold on `name`, if any.
    pub(super) fn hold(&self, name: &Ident) -> Option<Hold> {
        self.held.borrow().get(name).cloned()
    }

    /// The held agents, seen again whenever they change.
    pub(super) fn watch_held(&self) -> watch::Receiver<BTreeMap<Ident, Hold>> {
        self.held.subscribe()
    }

    /// What `name`'s metered requests cost today, if it made any.
    pub(crate) fn today(&self, name: &Ident) -> Option<u64> {
        lock(&self.today).get(name).copied()
    }

    /// Mark a committed request not yet evaluated; whether one was already
    /// marked (then the evaluation that clears it covers this one too).
    pub(super) fn mark_pending(&self) -> bool {
        self.pending.swap(true, Ordering::SeqCst)
    }

    /// An evaluation starts reading: every request committed so far is in it.
    pub(super) fn clear_pending(&self) {
        self.pending.store(false, Ordering::SeqCst);
    }

    /// Take `spent` as today's spend; the agents whose figure changed
    /// (at midnight UTC, every agent that spent yesterday).
    pub(super) fn replace_today(&self, spent: BTreeMap<Ident, u64>) -> Vec<Ident> {
        let mut today = lock(&self.today);
        let mut changed: Vec<Ident> = spent
            .iter()
            .filter(|(n, v)| today.get(*n) != Some(*v))
            .map(|(n, _)| n.clone())
            .collect();
        changed.extend(today.keys().filter(|n| !spent.contains_key(*n)).cloned());
        *today = spent;
        changed
    }

    /// Take `e` as the state now; what changed.
    pub(super) fn replace(&self, e: &Evaluation) -> SpendChange {
        let mut change = SpendChange::default();
        // Watchers hear of it only when the set changed.
        self.held.send_if_modified(|held| {
            for (name, hold) in &e.held {
                if held.get(name) != Some(hold) {
                    change.changed.push(name.clone());
                    change.newly_held.push((name.clone(), hold.words.clone()));
                }
            }
            for name in held.keys() {
                if !e.held.contains_key(name) {
                    change.changed.push(name.clone());
                    change.released.push(name.clone());
                }
            }
            held.clone_from(&e.held);
            !change.changed.is_empty()
        });
        let now: HashSet<(SpendScope, SpendCap)> = e
            .rows
            .iter()
            .filter(|r| r.reached)
            .map(|r| (r.scope.clone(), r.amount))
            .collect();
        let mut reached = lock(&self.reached);
        change.newly_reached = e
            .rows
            .iter()
            .filter(|r| r.reached && !reached.contains(&(r.scope.clone(), r.amount)))
            .cloned()
            .collect();
        *reached = now;
        change
    }
}
