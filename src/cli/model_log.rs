//! `hivectl model-log NAME`: an agent's requests to the model as the
//! hive's model gateway metered them, one line each, oldest first.
//!
//! Cells that came from the upstream or the agent (the model's name, the
//! request id, an error's text, an unknown route) are cleaned of control
//! characters and shortened ([`or_dash`]).

use crate::clock::rfc3339;
use crate::wire::model_log::ModelLogRow;
use crate::wire::spend::{dollars, tokens};

use super::table::{or_dash, table};

/// A cost in millionths of a dollar as dollars (`$0.0068`, the one money
/// formatter); `-` when unknown (a model not in the price table).
pub fn usd(micro: Option<u64>) -> String {
    micro.map_or_else(|| "-".to_owned(), dollars)
}

/// The table of `rows`, or a line saying there are none.
pub fn table_of(rows: &[ModelLogRow]) -> String {
    if rows.is_empty() {
        return "no model requests recorded\n".into();
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let q = &r.request;
            vec![
                rfc3339(q.at_ms.div_euclid(1000)),
                or_dash(Some(&q.route)),
                or_dash(q.model.as_deref()),
                q.status.to_string(),
                tokens(q.tokens.input),
                tokens(q.tokens.output),
                tokens(q.tokens.cache_write),
                tokens(q.tokens.cache_read),
                usd(q.cost_micro_usd),
                format!("{:.1}s", q.ms as f64 / 1000.0),
                or_dash(q.request_id.as_deref()),
                or_dash(q.error.as_deref()),
            ]
        })
        .collect();
    let head = [
        "TIME", "ROUTE", "MODEL", "STATUS", "IN", "OUT", "CACHE_W", "CACHE_R", "COST", "TOOK",
        "REQUEST", "ERROR",
    ];
    table(&head, &body)
}

#[cfg(test)]
#[path = "model_log_tests.rs"]
mod tests;
