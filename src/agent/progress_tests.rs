//! The live view's feed from a stream: what is sent for each event, the
//! caps and the cleaning applied before sending, and the queue that drops
//! (and counts) rather than waits.

use serde_json::json;

use super::*;
use crate::wire::agent::DeliveredMessage;

fn drain(rx: &mut mpsc::Receiver<Item>) -> Vec<TurnProgress> {
    let mut out = Vec::new();
    while let Ok(item) = rx.try_recv() {
        out.push(item.progress);
    }
    out
}

#[tokio::test]
async fn tool_calls_text_and_usage_become_progress_events_without_the_tools_input() {
    let (progress, mut rx) = Progress::queue();
    let mut t = Tracker::new(progress);
    let usage = json!({"input_tokens": 10, "output_tokens": 2});
    t.observe(
        &json!({"type":"assistant","message":{"id":"m1","usage":usage,"content":[
            {"type":"text","text":"Let me look.\u{1b}[31m"},
            {"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"cat /secret"}}
        ]}}),
    );
    // The same message again (stream-json repeats it per block): counted once.
    t.observe(&json!({"type":"assistant","message":{"id":"m1","usage":usage,"content":[]}}));
    t.observe(&json!({"type":"user","message":{"content":[
        {"type":"tool_result","tool_use_id":"tu1","is_error":true,"content":"no"}
    ]}}));
    t.observe(&json!({"type":"result","total_cost_usd":0.25,"usage":{"input_tokens":30,"output_tokens":9}}));
    let sent = drain(&mut rx);
    let text = format!("{sent:?}");
    assert!(!text.contains("secret"), "{text}");
    assert_eq!(
        sent,
        [
            TurnProgress::Usage {
                usage: TurnUsage {
                    input_tokens: 10,
                    output_tokens: 2,
                    ..TurnUsage::default()
                },
                cost_micro_usd: None,
                is_final: false,
            },
            TurnProgress::Reply {
                text: "Let me look.[31m".into()
            },
            TurnProgress::ToolStarted {
                call: 0,
                name: "Bash".into()
            },
            TurnProgress::ToolEnded {
                call: 0,
                ok: false,
                duration_ms: match &sent[3] {
                    TurnProgress::ToolEnded { duration_ms, .. } => *duration_ms,
                    other => panic!("{other:?}"),
                },
            },
            TurnProgress::Usage {
                usage: TurnUsage {
                    input_tokens: 30,
                    output_tokens: 9,
                    ..TurnUsage::default()
                },
                cost_micro_usd: Some(250_000),
                is_final: true,
            },
        ]
    );
}

#[tokio::test]
async fn a_long_reply_and_long_names_are_cut_to_the_caps_the_daemon_enforces() {
    let (progress, mut rx) = Progress::queue();
    let mut t = Tracker::new(progress);
    let long = "é".repeat(MAX_REPLY);
    t.observe(&json!({"type":"assistant","message":{"content":[
        {"type":"text","text":long},
        {"type":"tool_use","id":"a","name":"n".repeat(500)}
    ]}}));
    for p in drain(&mut rx) {
        crate::hive::arguments::check_turn_progress(&p).unwrap();
    }
    let messages: Vec<DeliveredMessage> = (0..30)
        .map(|i| DeliveredMessage {
            from: format!("bob{i}\n"),
            body: format!("\n\n  {}\nsecond line", "z".repeat(1000)),
            id: i,
            redelivered: false,
            in_reply_to: None,
        })
        .collect();
    let s = started(&messages, 5);
    crate::hive::arguments::check_turn_progress(&s).unwrap();
    let TurnProgress::Started {
        messages: lines,
        total_messages,
        ..
    } = s
    else {
        panic!()
    };
    assert_eq!((lines.len(), total_messages), (MAX_PROMPT_MESSAGES, 30));
    assert_eq!(lines[0].from, "bob0");
    assert_eq!(lines[0].first_line, "z".repeat(MAX_FIRST_LINE));
}

#[tokio::test]
async fn a_full_queue_drops_events_and_counts_them_for_the_next_one() {
    let (progress, mut rx) = Progress::queue();
    for n in 0..QUEUE + 5 {
        progress.send(TurnProgress::Reply {
            text: n.to_string(),
        });
    }
    assert_eq!(drain(&mut rx).len(), QUEUE);
    progress.send(TurnProgress::Reply {
        text: "next".into(),
    });
    assert_eq!(rx.try_recv().unwrap().dropped, 5);
    // The turn's end resets the count, and what was queued is stale.
    progress.send(TurnProgress::Reply {
        text: "late".into(),
    });
    assert_eq!(progress.finish().await, 5);
    let late = rx.try_recv().unwrap();
    assert_ne!(
        late.generation,
        progress.shared.generation.load(Ordering::SeqCst)
    );
}

#[tokio::test]
async fn a_daemon_that_never_answers_does_not_hold_the_turn() {
    // A socket that accepts and never answers.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.sock");
    let listener = tokio::net::UnixListener::bind(&path).unwrap();
    tokio::spawn(async move {
        let mut held = Vec::new();
        while let Ok((conn, _)) = listener.accept().await {
            held.push(conn);
        }
    });
    let progress = Progress::start(AgentSocket::new(&path));
    let started = Instant::now();
    for n in 0..1000 {
        progress.send(TurnProgress::Reply {
            text: n.to_string(),
        });
    }
    progress.finish().await;
    assert!(
        started.elapsed() < FINISH_WAIT + Duration::from_millis(500),
        "{:?}",
        started.elapsed()
    );
}
