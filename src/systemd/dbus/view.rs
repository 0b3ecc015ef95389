//! The live view of the hive's container units, kept from systemd's signals.
//!
//! Pure state, no I/O: the dispatcher feeds it parsed signals, the resync
//! feeds it a snapshot, and every call returns the [`UnitChange`]s to
//! publish. Decisions:
//! - **Known agents are always in the view.** systemd lists only *loaded*
//!   units, and an instance of a template (`systemd-nspawn@h-x.service`) that
//!   is stopped gets unloaded (`UnitRemoved`). An agent the driver was told
//!   about (at connect or by `create`) therefore shows as `inactive` when
//!   systemd does not list it, instead of vanishing from the roster.
//!   Units of the profile's pattern that are loaded but not known (started by
//!   hand, or by an older daemon) are shown too, and dropped when unloaded.
//! - **A unit's first signal is `UnitNew`, not `PropertiesChanged`.**
//!   systemd sends `UnitNew` *instead of* the first change signal of a
//!   freshly loaded unit, so a unit loaded and started (or failed) at once
//!   announces only `UnitNew`. The view then shows it inactive and the
//!   dispatcher reads its real state; that read is applied only if no newer
//!   signal for the unit came meanwhile ([`View::seq`]).
//! - **Signals for units not in the view are ignored**: every unit enters by
//!   the resync or by `UnitNew`, so a late `PropertiesChanged` of a
//!   destroyed agent cannot bring it back.
//! - **A snapshot does not overwrite newer signals.** A resync's list is read
//!   while signals keep coming; a unit whose signal was applied after the
//!   resync began keeps the signal's values (signals carry absolute values,
//!   so the last one applied is the newest).

use std::collections::{HashMap, HashSet};

use crate::containers::{ActiveState, UnitChange, UnitState};
use crate::wire::ident::Ident;

/// The parts of a unit's state one `PropertiesChanged` carries. systemd
/// sends `ActiveState`/`SubState`/`ActiveEnterTimestamp` on the `Unit`
/// interface and `Result` on the `Service` interface, in separate signals.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Update {
    pub active: Option<ActiveState>,
    pub sub: Option<String>,
    pub result: Option<String>,
    /// `ActiveEnterTimestamp` in unix seconds (`Some(None)`: systemd's 0,
    /// never active).
    pub since: Option<Option<i64>>,
}

impl Update {
    pub fn is_empty(&self) -> bool {
        self.active.is_none() && self.sub.is_none() && self.result.is_none() && self.since.is_none()
    }
}

#[derive(Debug, Default)]
pub struct View {
    units: HashMap<Ident, UnitState>,
    known: HashSet<Ident>,
    /// Units a signal touched since the running resync began.
    touched: Option<HashSet<Ident>>,
    /// Signals applied per unit, to tell whether a state read is stale.
    seq: HashMap<Ident, u64>,
}

impl View {
    pub fn snapshot(&self) -> HashMap<Ident, UnitState> {
        self.units.clone()
    }

    pub fn get(&self, agent: &Ident) -> Option<&UnitState> {
        self.units.get(agent)
    }

    fn set(&mut self, agent: &Ident, new: UnitState) -> Option<UnitChange> {
        let old = self.units.insert(agent.clone(), new.clone());
        (old.as_ref() != Some(&new)).then(|| UnitChange {
            agent: agent.clone(),
            old,
            new: Some(new),
        })
    }

    fn remove(&mut self, agent: &Ident) -> Option<UnitChange> {
        let old = self.units.remove(agent)?;
        Some(UnitChange {
            agent: agent.clone(),
            old: Some(old),
            new: None,
        })
    }

    fn touch(&mut self, agent: &Ident) {
        if let Some(t) = self.touched.as_mut() {
            t.insert(agent.clone());
        }
        *self.seq.entry(agent.clone()).or_default() += 1;
    }

    /// How many signals of `agent`'s unit were applied so far.
    pub fn seq(&self, agent: &Ident) -> u64 {
        self.seq.get(agent).copied().unwrap_or_default()
    }

    /// A state read from systemd after `UnitNew`, taken when [`View::seq`]
    /// was `seq`: applied only if no signal for the unit came since.
    pub fn fetched(&mut self, agent: &Ident, seq: u64, state: UnitState) -> Option<UnitChange> {
        if self.seq(agent) != seq || !self.units.contains_key(agent) {
            return None;
        }
        self.set(agent, state)
    }

    /// Start tracking `agent` (connect, `create`): it shows as inactive until
    /// systemd says otherwise.
    pub fn track(&mut self, agent: &Ident) -> Option<UnitChange> {
        self.known.insert(agent.clone());
        if self.units.contains_key(agent) {
            return None;
        }
        self.set(agent, UnitState::inactive())
    }

    /// Stop tracking `agent` (`destroy`).
    pub fn forget(&mut self, agent: &Ident) -> Option<UnitChange> {
        self.known.remove(agent);
        self.remove(agent)
    }

    /// A `PropertiesChanged` of `agent`'s unit.
    pub fn update(&mut self, agent: &Ident, update: Update) -> Option<UnitChange> {
        if update.is_empty() {
            return None;
        }
        let mut state = self.units.get(agent)?.clone();
        self.touch(agent);
        if let Some(active) = update.active {
            state.active = active;
        }
        if let Some(sub) = update.sub {
            state.sub = sub;
        }
        if let Some(result) = update.result {
            state.result = result;
        }
        if let Some(since) = update.since {
            state.since = since;
        }
        if !state.is_running() {
            // systemd keeps the last activation's; the view keeps it only
            // while the unit runs (what the roster's uptime is).
            state.since = None;
        }
        self.set(agent, state)
    }

    /// `UnitNew`: a freshly loaded unit is inactive until its first change.
    pub fn unit_new(&mut self, agent: &Ident) -> Option<UnitChange> {
        if self.units.contains_key(agent) {
            return None;
        }
        self.touch(agent);
        self.set(agent, UnitState::inactive())
    }

    /// `UnitRemoved`: systemd unloaded the unit (it was inactive and
    /// unreferenced). A known agent stays, as inactive.
    pub fn unit_removed(&mut self, agent: &Ident) -> Option<UnitChange> {
        self.touch(agent);
        if self.known.contains(agent) {
            match self.units.get(agent) {
                Some(s) if s.active == ActiveState::Inactive => None,
                _ => self.set(agent, UnitState::inactive()),
            }
        } else {
            self.remove(agent)
        }
    }

    pub fn begin_resync(&mut self) {
        self.touched = Some(HashSet::new());
    }

    /// A resync failed half way: keep what the signals built.
    pub fn abandon_resync(&mut self) {
        self.touched = None;
    }

    /// Apply a resync's list of loaded units (`listed`).
    pub fn finish_resync(&mut self, listed: HashMap<Ident, UnitState>) -> Vec<UnitChange> {
        let touched = self.touched.take().unwrap_or_default();
        let mut changes = Vec::new();
        let gone: Vec<Ident> = self
            .units
            .keys()
            .filter(|a| !listed.contains_key(*a) && !touched.contains(*a))
            .cloned()
            .collect();
        for agent in gone {
            let change = if self.known.contains(&agent) {
                self.set(&agent, UnitState::inactive())
            } else {
                self.remove(&agent)
            };
            changes.extend(change);
        }
        for (agent, state) in listed {
            if !touched.contains(&agent) {
                changes.extend(self.set(&agent, state));
            }
        }
        let missing: Vec<Ident> = self
            .known
            .iter()
            .filter(|a| !self.units.contains_key(*a))
            .cloned()
            .collect();
        for agent in missing {
            changes.extend(self.set(&agent, UnitState::inactive()));
        }
        changes
    }
}

#[cfg(test)]
#[path = "view_tests.rs"]
mod tests;
