//! The dashboard in a real browser: Debian's Chromium through
//! chromium-driver, against a real daemon (`--driver fake`) started the
//! README's way (`systemd-socket-activate … --fdname=host:web`), reached
//! through a loopback bridge to web.sock. Each test saves screenshots of the
//! pages it visits under `target/tmp/web-screenshots/`.

#![allow(clippy::disallowed_methods)] // test code runs the binaries under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/browser/mod.rs"]
mod browser;
#[path = "support/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::process::Command;
use std::time::Duration;

use browser::{Bridge, Driver, text, until_text};
use common::{Conn, Daemon, Launch};
use fantoccini::{Client, Locator};

/// Where the screenshots go (an artifact of the run).
pub fn screenshot_dir() -> PathBuf {
    let dir = Path::new(env!("CARGO_TARGET_TMPDIR")).join("web-screenshots");
    std::fs::create_dir_all(&dir).unwrap();
    dir
}

pub async fn screenshot(client: &Client, name: &str) {
    let png = client.screenshot().await.unwrap();
    std::fs::write(screenshot_dir().join(format!("{name}.png")), png).unwrap();
}

/// An agent socket's plain success.
const AGENT_OK: &str = r#"{"kind":"ok"}"#;

/// A daemon with the dashboard activated by name, these agents spawned,
/// a browser, and the bridge to web.sock.
struct Hive {
    daemon: Daemon,
    bridge: Bridge,
    client: Client,
    _driver: Driver,
}

impl Hive {
    async fn with(agents: &[&str]) -> Self {
        let daemon = Daemon::start(Launch::ActivatedWithWeb);
        for a in agents {
            let answer = daemon.request(&format!(r#"{{"cmd":"spawn","name":"{a}"}}"#));
            assert_eq!(answer, r#"{"version":1,"ok":true}"#);
        }
        let bridge = Bridge::to(&daemon.web_socket());
        let driver = Driver::start();
        let client = driver.session().await;
        Self {
            daemon,
            bridge,
            client,
            _driver: driver,
        }
    }

    async fn open(&self, path: &str) {
        self.client.goto(&self.bridge.url(path)).await.unwrap();
    }

    /// `hivectl ARGS` against this daemon: (exit ok, stdout + stderr).
    fn hivectl(&self, args: &[&str]) -> (bool, String) {
        let out = Command::new(env!("CARGO_BIN_EXE_hivectl"))
            .env("HIVE_SOCKET", self.daemon.socket())
            .args(args)
            .output()
            .unwrap();
        let text = format!(
            "{}{}",
            String::from_utf8_lossy(&out.stdout),
            String::from_utf8_lossy(&out.stderr)
        );
        (out.status.success(), text)
    }

    async fn close(self) {
        self.client.close().await.unwrap();
    }
}

async fn live(client: &Client) {
    until_text(client, "#live", Duration::from_secs(10), |t| t == "live").await;
}

/// Mark the page; [`assert_not_reloaded`] fails if a reload lost the mark.
async fn mark_page(client: &Client) {
    client
        .execute("window.notReloaded = true; return true", vec![])
        .await
        .unwrap();
}

async fn assert_not_reloaded(client: &Client) {
    let kept = client
        .execute("return window.notReloaded === true", vec![])
        .await
        .unwrap();
    assert_eq!(kept, serde_json::json!(true), "the page was reloaded");
}

/// Wait (up to 5 s: the machine may be loaded) until `script` returns true
/// in the page.
async fn until_true(client: &Client, script: &str) {
    let start = std::time::Instant::now();
    while client.execute(script, vec![]).await.unwrap() != serde_json::json!(true) {
        assert!(
            start.elapsed() < Duration::from_secs(5),
            "never true within 5 s: {script}"
        );
        tokio::time::sleep(Duration::from_millis(20)).await;
    }
}

#[tokio::test(flavor = "multi_thread")]
async fn the_roster_shows_and_a_stop_by_hivectl_changes_the_row_within_a_second() {
    let hive = Hive::with(&["alice", "bob"]).await;
    hive.hivectl(&["set-parent", "bob", "alice"]);
    let mut alice = Conn::open(&hive.daemon.agent_socket("alice"));
    let sneaky = "<script>document.title='owned'</script><b>bold?</b>";
    let set = serde_json::json!({"cmd": "set_status", "text": sneaky}).to_string();
    assert_eq!(alice.ask(&set), AGENT_OK);

    hive.open("/").await;
    live(&hive.client).await;
    assert_eq!(text(&hive.client, "#row-alice .state").await, "running");
    assert_eq!(text(&hive.client, "#row-bob .state").await, "running");
    // The status text is text: shown literally, no element made of it.
    assert_eq!(
        text(&hive.client, "#row-alice td.status span").await,
        sneaky
    );
    no_injected_markup(&hive.client).await;
    // bob sits one level under alice in the tree.
    let depth = |name: &'static str| {
        let client = hive.client.clone();
        async move {
            let row = client
                .find(Locator::Css(&format!("#row-{name}")))
                .await
                .unwrap();
            let class = row.attr("class").await.unwrap().unwrap();
            class
                .strip_prefix("depth-")
                .unwrap()
                .parse::<u32>()
                .unwrap()
        }
    };
    assert_eq!(depth("bob").await, depth("alice").await + 1);
    screenshot(&hive.client, "roster").await;

    mark_page(&hive.client).await;
    let (ok, out) = hive.hivectl(&["stop", "--graceful", "bob"]);
    assert!(ok, "{out}");
    let took = until_text(
        &hive.client,
        "#row-bob .state",
        Duration::from_secs(1),
        |t| t == "stopped",
    )
    .await;
    eprintln!("row changed {took:?} after hivectl stop returned");
    // A status set now arrives live, and escaped by the same template.
    let set = serde_json::json!({"cmd": "set_status", "text": "<i>live</i> too"}).to_string();
    assert_eq!(alice.ask(&set), AGENT_OK);
    until_text(
        &hive.client,
        "#row-alice td.status span",
        Duration::from_secs(1),
        |t| t == "<i>live</i> too",
    )
    .await;
    no_injected_markup(&hive.client).await;
    assert_not_reloaded(&hive.client).await;
    // The live row kept its place in the tree.
    assert_eq!(depth("bob").await, depth("alice").await + 1);
    // A row's own button (pause: no confirmation) acts through the page's
    // one token-carrying form, and hivectl sees it.
    hive.client
        .find(Locator::Css("#row-alice button[formaction$='/pause']"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until_text(
        &hive.client,
        "#row-alice .state.paused",
        Duration::from_secs(10),
        |t| t == "paused",
    )
    .await;
    let (_, status) = hive.hivectl(&["--json", "status"]);
    assert!(status.contains(r#""paused":true"#), "{status}");

    hive.open("/agent/bob").await;
    live(&hive.client).await;
    assert_eq!(text(&hive.client, "h1").await, "bob");
    screenshot(&hive.client, "agent").await;
    hive.close().await;
}

/// No element was made of an agent's text, and no script of it ran.
async fn no_injected_markup(client: &Client) {
    let injected = client
        .execute(
            "return document.querySelectorAll('#roster script, #roster b, #roster i').length",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(injected, serde_json::json!(0));
    assert_eq!(client.title().await.unwrap(), "Roster · hive");
}

#[tokio::test(flavor = "multi_thread")]
async fn approving_in_the_page_runs_the_action_once_and_hivectl_sees_it() {
    let hive = Hive::with(&[]).await;
    let (ok, out) = hive.hivectl(&["request-spawn", "carol"]);
    assert!(ok, "{out}");
    hive.open("/approvals").await;
    let approve = hive
        .client
        .find(Locator::Css("tr[id^=approval-] button"))
        .await
        .unwrap();
    assert_eq!(approve.text().await.unwrap(), "approve");
    screenshot(&hive.client, "approvals").await;
    approve.click().await.unwrap();
    // The confirmation, answered yes.
    hive.client.accept_alert().await.unwrap();
    until_text(&hive.client, "h2", Duration::from_secs(10), |t| {
        t == "Pending (0)"
    })
    .await;

    let (ok, pending) = hive.hivectl(&["--json", "pending"]);
    assert!(ok, "{pending}");
    assert!(pending.contains(r#""status":"approved""#), "{pending}");
    let (_, list) = hive.hivectl(&["--json", "list"]);
    assert_eq!(list.matches("\"carol\"").count(), 1, "{list}");
    // A second approve (a double click, a replayed form) runs nothing.
    let (ok, again) = hive.hivectl(&["approve", "1"]);
    assert!(!ok && again.contains("already approved"), "{again}");
    hive.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_message_sent_from_the_page_reaches_the_agent_and_its_reply_shows() {
    let hive = Hive::with(&["alice"]).await;
    hive.open("/inbox").await;
    let body = hive.client.find(Locator::Css("#send-body")).await.unwrap();
    body.send_keys("please rebase <now>").await.unwrap();
    hive.client
        .find(Locator::Css("#send button"))
        .await
        .unwrap()
        .click()
        .await
        .unwrap();
    until_text(&hive.client, "h1", Duration::from_secs(10), |t| {
        t == "Inbox"
    })
    .await;

    let mut alice = Conn::open(&hive.daemon.agent_socket("alice"));
    let got = alice.recv(5, 10);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["from"], "operator");
    assert_eq!(got[0]["body"], "please rebase <now>");
    let id = got[0]["id"].as_i64().expect("a message id");
    let reply = serde_json::json!({
        "cmd": "send", "to": "operator", "body": "done, <i>rebased</i>", "in_reply_to": id
    });
    assert_eq!(
        alice.ask(&reply.to_string()),
        r#"{"kind":"ok","delivered":1}"#
    );

    hive.open("/inbox").await;
    assert_eq!(
        text(&hive.client, "#messages li p.body").await,
        "done, <i>rebased</i>"
    );
    let meta = text(&hive.client, "#messages li .meta").await;
    assert!(meta.contains(&format!("reply to #{id}")), "{meta}");
    screenshot(&hive.client, "inbox").await;
    hive.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_question_is_answered_with_its_option_button() {
    let hive = Hive::with(&["alice"]).await;
    let mut alice = Conn::open(&hive.daemon.agent_socket("alice"));
    let ask = serde_json::json!({
        "cmd": "ask", "question": "Deploy to prod?", "options": ["yes", "not today"]
    });
    let queued = alice.ask(&ask.to_string());
    assert!(queued.contains("question_queued"), "{queued}");
    hive.open("/questions").await;
    screenshot(&hive.client, "questions").await;
    let buttons = hive
        .client
        .find_all(Locator::Css("section.question form button"))
        .await
        .unwrap();
    assert_eq!(buttons[1].text().await.unwrap(), "not today");
    buttons[1].click().await.unwrap();
    until_text(
        &hive.client,
        "#no-questions",
        Duration::from_secs(10),
        |t| t == "No open questions.",
    )
    .await;
    let (_, open) = hive.hivectl(&["--json", "questions"]);
    assert!(!open.contains("Deploy to prod?"), "{open}");
    hive.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn a_form_posted_from_another_site_is_refused_even_with_the_token() {
    let hive = Hive::with(&["alice"]).await;
    hive.open("/").await;
    let token = hive
        .client
        .find(Locator::Css("input[name=csrf]"))
        .await
        .unwrap()
        .attr("value")
        .await
        .unwrap()
        .unwrap();
    // The dashboard's own page, without the token: refused.
    let status = hive
        .client
        .execute(
            "return fetch('/agent/alice/stop', {method: 'POST', \
             headers: {'Content-Type': 'application/x-www-form-urlencoded'}, body: 'back=/'})\
             .then(r => r.status)",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(status, serde_json::json!(403));
    // Another site posting a form that even carries the stolen token.
    let evil = browser::site(format!(
        "<!doctype html><title>evil</title><form id=f method=post action='{}'>\
         <input name=csrf value={token}></form>",
        hive.bridge.url("/agent/alice/stop")
    ));
    hive.client.goto(&evil).await.unwrap();
    hive.client
        .execute("document.getElementById('f').submit(); return 1", vec![])
        .await
        .unwrap();
    until_text(&hive.client, "p.error", Duration::from_secs(10), |t| {
        t.starts_with("refused")
    })
    .await;
    screenshot(&hive.client, "refused").await;
    let rows = hive.daemon.request(r#"{"cmd":"agent_status"}"#);
    assert!(rows.contains(r#""name":"alice","running":true"#), "{rows}");
    hive.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn an_agent_waiting_on_a_person_is_flagged_and_new_and_destroyed_agents_come_and_go_live() {
    let hive = Hive::with(&["alice", "bob"]).await;
    hive.open("/").await;
    live(&hive.client).await;
    assert_eq!(text(&hive.client, "#count-waiting").await, "0");
    mark_page(&hive.client).await;

    // alice's Claude Code hook reports a permission prompt.
    let mut alice = Conn::open(&hive.daemon.agent_socket("alice"));
    let payload = r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}"#;
    let hook = serde_json::json!({"cmd": "hook_event", "payload": payload}).to_string();
    assert_eq!(alice.ask(&hook), AGENT_OK);
    until_text(
        &hive.client,
        "#row-alice .tag.needs",
        Duration::from_secs(2),
        |t| t == "needs you: permission: Claude needs your permission to use Bash",
    )
    .await;
    until_text(
        &hive.client,
        "#count-waiting",
        Duration::from_secs(2),
        |t| t == "1",
    )
    .await;
    screenshot(&hive.client, "needs-you").await;

    // A spawn by hivectl adds its row; a destroy takes bob's away.
    let (ok, out) = hive.hivectl(&["spawn", "carol"]);
    assert!(ok, "{out}");
    until_text(
        &hive.client,
        "#row-carol .state",
        Duration::from_secs(2),
        |t| t == "running",
    )
    .await;
    // Given a parent, it moves under it, one level deeper.
    let (ok, out) = hive.hivectl(&["set-parent", "carol", "alice"]);
    assert!(ok, "{out}");
    until_true(
        &hive.client,
        "var c = document.getElementById('row-carol'), a = document.getElementById('row-alice'); \
         return c.previousElementSibling === a \
           && c.className === 'depth-' + (parseInt(a.className.slice(6), 10) + 1)",
    )
    .await;
    let (ok, out) = hive.hivectl(&["destroy", "bob"]);
    assert!(ok, "{out}");
    until_true(
        &hive.client,
        "return document.getElementById('row-bob') === null",
    )
    .await;
    // The summary counts the rows now on the page (the manager's included).
    let rows = hive
        .client
        .execute(
            "return document.querySelectorAll('#roster tbody tr').length",
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(text(&hive.client, "#count-agents").await, rows.to_string());
    assert!(text(&hive.client, "#row-carol").await.contains("carol"));
    assert_not_reloaded(&hive.client).await;
    hive.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn the_swarm_page_of_a_hive_alone_lists_its_agents_under_local_and_follows_them() {
    let hive = Hive::with(&["alice", "bob"]).await;
    hive.open("/swarm").await;
    live(&hive.client).await;
    // Ids with `@` cannot be CSS-selected plainly: read through the DOM.
    let state = |id: &'static str| {
        let client = hive.client.clone();
        async move {
            let script = format!(
                "var r = document.getElementById('{id}'); \
                 return r ? r.querySelector('.state').textContent : null"
            );
            client.execute(&script, vec![]).await.unwrap()
        }
    };
    assert_eq!(state("row-alice@local").await, serde_json::json!("running"));
    let (ok, out) = hive.hivectl(&["stop", "alice"]);
    assert!(ok, "{out}");
    let (ok, out) = hive.hivectl(&["destroy", "bob"]);
    assert!(ok, "{out}");
    until_true(
        &hive.client,
        "var a = document.getElementById('row-alice@local'); \
         return a !== null && a.querySelector('.state').textContent === 'stopped' \
         && document.getElementById('row-bob@local') === null",
    )
    .await;
    screenshot(&hive.client, "swarm").await;
    hive.close().await;
}

#[tokio::test(flavor = "multi_thread")]
async fn questions_and_inbox_messages_arrive_live_and_a_half_typed_answer_survives() {
    let hive = Hive::with(&["alice"]).await;
    let mut alice = Conn::open(&hive.daemon.agent_socket("alice"));
    let ask = |q: &str| serde_json::json!({"cmd": "ask", "question": q}).to_string();
    let queued = alice.ask(&ask("First?"));
    let first: serde_json::Value = serde_json::from_str(&queued).unwrap();
    let first = first["id"].as_i64().unwrap_or_else(|| panic!("{queued}"));

    hive.open("/questions").await;
    live(&hive.client).await;
    mark_page(&hive.client).await;
    let field = hive
        .client
        .find(Locator::Css(&format!("#answer-{first}")))
        .await
        .unwrap();
    field.send_keys("half a thou").await.unwrap();
    // A second question arrives; the first keeps what was typed.
    let queued = alice.ask(&ask("Second <b>?</b>"));
    let second: serde_json::Value = serde_json::from_str(&queued).unwrap();
    let second = second["id"].as_i64().unwrap();
    until_true(
        &hive.client,
        &format!("return document.getElementById('question-{second}') !== null"),
    )
    .await;
    // Answered elsewhere: it leaves the page.
    let (ok, out) = hive.hivectl(&["answer", &second.to_string(), "no"]);
    assert!(ok, "{out}");
    until_true(
        &hive.client,
        &format!("return document.getElementById('question-{second}') === null"),
    )
    .await;
    let typed = hive
        .client
        .execute(
            &format!("return document.getElementById('answer-{first}').value"),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(typed, serde_json::json!("half a thou"));
    no_injected_elements(&hive.client, "#questions b").await;
    assert_not_reloaded(&hive.client).await;

    // The inbox: an agent's message shows at the top, as text.
    hive.open("/inbox").await;
    live(&hive.client).await;
    mark_page(&hive.client).await;
    let send = serde_json::json!({"cmd": "send", "to": "operator", "body": "hello <b>you</b>"});
    assert_eq!(
        alice.ask(&send.to_string()),
        r#"{"kind":"ok","delivered":1}"#
    );
    until_text(
        &hive.client,
        "#messages li:first-child p.body",
        Duration::from_secs(2),
        |t| t == "hello <b>you</b>",
    )
    .await;
    no_injected_elements(&hive.client, "#messages b").await;
    assert_not_reloaded(&hive.client).await;
    hive.close().await;
}

/// No element matches `css` (an agent's markup stayed text).
async fn no_injected_elements(client: &Client, css: &str) {
    let n = client
        .execute(
            &format!("return document.querySelectorAll('{css}').length"),
            vec![],
        )
        .await
        .unwrap();
    assert_eq!(n, serde_json::json!(0), "{css}");
}

#[tokio::test(flavor = "multi_thread")]
async fn the_usage_page_charts_what_each_agent_spent_per_day_and_per_agent() {
    let hive = Hive::with(&["alice", "bob"]).await;
    // Metered requests on two days, alice spending most (written into the
    // store: the daemon's clock cannot be moved back a day).
    for (agent, at_ms, micro) in [
        ("alice", 1_796_040_000_000_i64, 1_200_000),
        ("alice", 1_796_126_400_000, 600_000),
        ("bob", 1_796_126_400_000, 250_000),
    ] {
        common::meter_into_store(&hive.daemon.state_dir(), agent, at_ms, (1000, 200), micro);
    }
    // A turn's report: shown as reported, never in the spend.
    let turn = serde_json::json!({"cmd": "report_turn", "turn": {
        "started_at_ms": 1_796_040_000_000_i64, "ended_at_ms": 1_796_040_002_000_i64,
        "outcome": "ok", "usage": {"input_tokens": 99}, "cost_micro_usd": 9_000_000}});
    let mut conn = Conn::open(&hive.daemon.agent_socket("alice"));
    assert_eq!(conn.ask(&turn.to_string()), AGENT_OK);
    let (ok, out) = hive.hivectl(&["budget", "set", "alice", "2usd/day"]);
    assert!(ok, "{out}");
    hive.open("/usage?since=all").await;
    screenshot(&hive.client, "usage").await;
    let budget = hive
        .client
        .find(Locator::Css("table.rows td"))
        .await
        .unwrap();
    assert_eq!(budget.text().await.unwrap(), "alice and under");
    let total = hive.client.find(Locator::Css("p.total")).await.unwrap();
    assert_eq!(
        total.text().await.unwrap(),
        "The hive: $2.05 in 3 model requests, 3,600 tokens (metered); turns reported: 1"
    );
    // Drawn, not only present: the bars' rendered widths.
    let script = "return [...document.querySelectorAll('svg.chart rect.bar')]\
                  .map(r => r.getBoundingClientRect().width)";
    let widths = hive.client.execute(script, vec![]).await.unwrap();
    let widths: Vec<f64> = serde_json::from_value(widths).unwrap();
    assert_eq!(widths.len(), 4, "two days, two agents: {widths:?}");
    assert!(widths[2] > widths[3] * 2.0 && widths[3] > 0.0, "{widths:?}");
    hive.close().await;
}
