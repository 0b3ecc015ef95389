//! The exposition text: every family typed once, counters per agent,
//! a histogram whose buckets only grow and end at `+Inf`.

use std::collections::BTreeMap;

use super::*;
use crate::service::metrics::{Histogram, TurnCounters};
use crate::wire::ident::Ident;
use crate::wire::model_log::{MeteredUsage, Tokens};

fn snapshot() -> MetricsSnapshot {
    let alice = Ident::new("alice").unwrap();
    let turns = TurnCounters {
        outcomes: BTreeMap::from([("ok", 3), ("killed", 1)]),
        input_tokens: 100,
        output_tokens: 20,
        cache_read_tokens: 5,
        cache_creation_tokens: 0,
        cost_micro_usd: 1_250_000,
        metered: MeteredUsage {
            requests: 6,
            tokens: Tokens {
                input: 300,
                output: 40,
                cache_write: 2,
                cache_read: 9,
            },
            cost_micro_usd: 2_500_000,
            unpriced: 0,
        },
    };
    MetricsSnapshot {
        agents: vec![
            (alice.clone(), AgentState::Running, 2),
            (Ident::new("bob").unwrap(), AgentState::Failed, 0),
        ],
        operator_inbox: 4,
        approvals_pending: 1,
        turns: BTreeMap::from([(alice, turns)]),
        hook_latency: Histogram {
            buckets: vec![1, 0, 2, 0, 0, 0, 0, 0, 0, 0, 0],
            sum: 0.004,
            count: 4,
        },
    }
}

#[test]
fn each_family_is_typed_once_and_its_samples_follow() {
    let text = render(&snapshot());
    for (name, kind) in [
        ("hive_agents", "gauge"),
        ("hive_agent_up", "gauge"),
        ("hive_inbox_messages", "gauge"),
        ("hive_approvals_pending", "gauge"),
        ("hive_turns_total", "counter"),
        ("hive_tokens_total", "counter"),
        ("hive_cost_usd_total", "counter"),
        ("hive_model_requests_total", "counter"),
        ("hive_reported_tokens_total", "counter"),
        ("hive_reported_cost_usd_total", "counter"),
        ("hive_hook_to_roster_seconds", "histogram"),
    ] {
        assert_eq!(
            text.matches(&format!("# TYPE {name} {kind}\n")).count(),
            1,
            "{name}\n{text}"
        );
    }
    for line in [
        "hive_agents{state=\"running\"} 1",
        "hive_agents{state=\"failed\"} 1",
        "hive_agents{state=\"stopped\"} 0",
        "hive_agent_up{agent=\"bob\"} 0",
        "hive_inbox_messages{agent=\"alice\"} 2",
        "hive_operator_inbox_messages 4",
        "hive_turns_total{agent=\"alice\",outcome=\"killed\"} 1",
        "hive_model_requests_total{agent=\"alice\"} 6",
        "hive_tokens_total{agent=\"alice\",kind=\"cache_read\"} 9",
        "hive_tokens_total{agent=\"alice\",kind=\"cache_creation\"} 2",
        "hive_cost_usd_total{agent=\"alice\"} 2.5",
        "hive_reported_tokens_total{agent=\"alice\",kind=\"cache_read\"} 5",
        "hive_reported_cost_usd_total{agent=\"alice\"} 1.25",
        "hive_hook_to_roster_seconds_bucket{le=\"0.0005\"} 1",
        "hive_hook_to_roster_seconds_bucket{le=\"0.0025\"} 3",
        "hive_hook_to_roster_seconds_bucket{le=\"1\"} 3",
        "hive_hook_to_roster_seconds_bucket{le=\"+Inf\"} 4",
        "hive_hook_to_roster_seconds_count 4",
    ] {
        assert!(text.lines().any(|l| l == line), "{line}\n{text}");
    }
    assert!(text.ends_with('\n'));
}

#[test]
fn a_label_value_escapes_backslash_quote_and_newline() {
    assert_eq!(label("a\\b\"c\nd"), r#"a\\b\"c\nd"#);
}
