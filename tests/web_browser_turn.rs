//! The agent page's live turn in a real browser (the browser tier of
//! `tests/web_browser.rs`: Debian's Chromium through chromium-driver,
//! against a real daemon with `--driver fake`): progress events sent on the
//! agent's socket as `hive-agent run` sends them appear on the open page
//! without a reload — the prompt's sender and first line, a tool call
//! running then done, Claude's text (an agent's markup shown as text) — and
//! the turn's report moves it to the last turns. Saves
//! `target/tmp/web-screenshots/agent-turn.png`.

#![allow(clippy::disallowed_methods)] // test code runs the binaries under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/browser/mod.rs"]
mod browser;
#[path = "support/common/mod.rs"]
mod common;

use std::path::Path;
use std::time::Duration;

use browser::{Bridge, Driver, text, until_text};
use common::{Conn, Daemon, Launch};
use fantoccini::Client;
use serde_json::json;

const AGENT_OK: &str = r#"{"kind":"ok"}"#;
const WAIT: Duration = Duration::from_secs(10);

fn progress(conn: &mut Conn, event: serde_json::Value) {
    let line = json!({"cmd": "turn_progress", "progress": event}).to_string();
    assert_eq!(conn.ask(&line), AGENT_OK);
}

async fn screenshot(client: &Client, name: &str) {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    let png = client.screenshot().await.unwrap();
    std::fs::write(dir.join(format!("{name}.png")), png).unwrap();
}

#[tokio::test(flavor = "multi_thread")]
async fn the_agent_page_shows_the_turn_in_progress_live_and_then_its_journal_row() {
    let daemon = Daemon::start(Launch::ActivatedWithWeb);
    assert_eq!(
        daemon.request(r#"{"cmd":"spawn","name":"alice"}"#),
        r#"{"version":1,"ok":true}"#
    );
    let bridge = Bridge::to(&daemon.web_socket());
    let driver = Driver::start();
    let client = driver.session().await;
    client.goto(&bridge.url("/agent/alice")).await.unwrap();
    until_text(&client, "#live", WAIT, |t| t == "live").await;
    assert_eq!(text(&client, "#no-turn").await, "No turn in progress.");
    client
        .execute("window.notReloaded = true; return true", vec![])
        .await
        .unwrap();

    let mut alice = Conn::open(&daemon.agent_socket("alice"));
    let sneaky = "<script>document.title='owned'</script><b>bold?</b>";
    progress(
        &mut alice,
        json!({"event": "started", "started_at_ms": 1_796_040_000_000_i64, "total_messages": 2,
               "messages": [{"from": "bob", "first_line": "please fix the flaky test"}]}),
    );
    progress(
        &mut alice,
        json!({"event": "tool_started", "call": 0, "name": "Bash"}),
    );
    progress(
        &mut alice,
        json!({"event": "tool_ended", "call": 0, "ok": true, "duration_ms": 2300}),
    );
    progress(
        &mut alice,
        json!({"event": "tool_started", "call": 1, "name": "mcp__hyperhive__send"}),
    );
    progress(
        &mut alice,
        json!({"event": "reply", "text": format!("Found it: a race.\n{sneaky}")}),
    );
    progress(
        &mut alice,
        json!({"event": "usage", "usage": {"input_tokens": 1200, "output_tokens": 80}}),
    );
    until_text(&client, "#turn-tools", WAIT, |t| {
        t.contains("mcp__hyperhive__send running")
    })
    .await;
    let tools = text(&client, "#turn-tools").await;
    assert!(tools.contains("Bash ok 2.3 s"), "{tools}");
    assert_eq!(
        text(&client, "ul.prompt").await,
        "bob: please fix the flaky test\n… and 1 more"
    );
    assert_eq!(
        text(&client, "#turn-reply").await,
        format!("Found it: a race.\n{sneaky}")
    );
    until_text(&client, "#turn-live", WAIT, |t| {
        t.contains("1,280 tokens so far")
    })
    .await;
    // The agent's text is text: no element made of it, no script run.
    let injected = client
        .execute(
            "return document.querySelectorAll('#turn-view script, #turn-view b').length",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(injected, json!(0));
    assert_eq!(client.title().await.unwrap(), "alice · hive");
    screenshot(&client, "agent-turn").await;

    // The report ends it: the view moves the turn to the journal's rows.
    let turn = json!({"cmd": "report_turn", "turn": {
        "started_at_ms": 1_796_040_000_000_i64, "ended_at_ms": 1_796_040_004_000_i64,
        "outcome": "ok", "message_ids": [1, 2],
        "tools": [{"name": "Bash", "ok": true, "duration_ms": 2300},
                  {"name": "mcp__hyperhive__send", "ok": false, "duration_ms": 10}],
        "usage": {"input_tokens": 1200, "output_tokens": 90}, "cost_micro_usd": 31_000}});
    assert_eq!(alice.ask(&turn.to_string()), AGENT_OK);
    until_text(&client, "#no-turn", WAIT, |t| t == "No turn in progress.").await;
    let rows = text(&client, "#last-turns tbody").await;
    assert!(
        rows.contains("ok") && rows.contains("1,290") && rows.contains("$0.03"),
        "{rows}"
    );
    assert!(rows.contains("Bash, mcp__hyperhive__send!"), "{rows}");
    let kept = client
        .execute("return window.notReloaded === true", vec![])
        .await
        .unwrap();
    assert_eq!(kept, json!(true), "the page was reloaded");
    client.close().await.unwrap();
}
