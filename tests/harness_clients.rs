//! `hive-agent` driven by real clients no one here wrote: the Python `mcp`
//! SDK, and the real Claude Code CLI (npm `@anthropic-ai/claude-code`) —
//! `claude mcp add`/`list`, and `claude -p` in the turn loop, offline
//! against a loopback stand-in of the Messages API whose scripted reply
//! calls `mcp__hyperhive__send`.
//!
//! The clients are installed by `tests/clients/install` (a venv and an npm
//! prefix in a cache directory), which `tests/run` calls before running
//! these with `--ignored`; the variables `HIVE_TEST_PYTHON` and
//! `HIVE_TEST_CLAUDE` name them. Ignored by a plain `cargo test`, so the
//! fast tier needs neither Python packages nor Node; run alone with
//! `eval "$(tests/clients/install)" && cargo test --test harness_clients -- --ignored`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test

#[path = "support/agent_rig/mod.rs"]
mod agent_rig;
#[path = "support/clients.rs"]
mod clients;
#[path = "support/common/mod.rs"]
mod common;

use std::path::Path;
use std::process::{Command, Stdio};
use std::time::Duration;

use agent_rig::{AGENT_BIN, Harness, HarnessOptions, agent_field, eventually, message_states};
use clients::{GATEWAY_FIXTURES, StandIn, clients_dir, tool};
use common::{Conn, daemon_with};
use serde_json::Value;

fn python_client(socket: &Path) -> Value {
    let out = Command::new(tool("HIVE_TEST_PYTHON"))
        .arg(clients_dir().join("mcp_client.py"))
        .arg(AGENT_BIN)
        .arg(socket)
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).unwrap()
}

#[test]
#[ignore = "needs the Python mcp SDK: tests/clients/install"]
fn the_python_mcp_sdk_lists_the_agents_tools_and_a_refusal_comes_back_as_a_tool_error() {
    let d = daemon_with(&["alice"]);
    let v = python_client(&d.agent_socket("alice"));
    assert_eq!(v["server"], "hyperhive");
    // An agent socket, no HIVE_TOOL_GROUPS: the seed's AGENT_DEFAULT
    // (execution is the other server).
    assert_eq!(
        v["tools"],
        serde_json::json!([
            "send",
            "recv",
            "ask",
            "answer",
            "set_status",
            "get_agent_meta",
            "request_egress",
            "get_loose_ends",
            "cancel_loose_end",
            "remind",
            "request_next_turn"
        ])
    );
    assert_eq!(v["schemas"]["send"], serde_json::json!(["to", "body"]));
    let calls = &v["calls"];
    assert_eq!(
        calls["send_operator"],
        serde_json::json!([false, "ok: delivered to 1 inbox(es)"])
    );
    assert_eq!(calls["send_unknown"][0], true);
    // The refusal's words and its code, so the model can tell a wrong name
    // from a full inbox.
    let unknown = calls["send_unknown"][1].as_str().unwrap();
    assert!(unknown.contains("nobody-here"), "{unknown}");
    assert!(
        unknown.ends_with("[code: unknown_recipient; change the request]"),
        "{unknown}"
    );
    assert_eq!(calls["status_missing_text"][0], true);
    assert!(
        calls["status_missing_text"][1]
            .as_str()
            .unwrap()
            .contains("text")
    );
    assert_eq!(calls["not_offered"][0], true);
    let inbox = d.request(r#"{"cmd":"inbox","limit":5}"#);
    assert!(inbox.contains("hello from the python sdk"), "{inbox}");
}

#[test]
#[ignore = "needs the Python mcp SDK: tests/clients/install"]
fn on_the_manager_socket_the_python_sdk_sees_the_managers_tools() {
    let d = daemon_with(&[]);
    let v = python_client(&d.manager_socket());
    let tools: Vec<&str> = v["tools"]
        .as_array()
        .unwrap()
        .iter()
        .map(|t| t.as_str().unwrap())
        .collect();
    for name in [
        "kill",
        "request_apply_commit",
        "list_schedules",
        "get_logs",
        "list_containers",
    ] {
        assert!(tools.contains(&name), "{name} missing from {tools:?}");
    }
}

#[test]
#[ignore = "needs the Claude Code CLI: tests/clients/install"]
fn claude_mcp_add_then_list_reports_hyperhive_connected() {
    let d = daemon_with(&["alice"]);
    let home = tempfile::tempdir().unwrap();
    let claude = tool("HIVE_TEST_CLAUDE");
    let run = |args: &[&str]| {
        Command::new(&claude)
            .args(args)
            .current_dir(home.path())
            .env("HOME", home.path())
            .env_remove("CLAUDE_CONFIG_DIR")
            .output()
            .unwrap()
    };
    let socket = d.agent_socket("alice");
    let add = run(&[
        "mcp",
        "add",
        "hyperhive",
        "--",
        AGENT_BIN,
        "mcp",
        "--socket",
        socket.to_str().unwrap(),
    ]);
    assert!(
        add.status.success(),
        "{}",
        String::from_utf8_lossy(&add.stderr)
    );
    let list = run(&["mcp", "list"]);
    let text = String::from_utf8_lossy(&list.stdout);
    assert!(
        text.lines()
            .any(|l| l.starts_with("hyperhive:") && l.contains("Connected")),
        "{text}"
    );
}

/// The real Claude Code CLI in alice's turn loop, its API at `api_url`,
/// given one message from bob: waits until the turn is acked. Answers the
/// harness (the caller keeps it alive) and the operator's inbox.
fn real_cli_turn(d: &common::Daemon, dir: &Path, api_url: &str) -> (Harness, String) {
    real_cli_turn_with_key(d, dir, api_url, "sk-stand-in")
}

/// [`real_cli_turn`] with `key` as the CLI's API key.
fn real_cli_turn_with_key(
    d: &common::Daemon,
    dir: &Path,
    api_url: &str,
    key: &str,
) -> (Harness, String) {
    let claude = tool("HIVE_TEST_CLAUDE");
    let env = [
        ("ANTHROPIC_BASE_URL", api_url.to_owned()),
        ("ANTHROPIC_API_KEY", key.to_owned()),
        ("CLAUDE_CODE_MAX_RETRIES", "0".to_owned()),
        ("DISABLE_AUTOUPDATER", "1".to_owned()),
        ("HOME", dir.to_string_lossy().into_owned()),
    ];
    let harness = Harness::start(HarnessOptions {
        socket: &d.agent_socket("alice"),
        dir: &dir.join("harness"),
        turn_timeout: 120,
        stop_grace: 5,
        claude_program: Some(&claude),
        env: &env,
    });
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert_eq!(
        bob.ask(r#"{"cmd":"send","to":"alice","body":"please greet the operator"}"#),
        r#"{"kind":"ok","delivered":1}"#
    );
    eventually("the turn acked", Duration::from_secs(120), || {
        message_states(&d.state_dir(), "alice") == [("handled".into(), false)]
    });
    (harness, d.request(r#"{"cmd":"inbox","limit":5}"#))
}

#[test]
#[ignore = "needs the Claude Code CLI and Python: tests/clients/install"]
fn the_real_claude_cli_run_by_the_turn_loop_replies_through_the_send_tool() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let api = StandIn::start(tmp.path(), "operator", "hello from claude");
    let follow = common::follow::Follower::start(&d, "alice");
    let (_h, inbox) = real_cli_turn(&d, tmp.path(), &format!("http://127.0.0.1:{}", api.port));
    assert!(
        inbox.contains(r#""from":"alice","body":"hello from claude""#),
        "{inbox}"
    );
    // `hivectl turns alice -f` followed the real CLI's turn: its message,
    // the send tool's call starting and ending, tokens, the journal line.
    follow.shows(
        "the real CLI's turn followed",
        Duration::from_secs(10),
        &[
            "from bob: please greet the operator\n",
            "  tool mcp__hyperhive__send …\n",
            "  tool mcp__hyperhive__send ok (",
            "  tokens: ",
            ": ok, ",
        ],
    );
    // Claude was offered the hive's tools and got the send's result back.
    let requests = api.requests();
    assert!(requests.iter().any(|r| {
        r["tools"]
            .as_array()
            .unwrap()
            .iter()
            .any(|t| t == "mcp__hyperhive__send")
    }));
    assert!(
        requests
            .iter()
            .any(|r| r["tool_results"].to_string().contains("ok")),
        "{requests:?}"
    );
    // The model from the stream is on the roster.
    eventually("active_model", Duration::from_secs(10), || {
        agent_field(&d.state_dir(), "alice", "active_model").as_deref() == Some("claude-standin-1")
    });
    // The turn journal has the turn as the CLI's result event told it: the
    // stand-in's tokens (10 in, 5 out per API call), the send tool's call.
    let turns: Value =
        serde_json::from_str(&d.request(r#"{"cmd":"turns","name":"alice"}"#)).unwrap();
    let turn = &turns["turns"][0];
    assert_eq!(turn["outcome"], "ok", "{turns}");
    assert_eq!(turn["model"], "claude-standin-1", "{turns}");
    let (input, output) = (
        &turn["usage"]["input_tokens"],
        &turn["usage"]["output_tokens"],
    );
    let calls = input.as_u64().unwrap() / 10;
    assert!(calls >= 1 && input.as_u64() == Some(calls * 10), "{turns}");
    assert_eq!(output.as_u64(), Some(calls * 5), "{turns}");
    assert!(turn["cost_micro_usd"].is_u64(), "{turns}");
    let tools = turn["tools"].as_array().unwrap();
    assert!(
        tools
            .iter()
            .any(|t| t["name"] == "mcp__hyperhive__send" && t["ok"] == true),
        "{turns}"
    );
    // And `usage` sums it for alice.
    let usage: Value = serde_json::from_str(&d.request(r#"{"cmd":"usage","by":"agent"}"#)).unwrap();
    let alice = usage["usage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "alice")
        .unwrap();
    assert_eq!(
        (&alice["turns"], &alice["input_tokens"]),
        (&Value::from(1), input),
        "{usage}"
    );
}

#[test]
#[ignore = "needs the Claude Code CLI and Python: tests/clients/install"]
fn a_budget_reached_by_the_real_clis_metered_turn_holds_the_next_message_until_it_is_raised() {
    // alice's Claude reaches the model through the hive's gateway (its
    // forwarder, the daemon, the egress service) to a TLS stand-in: its
    // requests are metered, and the meter is the spend.
    let d = common::Daemon::start_with_config(r#"{"model_credential": "anthropic"}"#);
    for name in ["alice", "bob"] {
        let spawn = format!(r#"{{"cmd":"spawn","name":"{name}"}}"#);
        assert_eq!(d.request(&spawn), r#"{"version":1,"ok":true}"#);
    }
    let tmp = tempfile::tempdir().unwrap();
    let api = StandIn::with_tls(tmp.path(), "operator", "hello from claude");
    let creds = tempfile::tempdir().unwrap();
    std::fs::write(creds.path().join("anthropic"), "sk-ant-the-hosts-key\n").unwrap();
    let _service = common::egress::egress_service(
        &d,
        &[
            (
                "HIVE_MODEL_UPSTREAM",
                format!("https://127.0.0.1:{}", api.port),
            ),
            ("HIVE_MODEL_CA", format!("{GATEWAY_FIXTURES}/ca.pem")),
            ("CREDENTIALS_DIRECTORY", creds.path().display().to_string()),
        ],
    );
    let (_fwd, port) = common::egress::forwarder(&d, "alice");
    let (_h, _) = real_cli_turn_with_key(
        &d,
        tmp.path(),
        &format!("http://127.0.0.1:{port}"),
        "hive-sentinel-h-alice",
    );
    assert!(
        api.requests()
            .iter()
            .all(|r| r["x_api_key"] == "sk-ant-the-hosts-key"),
        "{:?}",
        api.requests()
    );
    // The turn's requests were metered (10 in, 5 out per API call): a
    // budget below them, set now, holds alice at once.
    let ok = r#"{"version":1,"ok":true}"#;
    let set = |amount: &str| {
        d.request(&format!(
            r#"{{"cmd":"set_budget","name":"alice","amount":"{amount}"}}"#
        ))
    };
    assert_eq!(set("10tokens/day"), ok);
    let budgets: Value = serde_json::from_str(&d.request(r#"{"cmd":"budgets"}"#)).unwrap();
    let row = &budgets["budgets"][0];
    assert_eq!(
        (&row["agent"], &row["reached"]),
        (&Value::from("alice"), &Value::from(true)),
        "{budgets}"
    );
    assert!(row["spent"].as_u64().unwrap() >= 15, "{budgets}");
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert_eq!(
        bob.ask(r#"{"cmd":"send","to":"alice","body":"greet again"}"#),
        r#"{"kind":"ok","delivered":1}"#
    );
    // The harness polls every second: no turn starts, the message waits.
    std::thread::sleep(Duration::from_secs(3));
    let held = [("handled".into(), false), ("pending".into(), false)];
    assert_eq!(message_states(&d.state_dir(), "alice"), held);
    let roster = d.request(r#"{"cmd":"agent_status"}"#);
    assert!(
        roster.contains(r#""budget":""#) && roster.contains(" of 10 tokens today"),
        "{roster}"
    );
    // Raised: the held message's turn runs.
    assert_eq!(set("1000000tokens/day"), ok);
    eventually("the second turn acked", Duration::from_secs(120), || {
        message_states(&d.state_dir(), "alice")
            == [("handled".into(), false), ("handled".into(), false)]
    });
}

/// The session states of `agent` pushed on a `subscribe_agent_status`
/// stream of `d`, in order (a state repeated by other row changes once).
struct Watch {
    seen: std::sync::Arc<std::sync::Mutex<Vec<String>>>,
}

impl Watch {
    fn start(d: &common::Daemon, agent: &'static str) -> Self {
        use std::io::{BufRead, BufReader, Write};
        let mut s = std::os::unix::net::UnixStream::connect(d.socket()).unwrap();
        s.write_all(b"{\"cmd\":\"subscribe_agent_status\"}\n")
            .unwrap();
        let mut lines = BufReader::new(s);
        let mut first = String::new();
        lines.read_line(&mut first).unwrap();
        assert_eq!(first, "{\"version\":1,\"ok\":true}\n");
        let seen = std::sync::Arc::new(std::sync::Mutex::new(Vec::new()));
        let out = seen.clone();
        std::thread::spawn(move || {
            for line in lines.lines() {
                let Ok(line) = line else { return };
                let v: Value = serde_json::from_str(&line).unwrap();
                let row = &v["agent_statuses"][0];
                if row["name"] != agent {
                    continue;
                }
                if let Some(state) = row["session_state"].as_str() {
                    let mut seen = out.lock().unwrap();
                    if seen.last().map(String::as_str) != Some(state) {
                        seen.push(state.to_owned());
                    }
                }
            }
        });
        Self { seen }
    }

    fn states(&self) -> Vec<String> {
        self.seen.lock().unwrap().clone()
    }
}

/// `claude -p hello` with the hive's hook settings, as alice, against `api`.
fn claude_with_hooks(d: &common::Daemon, home: &Path, api: &StandIn) -> std::process::Output {
    let settings = home.join("hook-settings.json");
    std::fs::write(
        &settings,
        hive_c0re::agent::hook::settings(Path::new(AGENT_BIN)).to_string(),
    )
    .unwrap();
    Command::new(tool("HIVE_TEST_CLAUDE"))
        .args(["-p", "hello", "--settings"])
        .arg(&settings)
        .current_dir(home)
        .env("HOME", home)
        .env(
            "ANTHROPIC_BASE_URL",
            format!("http://127.0.0.1:{}", api.port),
        )
        .env("ANTHROPIC_API_KEY", "sk-stand-in")
        .env("CLAUDE_CODE_MAX_RETRIES", "0")
        .env("DISABLE_AUTOUPDATER", "1")
        .env("HIVE_AGENT_SOCKET", d.agent_socket("alice"))
        .stdin(Stdio::null())
        .output()
        .unwrap()
}

/// The hook events the daemon kept for `agent`, oldest first.
fn kept_events(d: &common::Daemon, agent: &str) -> Vec<String> {
    let db = rusqlite::Connection::open_with_flags(
        d.state_dir().join("hive.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = db
        .prepare("SELECT event FROM hook_events WHERE agent = ?1 ORDER BY id")
        .unwrap();
    stmt.query_map([agent], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
#[ignore = "needs the Claude Code CLI and Python: tests/clients/install"]
fn the_real_claude_cli_refused_by_the_api_fires_hooks_that_show_a_failed_turn() {
    let d = daemon_with(&["alice"]);
    let tmp = tempfile::tempdir().unwrap();
    let api = StandIn::unauthorized(tmp.path());
    let watch = Watch::start(&d, "alice");
    let out = claude_with_hooks(&d, tmp.path(), &api);
    assert!(!out.status.success(), "the 401 fails the CLI");
    eventually("the four hook events", Duration::from_secs(10), || {
        kept_events(&d, "alice").len() == 4
    });
    // StopFailure's and SessionEnd's hooks reach the daemon in either
    // order (both were seen); the row reads the same either way.
    let mut kept = kept_events(&d, "alice");
    assert_eq!(kept[..2], ["SessionStart", "UserPromptSubmit"]);
    kept[2..].sort();
    assert_eq!(kept[2..], ["SessionEnd", "StopFailure"]);
    assert_eq!(watch.states(), ["working", "turn_failed"]);
    let row = d.request(r#"{"cmd":"agent_status"}"#);
    assert!(
        row.contains(r#""session_state":"turn_failed","session_message":"authentication_failed""#),
        "{row}"
    );
}

#[test]
#[ignore = "needs the Claude Code CLI and Python: tests/clients/install"]
fn the_real_claude_cli_with_a_streamed_reply_fires_stop_then_ends_the_session() {
    let d = daemon_with(&["alice"]);
    let tmp = tempfile::tempdir().unwrap();
    let api = StandIn::start(tmp.path(), "operator", "-");
    let watch = Watch::start(&d, "alice");
    let out = claude_with_hooks(&d, tmp.path(), &api);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    eventually("SessionEnd kept", Duration::from_secs(10), || {
        kept_events(&d, "alice").last().map(String::as_str) == Some("SessionEnd")
    });
    assert!(kept_events(&d, "alice").contains(&"Stop".to_owned()));
    assert_eq!(watch.states(), ["working", "awaiting_review", "ended"]);
}

/// The path a container's Claude has to the Claude API (issue 27): the
/// harness's forwarder (`HTTPS_PROXY`/`HTTP_PROXY` in Claude's environment),
/// the agent's `egress.sock`, the egress service, the stand-in, which is on
/// the daemon's `egress_allow`. The service's log proves the path: on this
/// host the stand-in would be reachable directly too.
#[test]
#[ignore = "needs the Claude Code CLI and Python: tests/clients/install"]
fn the_real_claude_cli_completes_a_turn_through_the_hives_egress_proxy() {
    let tmp = tempfile::tempdir().unwrap();
    let api = StandIn::behind_the_proxy(tmp.path(), "operator", "hello through the proxy");
    let d = common::Daemon::start_with_config(&format!(
        r#"{{"egress_allow": ["127.0.0.2:{}"]}}"#,
        api.port
    ));
    for name in ["alice", "bob"] {
        let spawned = d.request(&format!(r#"{{"cmd":"spawn","name":"{name}"}}"#));
        assert_eq!(spawned, r#"{"version":1,"ok":true}"#);
    }
    let dialer = d.dir.path().join("run/egress-dialer.sock");
    let service_log = tmp.path().join("egress.log");
    let mut service = Command::new(common::BIN)
        .args(["egress", "--socket"])
        .arg(&dialer)
        .env("RUST_LOG", "info")
        .stderr(std::fs::File::create(&service_log).unwrap())
        .spawn()
        .unwrap();
    eventually(
        "the egress service's socket",
        Duration::from_secs(10),
        || dialer.exists(),
    );
    let (_h, inbox) = real_cli_turn(&d, tmp.path(), &format!("http://127.0.0.2:{}", api.port));
    assert!(
        inbox.contains(r#""from":"alice","body":"hello through the proxy""#),
        "{inbox}"
    );
    let _ = service.kill();
    let _ = service.wait();
    let log = std::fs::read_to_string(&service_log).unwrap();
    let line = format!("alice: egress to 127.0.0.2:{}", api.port);
    assert!(
        log.contains(&line),
        "no {line:?} in the egress service's log:\n{log}"
    );
}
