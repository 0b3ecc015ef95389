//! The turn in progress through the service: kept in memory within its
//! bounds, refused past the caps, cleared when the turn is reported (or its
//! harness starts again), and each change published once, in order.

use crate::testing::{config_in, hive_at, id};
use crate::wire::live::{
    MAX_FIRST_LINE, MAX_LIVE_TOOLS, MAX_PROMPT_MESSAGES, MAX_REPLY, PromptLine, TurnProgress,
};
use crate::wire::turns::{TurnOutcome, TurnReport, TurnUsage};

use crate::service::{Hive, HiveError};

fn hive() -> (Hive, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 10_000);
    (hive, dir)
}

fn started(lines: &[(&str, &str)]) -> TurnProgress {
    TurnProgress::Started {
        started_at_ms: 9_000_000,
        messages: lines
            .iter()
            .map(|(from, line)| PromptLine {
                from: (*from).into(),
                first_line: (*line).into(),
            })
            .collect(),
        total_messages: u32::try_from(lines.len()).unwrap(),
    }
}

fn tool(call: u32, name: &str) -> TurnProgress {
    TurnProgress::ToolStarted {
        call,
        name: name.into(),
    }
}

fn report() -> TurnReport {
    TurnReport {
        started_at_ms: 9_000_000,
        ended_at_ms: 9_001_000,
        message_ids: vec![1],
        session_id: None,
        model: None,
        outcome: TurnOutcome::Ok,
        error: None,
        tools: vec![],
        usage: None,
        cost_micro_usd: Some(1_500),
        num_turns: None,
        duration_ms: None,
        duration_api_ms: None,
    }
}

#[tokio::test]
async fn a_turns_progress_builds_the_live_turn_tool_by_tool() {
    let (hive, _dir) = hive();
    let alice = id("alice");
    assert_eq!(hive.usage().live_turn(&alice), None);
    hive.usage()
        .turn_progress(&alice, started(&[("bob", "fix the build")]), 0)
        .unwrap();
    hive.usage()
        .turn_progress(&alice, tool(0, "Bash"), 0)
        .unwrap();
    hive.usage()
        .turn_progress(&alice, tool(1, "Read"), 0)
        .unwrap();
    let end = TurnProgress::ToolEnded {
        call: 0,
        ok: false,
        duration_ms: 1_200,
    };
    hive.usage().turn_progress(&alice, end, 3).unwrap();
    let usage = TurnProgress::Usage {
        usage: TurnUsage {
            output_tokens: 42,
            ..TurnUsage::default()
        },
        cost_micro_usd: None,
        is_final: false,
    };
    hive.usage().turn_progress(&alice, usage, 3).unwrap();
    let text = TurnProgress::Reply {
        text: "on it\nfirst the tests".into(),
    };
    hive.usage().turn_progress(&alice, text, 3).unwrap();
    let turn = hive.usage().live_turn(&alice).unwrap();
    assert_eq!(turn.started_at_ms, 9_000_000);
    assert_eq!(turn.messages[0].from, "bob");
    assert_eq!(turn.messages[0].first_line, "fix the build");
    let tools: Vec<_> = turn
        .tools
        .iter()
        .map(|t| (t.name.as_str(), t.ok, t.duration_ms))
        .collect();
    assert_eq!(
        tools,
        [("Bash", Some(false), Some(1_200)), ("Read", None, None)]
    );
    assert_eq!(turn.usage.unwrap().output_tokens, 42);
    assert_eq!(turn.reply.as_deref(), Some("on it\nfirst the tests"));
    assert_eq!(turn.dropped, 3);
    // Another agent's view is its own.
    assert_eq!(hive.usage().live_turn(&id("bob")), None);
}

#[tokio::test]
async fn a_live_turn_keeps_at_most_its_cap_of_tool_calls_and_counts_the_rest() {
    let (hive, _dir) = hive();
    let alice = id("alice");
    hive.usage().turn_progress(&alice, started(&[]), 0).unwrap();
    let extra = 25;
    for call in 0..u32::try_from(MAX_LIVE_TOOLS).unwrap() + extra {
        hive.usage()
            .turn_progress(&alice, tool(call, "Bash"), 0)
            .unwrap();
    }
    // The same call twice is one call.
    hive.usage()
        .turn_progress(&alice, tool(0, "Bash"), 0)
        .unwrap();
    let turn = hive.usage().live_turn(&alice).unwrap();
    assert_eq!(turn.tools.len(), MAX_LIVE_TOOLS);
    assert_eq!(turn.tools_left_out, extra);
}

#[tokio::test]
async fn progress_past_the_caps_is_refused_as_a_bad_request_and_changes_nothing() {
    let (hive, _dir) = hive();
    let alice = id("alice");
    let long_reply = TurnProgress::Reply {
        text: "x".repeat(MAX_REPLY + 1),
    };
    let long_line = started(&[("bob", &"y".repeat(MAX_FIRST_LINE + 1))]);
    let many: Vec<(&str, &str)> = vec![("bob", "hi"); MAX_PROMPT_MESSAGES + 1];
    let escape = TurnProgress::Reply {
        text: "\u{1b}[2Jgone".into(),
    };
    let bad_name = tool(0, "Bash\u{7}");
    for bad in [long_reply, long_line, started(&many), escape, bad_name] {
        let err = hive
            .usage()
            .turn_progress(&alice, bad.clone(), 0)
            .unwrap_err();
        assert!(
            matches!(err, HiveError::BadArgument(_)),
            "{bad:?} gave {err:?}"
        );
        assert_eq!(err.code(), crate::wire::codes::ErrorCode::BadRequest);
        assert!(err.to_string().starts_with("turn_progress: "), "{err}");
    }
    assert_eq!(hive.usage().live_turn(&alice), None);
}

#[tokio::test]
async fn the_turns_report_clears_the_live_turn_and_publishes_its_row() {
    let (hive, _dir) = hive();
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    let mut changes = hive.usage().subscribe_live();
    hive.usage()
        .turn_progress(&alice, started(&[("bob", "hi")]), 0)
        .unwrap();
    hive.usage()
        .turn_progress(&alice, tool(0, "Bash"), 0)
        .unwrap();
    let id = hive.usage().report_turn(&alice, report()).await.unwrap();
    assert_eq!(hive.usage().live_turn(&alice), None);
    let mut seen = Vec::new();
    while let Ok(change) = changes.try_recv() {
        seen.push(change);
    }
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert!(seen.windows(2).all(|w| w[0].seq < w[1].seq), "{seen:?}");
    let last = seen.last().unwrap();
    assert!(last.ended && last.progress.is_none());
    assert_eq!(last.turn.as_ref().map(|r| r.id), Some(id));
    assert_eq!(
        last.turn.as_ref().and_then(|r| r.report.cost_micro_usd),
        Some(1_500)
    );
}

#[tokio::test]
async fn a_harness_starting_again_ends_the_turn_it_left_unreported() {
    let (hive, _dir) = hive();
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    hive.usage()
        .turn_progress(&alice, tool(0, "Bash"), 0)
        .unwrap();
    // No `started` seen (the daemon restarted mid-turn): the daemon's
    // clock starts it.
    assert_eq!(
        hive.usage().live_turn(&alice).map(|t| t.started_at_ms),
        Some(10_000_000)
    );
    let mut changes = hive.usage().subscribe_live();
    hive.requeue_inflight(&alice).await.unwrap();
    assert_eq!(hive.usage().live_turn(&alice), None);
    let change = changes.try_recv().unwrap();
    assert!(change.ended && change.turn.is_none());
    // Nothing live, nothing to say.
    hive.requeue_inflight(&alice).await.unwrap();
    assert!(changes.try_recv().is_err());
}

#[tokio::test]
async fn a_new_turn_replaces_what_the_last_one_left() {
    let (hive, _dir) = hive();
    let alice = id("alice");
    hive.usage()
        .turn_progress(&alice, started(&[("bob", "one")]), 0)
        .unwrap();
    hive.usage()
        .turn_progress(&alice, tool(0, "Bash"), 0)
        .unwrap();
    hive.usage()
        .turn_progress(&alice, started(&[("carol", "two")]), 0)
        .unwrap();
    let turn = hive.usage().live_turn(&alice).unwrap();
    assert!(turn.tools.is_empty());
    assert_eq!(turn.messages[0].from, "carol");
}

#[tokio::test]
async fn the_roster_row_says_what_the_agent_spent_today_as_metered_not_as_reported() {
    let (hive, _dir) = hive();
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    let row = |hive: &Hive| {
        hive.roster()
            .rows()
            .iter()
            .find(|r| r.name == alice)
            .cloned()
            .unwrap()
    };
    assert_eq!(row(&hive).spent_today_micro_usd, None);
    hive.usage().report_turn(&alice, report()).await.unwrap();
    assert_eq!(
        row(&hive).spent_today_micro_usd,
        None,
        "a turn's reported cost is not spend"
    );
    let request = crate::wire::model_log::MeterRow {
        at_ms: 9_000_500,
        route: "POST /v1/messages".into(),
        model: Some("claude-haiku-4-5".into()),
        status: 200,
        tokens: crate::wire::model_log::Tokens::default(),
        cost_micro_usd: Some(1_500),
        ms: 5,
        request_id: None,
        error: None,
    };
    hive.meter(&alice, request.clone()).await.unwrap();
    hive.meter(&alice, request).await.unwrap();
    assert_eq!(row(&hive).spent_today_micro_usd, Some(3_000));
}
