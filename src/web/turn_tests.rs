//! The turn view renders what an agent sent as text, never as markup.

use super::*;
use crate::wire::live::{LiveTool, PromptLine};
use crate::wire::turns::{ToolCall, TurnOutcome, TurnReport};

#[test]
fn the_live_turn_escapes_every_value_an_agent_sent() {
    let turn = LiveTurn {
        seq: 1,
        started_at_ms: 0,
        messages: vec![PromptLine {
            from: "<b>bob</b>".into(),
            first_line: "<img src=x onerror=alert(1)>".into(),
        }],
        total_messages: 3,
        tools: vec![LiveTool {
            call: 0,
            name: "<script>tool</script>".into(),
            ok: Some(false),
            duration_ms: Some(2_000),
        }],
        tools_left_out: 0,
        reply: Some("</pre><script>alert(2)</script>".into()),
        usage: None,
        cost_micro_usd: Some(10_000),
        dropped: 0,
    };
    let row = TurnRow {
        id: 1,
        agent: Ident::new("alice").unwrap(),
        report: TurnReport {
            started_at_ms: 0,
            ended_at_ms: 1_000,
            message_ids: vec![],
            session_id: None,
            model: Some("<i>m</i>".into()),
            outcome: TurnOutcome::Failed,
            error: Some("<iframe>".into()),
            tools: vec![ToolCall {
                name: "<u>x</u>".into(),
                ok: false,
                duration_ms: 1,
            }],
            usage: None,
            cost_micro_usd: None,
            num_turns: None,
            duration_ms: None,
            duration_api_ms: None,
        },
        metered: None,
    };
    let html = view(Some(&turn), &[row]).into_string();
    for raw in [
        "<b>",
        "<img",
        "<script",
        "</pre><script",
        "<i>",
        "<iframe",
        "<u>",
    ] {
        assert!(!html.contains(raw), "{raw} unescaped in {html}");
    }
    assert!(
        html.contains("&lt;script&gt;alert(2)&lt;/script&gt;"),
        "{html}"
    );
    assert!(html.contains("… and 2 more"), "{html}");
    assert!(html.contains("failed") && html.contains("2.0 s") && html.contains("$0.01"));
}

#[test]
fn no_turn_in_progress_says_so_above_the_last_turns() {
    let html = view(None, &[]).into_string();
    assert!(html.contains("No turn in progress."), "{html}");
    assert!(
        html.contains("Last turns") && html.contains("None yet."),
        "{html}"
    );
}
