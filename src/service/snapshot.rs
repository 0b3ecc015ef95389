//! The roster served from memory: every managed agent's row, kept current by
//! [`Hive::publish`](super::Hive::publish) on every change (driver signal, pause, status, topology,
//! lifecycle verb, agenda write) and read by `agent_status`, the status
//! stream and dashboards without a query or a stat per request.
//!
//! Each change builds a new immutable [`Roster`]; its JSON is serialized at
//! most once, by the first reader that asks for it.
//!
//! A row is built from a read that takes a moment (the store, then the
//! driver's view), so two builds for one agent can finish out of order: a
//! stale build must not put back a row a newer one replaced (or removed).
//! Each build takes a ticket (`Rows::ticket`) before it reads; a row, removal or
//! whole reload applies only over rows no newer build has set. Rejected: a
//! lock held across the read (every roster change would wait on the store).

use std::collections::{BTreeMap, HashMap};
use std::sync::{Arc, OnceLock};

use crate::wire::host::AgentStatusRow;
use crate::wire::ident::Ident;

/// One version of the roster: rows by name, and their JSON array once asked.
#[derive(Debug, Default)]
pub struct Roster {
    rows: Vec<AgentStatusRow>,
    json: OnceLock<String>,
}

impl Roster {
    /// Every managed agent's row, by name.
    pub fn rows(&self) -> &[AgentStatusRow] {
        &self.rows
    }

    /// The rows as one JSON array (serialized once per version).
    pub fn json(&self) -> &str {
        self.json.get_or_init(|| {
            // A Vec of plain structs with string keys cannot fail to serialize.
            serde_json::to_string(&self.rows).unwrap_or_else(|_| "[]".to_owned())
        })
    }
}

/// When a build of rows began: later tickets read later state.
pub(super) type Ticket = u64;

/// The rows by name and the current published version.
#[derive(Debug, Default)]
pub(super) struct Rows {
    by_name: BTreeMap<Ident, AgentStatusRow>,
    current: Arc<Roster>,
    /// The last ticket handed out.
    issued: Ticket,
    /// The ticket of the build that last set (or removed) each name's row,
    /// where that is newer than [`Rows::floor`].
    set_by: HashMap<Ident, Ticket>,
    /// The ticket of the last whole reload: it set every name, so a name
    /// not in `set_by` counts as set by it.
    floor: Ticket,
}

impl Rows {
    pub(super) fn current(&self) -> Arc<Roster> {
        Arc::clone(&self.current)
    }

    /// Whether `name`'s row says it is paused.
    pub(super) fn is_paused(&self, name: &Ident) -> bool {
        self.by_name.get(name).is_some_and(|r| r.paused)
    }

    /// A ticket for a build about to read the state it builds rows from.
    pub(super) fn ticket(&mut self) -> Ticket {
        self.issued += 1;
        self.issued
    }

    /// Whether a build holding `ticket` may set `name`'s row: no newer
    /// build did. If so, `name` is marked as set by it.
    fn claim(&mut self, name: &Ident, ticket: Ticket) -> bool {
        let set = self.set_by.get(name).copied().unwrap_or(self.floor);
        if set > ticket {
            return false;
        }
        self.set_by.insert(name.clone(), ticket);
        true
    }

    /// Put (or replace) one row built under `ticket`: whether it changed,
    /// or `None` when a newer build set it (and this row is dropped).
    pub(super) fn put(&mut self, row: AgentStatusRow, ticket: Ticket) -> Option<bool> {
        if !self.claim(&row.name, ticket) {
            return None;
        }
        if self.by_name.get(&row.name) == Some(&row) {
            return Some(false);
        }
        self.by_name.insert(row.name.clone(), row);
        self.rebuild();
        Some(true)
    }

    /// Drop the row of an agent found no longer managed under `ticket`;
    /// `false` when it had none, or a newer build set it.
    pub(super) fn remove(&mut self, name: &Ident, ticket: Ticket) -> bool {
        if !self.claim(name, ticket) {
            return false;
        }
        let had = self.by_name.remove(name).is_some();
        if had {
            self.rebuild();
        }
        had
    }

    /// Replace every row with `rows`, built under `ticket` (start-up, after
    /// lost changes), except those a newer build set; what changed: the
    /// rows that are new or differ, and the names whose rows are gone.
    pub(super) fn replace_all(
        &mut self,
        rows: impl IntoIterator<Item = AgentStatusRow>,
        ticket: Ticket,
    ) -> (Vec<AgentStatusRow>, Vec<Ident>) {
        let mut old = std::mem::take(&mut self.by_name);
        let mut changed = Vec::new();
        for row in rows {
            let previous = old.remove(&row.name);
            if !self.claim(&row.name, ticket) {
                // A newer build's row (or removal) stands.
                if let Some(newer) = previous {
                    self.by_name.insert(newer.name.clone(), newer);
                }
                continue;
            }
            if previous.as_ref() != Some(&row) {
                changed.push(row.clone());
            }
            self.by_name.insert(row.name.clone(), row);
        }
        let mut gone = Vec::new();
        for (name, row) in old {
            if self.claim(&name, ticket) {
                gone.push(name);
            } else {
                self.by_name.insert(name, row);
            }
        }
        // Every name now counts as set by this reload at the least; only
        // newer claims need an entry.
        self.floor = self.floor.max(ticket);
        let floor = self.floor;
        self.set_by.retain(|_, set| *set > floor);
        self.rebuild();
        (changed, gone)
    }

    fn rebuild(&mut self) {
        self.current = Arc::new(Roster {
            rows: self.by_name.values().cloned().collect(),
            json: OnceLock::new(),
        });
    }
}

#[cfg(test)]
#[path = "snapshot_tests.rs"]
mod tests;
