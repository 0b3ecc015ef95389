//! `GET /metrics`: the hive's numbers in Prometheus's text exposition
//! format 0.0.4, for a scraper that reaches `web.sock` (through the same
//! reverse proxy as the dashboard, or a unix-socket scrape).
//!
//! Names follow Prometheus's conventions: a `hive_` prefix, units in the
//! name (`_seconds`, `_usd`), counters ending `_total`; per-agent series are
//! labelled `agent`. Counters count since the daemon started
//! ([`crate::service::metrics`]).

use std::fmt::Write as _;

use axum::extract::State;
use axum::http::header;
use axum::response::{IntoResponse, Response};

use super::Web;
use super::pages::failed;
use crate::service::metrics::{AgentState, MetricsSnapshot, TurnCounters};

/// The exposition format's media type.
const CONTENT_TYPE: &str = "text/plain; version=0.0.4; charset=utf-8";

/// `GET /metrics` (the operator's, as `usage` on host.sock).
pub async fn page(State(web): State<Web>) -> Response {
    match async { web.operator("usage", None).await?.metrics().await }.await {
        Ok(snapshot) => ([(header::CONTENT_TYPE, CONTENT_TYPE)], render(&snapshot)).into_response(),
        Err(err) => failed(&err),
    }
}

/// A label value as the format quotes it: `\`, `"` and newline escaped.
fn label(value: &str) -> String {
    value
        .replace('\\', r"\\")
        .replace('"', "\\\"")
        .replace('\n', r"\n")
}

/// The `# HELP` and `# TYPE` lines of one family.
fn family(out: &mut String, name: &str, kind: &str, help: &str) {
    let _ = writeln!(out, "# HELP {name} {help}\n# TYPE {name} {kind}");
}

/// One sample line: `name{k="v",...} value` (no braces without labels).
fn sample(out: &mut String, name: &str, labels: &[(&str, &str)], value: impl std::fmt::Display) {
    out.push_str(name);
    if !labels.is_empty() {
        let pairs: Vec<String> = labels
            .iter()
            .map(|(k, v)| format!("{k}=\"{}\"", label(v)))
            .collect();
        let _ = write!(out, "{{{}}}", pairs.join(","));
    }
    let _ = writeln!(out, " {value}");
}

/// The snapshot as exposition text.
pub fn render(m: &MetricsSnapshot) -> String {
    let mut out = String::new();
    let o = &mut out;
    family(o, "hive_agents", "gauge", "Managed agents by state.");
    for state in [AgentState::Running, AgentState::Failed, AgentState::Stopped] {
        let n = m.agents.iter().filter(|(_, s, _)| *s == state).count();
        sample(o, "hive_agents", &[("state", state.as_str())], n);
    }
    family(
        o,
        "hive_agent_up",
        "gauge",
        "1 if the agent's container runs, else 0.",
    );
    for (agent, state, _) in &m.agents {
        let up = u8::from(*state == AgentState::Running);
        sample(o, "hive_agent_up", &[("agent", agent.as_str())], up);
    }
    family(
        o,
        "hive_inbox_messages",
        "gauge",
        "Messages waiting in the agent's inbox.",
    );
    for (agent, _, depth) in &m.agents {
        sample(
            o,
            "hive_inbox_messages",
            &[("agent", agent.as_str())],
            depth,
        );
    }
    family(
        o,
        "hive_operator_inbox_messages",
        "gauge",
        "Messages waiting for the operator.",
    );
    sample(o, "hive_operator_inbox_messages", &[], m.operator_inbox);
    family(
        o,
        "hive_approvals_pending",
        "gauge",
        "Approvals waiting for the operator.",
    );
    sample(o, "hive_approvals_pending", &[], m.approvals_pending);

    let name = "hive_turns_total";
    family(
        o,
        name,
        "counter",
        "Turns journaled (reported by the agents' harnesses, or read from interactive sessions' transcripts: outcome interactive), by outcome.",
    );
    for (agent, t) in &m.turns {
        for (outcome, n) in &t.outcomes {
            sample(
                o,
                name,
                &[("agent", agent.as_str()), ("outcome", outcome)],
                n,
            );
        }
    }
    let name = "hive_model_requests_total";
    family(
        o,
        name,
        "counter",
        "Model requests the gateway metered (every status).",
    );
    for (agent, t) in &m.turns {
        sample(o, name, &[("agent", agent.as_str())], t.metered.requests);
    }
    let per_agent = |pick: fn(&TurnCounters) -> Spent| {
        m.turns
            .iter()
            .map(move |(agent, t)| (agent.as_str(), pick(t)))
    };
    spent_families(
        o,
        ("hive_tokens_total", "hive_cost_usd_total"),
        (
            "Tokens of metered model requests (the upstream's usage), by kind.",
            "List cost of metered model requests in US dollars (the price table; unpriced models count nothing).",
        ),
        per_agent(|t| {
            let k = &t.metered.tokens;
            Spent {
                tokens: [k.input, k.output, k.cache_read, k.cache_write],
                micro_usd: t.metered.cost_micro_usd,
            }
        }),
    );
    spent_families(
        o,
        ("hive_reported_tokens_total", "hive_reported_cost_usd_total"),
        (
            "Tokens the agents' turns reported (Claude Code's result usage; not the spend), by kind.",
            "Cost the agents' turns reported in US dollars (Claude Code's total_cost_usd; not the spend).",
        ),
        per_agent(|t| Spent {
            tokens: [
                t.input_tokens,
                t.output_tokens,
                t.cache_read_tokens,
                t.cache_creation_tokens,
            ],
            micro_usd: t.cost_micro_usd,
        }),
    );

    let name = "hive_hook_to_roster_seconds";
    family(
        o,
        name,
        "histogram",
        "From a hook payload's arrival to its roster row's publication.",
    );
    let bucket = format!("{name}_bucket");
    for (bound, n) in m.hook_latency.cumulative() {
        sample(o, &bucket, &[("le", &bound.to_string())], n);
    }
    let h = &m.hook_latency;
    sample(o, &bucket, &[("le", "+Inf")], h.count);
    sample(o, &format!("{name}_sum"), &[], h.sum);
    sample(o, &format!("{name}_count"), &[], h.count);
    out
}

/// Micro-dollars as dollars.
/// One agent's tokens (input, output, cache read, cache creation) and
/// cost, as one pair of families shows them.
struct Spent {
    tokens: [u64; 4],
    micro_usd: u64,
}

/// A tokens family by kind and a cost family, both per agent: the
/// metered pair and the reported pair have the same shape.
fn spent_families<'a>(
    o: &mut String,
    (tokens, cost): (&str, &str),
    (tokens_help, cost_help): (&str, &str),
    rows: impl Iterator<Item = (&'a str, Spent)> + Clone,
) {
    family(o, tokens, "counter", tokens_help);
    for (agent, spent) in rows.clone() {
        let kinds = ["input", "output", "cache_read", "cache_creation"];
        for (kind, n) in kinds.into_iter().zip(spent.tokens) {
            sample(o, tokens, &[("agent", agent), ("kind", kind)], n);
        }
    }
    family(o, cost, "counter", cost_help);
    for (agent, spent) in rows {
        sample(o, cost, &[("agent", agent)], usd(spent.micro_usd));
    }
}

fn usd(micro: u64) -> f64 {
    #[allow(clippy::cast_precision_loss)] // micro-dollars far below 2^52
    let usd = micro as f64 / 1e6;
    usd
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
