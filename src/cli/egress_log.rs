//! `hivectl egress-log NAME`: an agent's egress audit, one line per
//! connection (or per counted run of refusals), oldest first.
//!
//! Every cell that came from the egress service (the target an agent asked
//! for, a resolver's error) is cleaned of control characters and shortened
//! ([`or_dash`]): the target is an agent's own text, and it must not move
//! the operator's cursor.

use crate::clock::rfc3339;
use crate::wire::egress_audit::EgressLogRow;

use super::table::{or_dash, table};

/// The table of `rows`, or a line saying there are none.
pub fn table_of(rows: &[EgressLogRow]) -> String {
    if rows.is_empty() {
        return "no egress connections recorded\n".into();
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let verdict = if r.count > 1 {
                format!("{} x{}", r.verdict.as_str(), r.count)
            } else {
                r.verdict.as_str().to_owned()
            };
            vec![
                rfc3339(r.at_ms.div_euclid(1000)),
                verdict,
                or_dash(r.target.as_deref()),
                or_dash(r.address.as_deref()),
                r.up.to_string(),
                r.down.to_string(),
                format!("{:.1}s", r.ms as f64 / 1000.0),
                or_dash(r.reason.as_deref()),
            ]
        })
        .collect();
    let head = [
        "TIME", "VERDICT", "TARGET", "ADDRESS", "OUT", "IN", "TOOK", "WHY",
    ];
    table(&head, &body)
}

#[cfg(test)]
#[path = "egress_log_tests.rs"]
mod tests;
