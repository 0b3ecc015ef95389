use super::*;

#[test]
fn every_known_cmd_is_described_by_the_same_name() {
    // A sample request per cmd, parsed from its minimal JSON: the
    // describe() name must round-trip, so COMMANDS and the enum agree.
    for cmd in Request::COMMANDS {
        let minimal = minimal_json(cmd);
        let req: Request =
            serde_json::from_str(&minimal).unwrap_or_else(|e| panic!("{minimal}: {e}"));
        assert_eq!(req.describe().0, *cmd);
    }
}

/// The smallest valid JSON of each cmd.
pub(crate) fn minimal_json(cmd: &str) -> String {
    let fields = match cmd {
        "send" => r#","to":"a","body":"b""#,
        "operator_msg" => r#","body":"b""#,
        "hook_event" => r#","payload":"{}""#,
        "report_turn" => r#","turn":{"started_at_ms":1,"ended_at_ms":2,"outcome":"ok"}"#,
        "request_egress" => r#","host":"pypi.org:443","reason":"r""#,
        "turn_progress" => r#","progress":{"event":"reply","text":"t"}"#,
        "wake" => r#","from":"x","body":"b""#,
        "recent" => r#","limit":1"#,
        "ask" => r#","question":"q""#,
        "answer" => r#","id":1,"answer":"a""#,
        "remind" => r#","message":"m","timing":{"timing_type":"in_seconds","seconds":1}"#,
        "set_status" => r#","text":"t""#,
        "cancel_loose_end" => r#","kind":"reminder","id":1"#,
        "request_init_config" | "kill" | "start" | "restart" | "update" => r#","name":"a""#,
        "request_apply_commit" => r#","agent":"a","commit_ref":"0123456""#,
        "request_budget" => r#","agent":"a","amount":"1usd/day","reason":"r""#,
        "get_logs" => r#","agent":"a""#,
        "request_schedule_prompt" => r#","targets":["a"],"body":"b","first_fire_at_unix":1"#,
        "cancel_schedule" | "fire_schedule_now" | "edit_schedule" => r#","id":1"#,
        _ => "",
    };
    format!(r#"{{"cmd":"{cmd}"{fields}}}"#)
}

#[test]
fn edit_schedule_tells_an_absent_field_from_a_null_one() {
    let r: Request =
        serde_json::from_str(r#"{"cmd":"edit_schedule","id":1,"description":null}"#).unwrap();
    let Request::EditSchedule { id, edit } = r else {
        panic!("wrong variant")
    };
    assert_eq!(id, 1);
    assert_eq!(edit.description, Some(None));
    assert_eq!(edit.interval_seconds, None);
    assert_eq!(edit.body, None);
}

#[test]
fn a_rollup_response_carries_its_stats_beside_the_kind() {
    let r = Response::ReminderRollup(ReminderStats {
        scheduled: 3,
        delivered: 2,
        pending: 1,
    });
    assert_eq!(
        serde_json::to_string(&r).unwrap(),
        r#"{"kind":"reminder_rollup","scheduled":3,"delivered":2,"pending":1}"#
    );
}

#[test]
fn turn_progress_events_have_these_exact_lines() {
    use crate::wire::live::{PromptLine, TurnProgress};
    use crate::wire::turns::TurnUsage;
    let cases = [
        (
            Request::TurnProgress {
                progress: TurnProgress::Started {
                    started_at_ms: 5,
                    messages: vec![PromptLine {
                        from: "bob".into(),
                        first_line: "hi".into(),
                    }],
                    total_messages: 1,
                },
                dropped: 0,
            },
            r#"{"cmd":"turn_progress","progress":{"event":"started","started_at_ms":5,"messages":[{"from":"bob","first_line":"hi"}],"total_messages":1}}"#,
        ),
        (
            Request::TurnProgress {
                progress: TurnProgress::ToolEnded {
                    call: 2,
                    ok: false,
                    duration_ms: 40,
                },
                dropped: 3,
            },
            r#"{"cmd":"turn_progress","progress":{"event":"tool_ended","call":2,"ok":false,"duration_ms":40},"dropped":3}"#,
        ),
        (
            Request::TurnProgress {
                progress: TurnProgress::Usage {
                    usage: TurnUsage {
                        output_tokens: 7,
                        ..TurnUsage::default()
                    },
                    cost_micro_usd: Some(9),
                    is_final: true,
                },
                dropped: 0,
            },
            r#"{"cmd":"turn_progress","progress":{"event":"usage","usage":{"input_tokens":0,"output_tokens":7,"cache_read_input_tokens":0,"cache_creation_input_tokens":0},"cost_micro_usd":9,"final":true}}"#,
        ),
    ];
    for (request, line) in cases {
        assert_eq!(serde_json::to_string(&request).unwrap(), line);
        assert_eq!(serde_json::from_str::<Request>(line).unwrap(), request);
    }
    // Unknown events are refused by serde, so the daemon answers bad_request.
    let unknown = r#"{"cmd":"turn_progress","progress":{"event":"telepathy"}}"#;
    assert!(serde_json::from_str::<Request>(unknown).is_err());
}

#[test]
fn a_hook_event_is_headless_only_when_it_says_so() {
    let plain: Request = serde_json::from_str(r#"{"cmd":"hook_event","payload":"{}"}"#).unwrap();
    assert!(matches!(
        plain,
        Request::HookEvent {
            headless: false,
            ..
        }
    ));
    let marked = Request::HookEvent {
        payload: "{}".into(),
        headless: true,
    };
    let json = serde_json::to_string(&marked).unwrap();
    assert!(json.contains(r#""headless":true"#), "{json}");
    assert_eq!(serde_json::from_str::<Request>(&json).unwrap(), marked);
    let unmarked = serde_json::to_string(&plain).unwrap();
    assert!(!unmarked.contains("headless"), "{unmarked}");
}
