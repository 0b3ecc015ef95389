//! `hivectl turns`, `hivectl usage` and `hivectl budget`: the turn
//! journal, the metered spend beside it and the spend caps over that as
//! tables. A turn's own tokens and cost are its harness's report, headed
//! `REPORTED-*`; the spend (`COST`) is the meter's.

use crate::clock::rfc3339;
use crate::wire::model_log::MeteredUsage;
use crate::wire::spend::{BudgetRow, SpendSource};
use crate::wire::turns::{TurnRow, UsageRow};

use super::table::{clean, or_dash, table};

pub use crate::wire::spend::{dollars, tokens};

/// A metered cost, `+?` when some requests had no price.
fn metered_cost(m: &MeteredUsage) -> String {
    let unpriced = if m.unpriced > 0 { "+?" } else { "" };
    format!("{}{unpriced}", dollars(m.cost_micro_usd))
}

/// An agent's turns, newest first: what each reported, and the agent's
/// requests the meter kept from its start to its end.
pub fn turns_table(rows: &[TurnRow]) -> String {
    if rows.is_empty() {
        return "no turns\n".into();
    }
    let body = rows
        .iter()
        .map(|t| {
            let r = &t.report;
            let reported = r.usage.map(|u| tokens(u.total()));
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
                t.metered
                    .as_ref()
                    .map_or_else(|| "-".into(), |m| m.requests.to_string()),
                t.metered.as_ref().map_or_else(|| "-".into(), metered_cost),
                or_dash(reported.as_deref()),
                r.cost_micro_usd.map_or_else(|| "-".into(), dollars),
                or_dash(Some(&tools.join(","))),
                or_dash(r.error.as_deref().map(clean).as_deref()),
            ]
        })
        .collect::<Vec<_>>();
    let head = [
        "ID",
        "ENDED",
        "OUTCOME",
        "TOOK",
        "MSGS",
        "MODEL",
        "REQS",
        "METERED",
        "REPORTED-TOKENS",
        "REPORTED-COST",
        "TOOLS",
        "ERROR",
    ];
    table(&head, &body)
}

/// Usage sums, one row per key, and the total: the metered requests
/// (the spend), then the turns and the cost they reported.
pub fn usage_table(rows: &[UsageRow], by: &str, subtree: bool) -> String {
    if rows.is_empty() {
        return "nothing metered or reported in this window\n".into();
    }
    let line = |r: &UsageRow| {
        let m = &r.metered;
        vec![
            clean(&r.key),
            m.requests.to_string(),
            tokens(m.tokens.input),
            tokens(m.tokens.output),
            tokens(m.tokens.cache_read),
            tokens(m.tokens.cache_write),
            metered_cost(m),
            r.turns.to_string(),
            tokens(r.usage.total()),
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
    let mut text = table(
        &[
            &key,
            "REQUESTS",
            "INPUT",
            "OUTPUT",
            "CACHE-READ",
            "CACHE-WRITE",
            "COST",
            "TURNS",
            "REPORTED-TOKENS",
            "REPORTED-COST",
        ],
        &body,
    );
    if rows.iter().any(|r| r.metered.unpriced > 0) {
        text.push_str(
            "+? some requests were of models without a price: their cost is not counted\n",
        );
    }
    text
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
