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
use crate::service::metrics::{AgentState, MetricsSnapshot};

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

/// The snapshot as exposition text.
pub fn render(m: &MetricsSnapshot) -> String {
    let mut out = String::new();
    family(&mut out, "hive_agents", "gauge", "Managed agents by state.");
    for state in [AgentState::Running, AgentState::Failed, AgentState::Stopped] {
        let n = m.agents.iter().filter(|(_, s, _)| *s == state).count();
        let _ = writeln!(out, "hive_agents{{state=\"{}\"}} {n}", state.as_str());
    }
    family(
        &mut out,
        "hive_agent_up",
        "gauge",
        "1 if the agent's container runs, else 0.",
    );
    for (agent, state, _) in &m.agents {
        let up = u8::from(*state == AgentState::Running);
        let _ = writeln!(
            out,
            "hive_agent_up{{agent=\"{}\"}} {up}",
            label(agent.as_str())
        );
    }
    family(
        &mut out,
        "hive_inbox_messages",
        "gauge",
        "Messages waiting in the agent's inbox.",
    );
    for (agent, _, depth) in &m.agents {
        let _ = writeln!(
            out,
            "hive_inbox_messages{{agent=\"{}\"}} {depth}",
            label(agent.as_str())
        );
    }
    family(
        &mut out,
        "hive_operator_inbox_messages",
        "gauge",
        "Messages waiting for the operator.",
    );
    let _ = writeln!(out, "hive_operator_inbox_messages {}", m.operator_inbox);
    family(
        &mut out,
        "hive_approvals_pending",
        "gauge",
        "Approvals waiting for the operator.",
    );
    let _ = writeln!(out, "hive_approvals_pending {}", m.approvals_pending);

    family(
        &mut out,
        "hive_turns_total",
        "counter",
        "Turns reported by the agents' harnesses, by outcome.",
    );
    for (agent, t) in &m.turns {
        for (outcome, n) in &t.outcomes {
            let _ = writeln!(
                out,
                "hive_turns_total{{agent=\"{}\",outcome=\"{outcome}\"}} {n}",
                label(agent.as_str())
            );
        }
    }
    family(
        &mut out,
        "hive_tokens_total",
        "counter",
        "Tokens of reported turns (Claude Code's result usage), by kind.",
    );
    for (agent, t) in &m.turns {
        for (kind, n) in [
            ("input", t.input_tokens),
            ("output", t.output_tokens),
            ("cache_read", t.cache_read_tokens),
            ("cache_creation", t.cache_creation_tokens),
        ] {
            let _ = writeln!(
                out,
                "hive_tokens_total{{agent=\"{}\",kind=\"{kind}\"}} {n}",
                label(agent.as_str())
            );
        }
    }
    family(
        &mut out,
        "hive_cost_usd_total",
        "counter",
        "Cost of reported turns in US dollars (Claude Code's total_cost_usd).",
    );
    for (agent, t) in &m.turns {
        #[allow(clippy::cast_precision_loss)] // micro-dollars far below 2^52
        let usd = t.cost_micro_usd as f64 / 1e6;
        let _ = writeln!(
            out,
            "hive_cost_usd_total{{agent=\"{}\"}} {usd}",
            label(agent.as_str())
        );
    }

    let name = "hive_hook_to_roster_seconds";
    family(
        &mut out,
        name,
        "histogram",
        "From a hook payload's arrival to its roster row's publication.",
    );
    for (bound, n) in m.hook_latency.cumulative() {
        let _ = writeln!(out, "{name}_bucket{{le=\"{bound}\"}} {n}");
    }
    let h = &m.hook_latency;
    let _ = writeln!(out, "{name}_bucket{{le=\"+Inf\"}} {}", h.count);
    let _ = writeln!(out, "{name}_sum {}\n{name}_count {}", h.sum, h.count);
    out
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
