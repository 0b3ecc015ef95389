use super::*;
use crate::wire::live::{LiveTool, LiveTurn, PromptLine};
use crate::wire::turns::{TurnOutcome, TurnReport, TurnUsage};

fn change(progress: TurnProgress) -> HostResponse {
    HostResponse {
        live: Some(LiveChange {
            agent: Ident::new("alice").unwrap(),
            seq: 1,
            progress: Some(progress),
            ended: false,
            turn: None,
        }),
        ..HostResponse::success()
    }
}

#[test]
fn a_followed_turn_prints_its_messages_tools_reply_and_end_with_escapes_removed() {
    let mut screen = Screen::default();
    assert_eq!(screen.render(&HostResponse::success()), "");
    let started = TurnProgress::Started {
        started_at_ms: 86_400_000,
        messages: vec![PromptLine {
            from: "bob".into(),
            first_line: "fix it\u{1b}[2J".into(),
        }],
        total_messages: 1,
    };
    let mut text = screen.render(&change(started));
    text += &screen.render(&change(TurnProgress::ToolStarted {
        call: 0,
        name: "Bash".into(),
    }));
    text += &screen.render(&change(TurnProgress::ToolEnded {
        call: 0,
        ok: false,
        duration_ms: 1500,
    }));
    text += &screen.render(&change(TurnProgress::Reply {
        text: "done\nall green".into(),
    }));
    text += &screen.render(&change(TurnProgress::Usage {
        usage: TurnUsage {
            output_tokens: 7,
            ..TurnUsage::default()
        },
        cost_micro_usd: Some(20_000),
        is_final: true,
    }));
    let ended = HostResponse {
        live: Some(LiveChange {
            agent: Ident::new("alice").unwrap(),
            seq: 6,
            progress: None,
            ended: true,
            turn: Some(TurnRow {
                id: 12,
                agent: Ident::new("alice").unwrap(),
                report: TurnReport {
                    started_at_ms: 86_400_000,
                    ended_at_ms: 86_403_000,
                    message_ids: vec![1],
                    session_id: None,
                    model: None,
                    outcome: TurnOutcome::Ok,
                    error: None,
                    tools: vec![],
                    usage: None,
                    cost_micro_usd: Some(20_000),
                    num_turns: None,
                    duration_ms: None,
                    duration_api_ms: None,
                },
                metered: None,
            }),
        }),
        ..HostResponse::success()
    };
    text += &screen.render(&ended);
    assert_eq!(
        text,
        "turn started at 1970-01-02T00:00:00Z: 1 message(s)\n  from bob: fix it [2J\n  \
         tool Bash …\n  tool Bash failed (1.5s)\n  says:\n  | done\n  | all green\n  \
         tokens: 7, $0.02\nturn 12 ended 1970-01-02T00:00:03Z: ok, 3.0s, - tokens, $0.02\n"
    );
}

#[test]
fn a_turn_in_progress_when_the_stream_begins_is_printed_whole() {
    let mut screen = Screen::default();
    let turn = LiveTurn {
        seq: 4,
        started_at_ms: 0,
        messages: vec![],
        total_messages: 2,
        tools: vec![LiveTool {
            call: 3,
            name: "Read".into(),
            ok: None,
            duration_ms: None,
        }],
        tools_left_out: 0,
        reply: None,
        usage: None,
        cost_micro_usd: None,
        dropped: 2,
    };
    let text = screen.render(&HostResponse {
        live_turn: Some(turn),
        ..HostResponse::success()
    });
    assert_eq!(
        text,
        "turn in progress at 1970-01-01T00:00:00Z: 2 message(s)\n  tool Read …\n  (2 events dropped)\n"
    );
    // A later end of that call knows its name.
    let ended = screen.render(&change(TurnProgress::ToolEnded {
        call: 3,
        ok: true,
        duration_ms: 100,
    }));
    assert_eq!(ended, "  tool Read ok (0.1s)\n");
}
