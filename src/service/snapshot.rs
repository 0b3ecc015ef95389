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

    /// Drop the row of an agent that is no longer managed; `false` when it
    /// had none.
    pub(super) fn remove(&mut self, name: &Ident) -> bool {
        let had = self.by_name.remove(name).is_some();
        if had {
            self.rebuild();
        }
        had
    }

    /// Replace every row (start-up, after lost changes); what changed: the
    /// rows that are new or differ, and the names whose rows are gone.
    pub(super) fn replace_all(
        &mut self,
        rows: impl IntoIterator<Item = AgentStatusRow>,
    ) -> (Vec<AgentStatusRow>, Vec<Ident>) {
        let mut old = std::mem::take(&mut self.by_name);
        let mut changed = Vec::new();
        for row in rows {
            if old.remove(&row.name).as_ref() != Some(&row) {
                changed.push(row.clone());
            }
            self.by_name.insert(row.name.clone(), row);
        }
        self.rebuild();
        (changed, old.into_keys().collect())
    }

    fn rebuild(&mut self) {
        self.current = Arc::new(Roster {
            rows: self.by_name.values().cloned().collect(),
            json: OnceLock::new(),
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(name: &str, parent: Option<&str>) -> AgentStatusRow {
        let line = format!(
            r#"{{"name":"{name}","running":true,"failed":false,"needs_update":false,
                "needs_login":false,"pending_reminders":0,"paused":false}}"#
        );
        let mut r: AgentStatusRow = serde_json::from_str(&line).unwrap();
        r.parent = parent.map(|p| Ident::new(p).unwrap());
        r
    }

    #[test]
    fn replacing_every_row_reports_only_the_changed_rows_and_the_gone_names() {
        let mut rows = Rows::default();
        let (changed, gone) =
            rows.replace_all([row("a", None), row("b", Some("a")), row("c", None)]);
        assert_eq!(changed.len(), 3);
        assert!(gone.is_empty());
        // `a` destroyed: `b` moves up to the root, `c` is as it was.
        let (changed, gone) = rows.replace_all([row("b", None), row("c", None)]);
        assert_eq!(changed, vec![row("b", None)]);
        assert_eq!(gone, vec![Ident::new("a").unwrap()]);
        let current = rows.current();
        let names: Vec<&str> = current.rows().iter().map(|r| r.name.as_str()).collect();
        assert_eq!(names, ["b", "c"]);
    }

    #[test]
    fn removing_a_row_says_whether_there_was_one() {
        let mut rows = Rows::default();
        assert!(rows.put(row("a", None)));
        assert!(!rows.put(row("a", None)), "the same row twice is no change");
        assert!(rows.remove(&Ident::new("a").unwrap()));
        assert!(!rows.remove(&Ident::new("a").unwrap()));
        assert!(rows.current().rows().is_empty());
    }
}
