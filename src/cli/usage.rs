//! `hivectl turns`, `hivectl usage` and `hivectl budget`: the turn
//! journal and the spend caps over it as tables.

use crate::clock::rfc3339;
use crate::wire::spend::{BudgetRow, SpendSource};
use crate::wire::turns::{TurnRow, UsageRow};

use super::table::{clean, or_dash, table};

pub use crate::wire::spend::dollars;

/// An agent's turns, newest first.
pub fn turns_table(rows: &[TurnRow]) -> String {
    if rows.is_empty() {
        return "no turns\n".into();
    }
    let body = rows
        .iter()
        .map(|t| {
            let r = &t.report;
            let tokens = r.usage.map(|u| u.total().to_string());
            let tools: Vec<String> = r
                .tools
                .iter()
                .map(|c| format!("{}{}", c.name, if c.ok { "" } else { "!" }))
                .collect();
            vec![
                t.id.to_string(),
                rfc3339(r.ended_at_ms.div_euclid(1000)),
                r.outcome.as_str().to_owned(),
                format!("{:.1}s", (r.ended_at_ms - r.started_at_ms) as f64 / 1000.0),
                r.message_ids.len().to_string(),
                or_dash(r.model.as_deref()),
                or_dash(tokens.as_deref()),
                r.cost_micro_usd.map_or_else(|| "-".into(), dollars),
                or_dash(Some(&tools.join(","))),
                or_dash(r.error.as_deref().map(clean).as_deref()),
            ]
        })
        .collect::<Vec<_>>();
    let head = [
        "ID", "ENDED", "OUTCOME", "TOOK", "MSGS", "MODEL", "TOKENS", "COST", "TOOLS", "ERROR",
    ];
    table(&head, &body)
}

/// Usage sums, one row per key, and the total.
pub fn usage_table(rows: &[UsageRow], by: &str, subtree: bool) -> String {
    if rows.is_empty() {
        return "no turns in this window\n".into();
    }
    let line = |r: &UsageRow| {
        let u = &r.usage;
        vec![
            clean(&r.key),
            r.turns.to_string(),
            u.input_tokens.to_string(),
            u.output_tokens.to_string(),
            u.cache_read_input_tokens.to_string(),
            u.cache_creation_input_tokens.to_string(),
            dollars(r.cost_micro_usd),
        ]
    };
    let mut body: Vec<Vec<String>> = rows.iter().map(line).collect();
    // Subtrees overlap (a parent's row holds its children's): no total.
    if !subtree {
        let mut total = UsageRow {
            key: "total".into(),
            ..UsageRow::default()
        };
        rows.iter().for_each(|r| total.add(r));
        body.push(line(&total));
    }
    let key = by.to_ascii_uppercase();
    table(
        &[
            &key,
            "TURNS",
            "INPUT",
            "OUTPUT",
            "CACHE-READ",
            "CACHE-WRITE",
            "COST",
        ],
        &body,
    )
}

/// The caps in force, with what their windows hold.
pub fn budgets_table(rows: &[BudgetRow]) -> String {
    if rows.is_empty() {
        return "no budgets (hivectl budget set NAME AMOUNT, or budget_hive in the config)\n"
            .into();
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            vec![
                r.scope.words(),
                r.amount.to_string(),
                r.amount.words(r.spent),
                match r.source {
                    SpendSource::Operator => "operator".into(),
                    SpendSource::Config => "config".into(),
                },
                if r.reached { "reached" } else { "ok" }.into(),
            ]
        })
        .collect();
    table(&["COVERS", "AMOUNT", "SPENT", "FROM", "STATE"], &body)
}

#[cfg(test)]
#[path = "usage_tests.rs"]
mod tests;
