//! The roster served from memory: every managed agent's row, kept current by
//! [`Hive::publish`] on every change (driver signal, pause, status, topology,
//! lifecycle verb, agenda write) and read by `agent_status`, the status
//! stream and dashboards without a query or a stat per request.
//!
//! Each change builds a new immutable [`Roster`]; its JSON is serialized at
//! most once, by the first reader that asks for it.

use std::collections::BTreeMap;
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

/// The rows by name and the current published version.
#[derive(Debug, Default)]
pub(super) struct Rows {
    by_name: BTreeMap<Ident, AgentStatusRow>,
    current: Arc<Roster>,
}

impl Rows {
    pub(super) fn current(&self) -> Arc<Roster> {
        Arc::clone(&self.current)
    }

    /// Put (or replace) one row; `false` when it was already exactly so.
    pub(super) fn put(&mut self, row: AgentStatusRow) -> bool {
        if self.by_name.get(&row.name) == Some(&row) {
            return false;
        }
        self.by_name.insert(row.name.clone(), row);
        self.rebuild();
        true
    }

    /// Drop the row of an agent that is no longer managed.
    pub(super) fn remove(&mut self, name: &Ident) {
        if self.by_name.remove(name).is_some() {
            self.rebuild();
        }
    }

    /// Replace every row (start-up, after lost changes).
    pub(super) fn replace_all(&mut self, rows: impl IntoIterator<Item = AgentStatusRow>) {
        self.by_name = rows.into_iter().map(|r| (r.name.clone(), r)).collect();
        self.rebuild();
    }

    fn rebuild(&mut self) {
        self.current = Arc::new(Roster {
            rows: self.by_name.values().cloned().collect(),
            json: OnceLock::new(),
        });
    }
}
