//! The numbers behind `/metrics`: counters of reported turns and hooks,
//! gauges read when asked.

use super::*;
use crate::testing::{config_in, hive_at, id};
use crate::wire::turns::{TurnOutcome, TurnReport, TurnUsage};

fn hive() -> (Hive, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 10_000);
    (hive, dir)
}

fn turn(outcome: TurnOutcome, tokens: u64, cost: u64) -> TurnReport {
    TurnReport {
        started_at_ms: 1_000,
        ended_at_ms: 2_000,
        message_ids: Vec::new(),
        session_id: None,
        model: Some("claude-test".into()),
        outcome,
        error: None,
        tools: Vec::new(),
        usage: Some(TurnUsage {
            input_tokens: tokens,
            output_tokens: 2 * tokens,
            cache_read_input_tokens: 3,
            cache_creation_input_tokens: 4,
        }),
        cost_micro_usd: Some(cost),
        num_turns: Some(1),
        duration_ms: Some(1_000),
        duration_api_ms: None,
    }
}

#[test]
fn a_histogram_counts_each_observation_in_its_bucket_and_cumulates_them() {
    let mut h = Histogram::default();
    for s in [0.000_1, 0.003, 0.003, 7.0] {
        h.observe(s);
    }
    let c = h.cumulative();
    assert_eq!(c.len(), HOOK_LATENCY_BOUNDS.len());
    assert_eq!(c[0], (0.000_5, 1));
    assert_eq!(c[3], (0.005, 3), "0.003 s falls in the 5 ms bucket");
    assert_eq!(c.last().unwrap().1, 3, "7 s is past every bound");
    assert_eq!(h.count, 4);
    assert!((h.sum - 7.0061).abs() < 1e-9);
}

#[tokio::test]
async fn reported_turns_inbox_depths_and_pending_approvals_show_in_the_snapshot() {
    let (hive, _dir) = hive();
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    hive.request_spawn(&id("bob")).await.unwrap();
    for body in ["one", "two"] {
        hive.messaging()
            .send_from_operator(&alice, None, body.into())
            .await
            .unwrap();
    }
    hive.usage()
        .report_turn(&alice, turn(TurnOutcome::Ok, 10, 1_500))
        .await
        .unwrap();
    hive.usage()
        .report_turn(&alice, turn(TurnOutcome::Failed, 5, 500))
        .await
        .unwrap();
    // A refused report counts nothing.
    let mut bad = turn(TurnOutcome::Ok, 1, 1);
    bad.ended_at_ms = 0;
    assert!(hive.usage().report_turn(&alice, bad).await.is_err());

    // A hook that moves the row is timed; one that does not move it is not.
    let prompt = r#"{"hook_event_name":"UserPromptSubmit","prompt":"go"}"#;
    hive.hook_event(&alice, prompt.into()).await.unwrap();
    hive.hook_event(&alice, prompt.into()).await.unwrap();

    let m = hive.metrics().await.unwrap();
    assert_eq!(m.hook_latency.count, 1, "{:?}", m.hook_latency);
    let t = &m.turns[&alice];
    assert_eq!(t.outcomes.get("ok"), Some(&1));
    assert_eq!(t.outcomes.get("failed"), Some(&1));
    assert_eq!((t.input_tokens, t.output_tokens), (15, 30));
    assert_eq!((t.cache_read_tokens, t.cache_creation_tokens), (6, 8));
    assert_eq!(t.cost_micro_usd, 2_000);
    let row = m.agents.iter().find(|(n, ..)| *n == alice).unwrap();
    assert_eq!(row.1, AgentState::Running);
    assert_eq!(row.2, 2, "two messages wait for alice");
    assert_eq!(m.approvals_pending, 1);
    assert_eq!(m.operator_inbox, 0);
}
