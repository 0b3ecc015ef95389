//! The model gateway end to end on this host, with the real binaries and
//! the fake container driver (issue 46): an agent's request to the model
//! in origin form (as Claude Code sends it to `ANTHROPIC_BASE_URL`) through
//! its forwarder (`hive-agent egress-forward`), its `egress.sock`, the
//! daemon and the egress service (`hive-c0re egress`, its credential in a
//! `$CREDENTIALS_DIRECTORY` as systemd's `LoadCredential=` makes it) to a
//! TLS stand-in of the Messages API whose CA only the gateway is given;
//! then the metered row through `hivectl model-log`, and the spend it is:
//! `hivectl usage` and the budgets count it, never what a `report_turn`
//! of the agent's says; a request past a reached budget is held at the
//! gateway until the budget is raised, or answered the budget's error
//! after `budget_hold_secs`. (The container, the
//! units and the real Claude Code CLI are the real-systemd tier's:
//! tests/system/tests/gateway.sh.)

#![allow(clippy::disallowed_methods)] // test code runs the binaries under test
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::TcpListener;
use std::path::Path;

use std::sync::{Arc, Mutex};
use std::time::Duration;

use common::egress::{Killed, egress_service, forwarder, through};
use common::{Daemon, hivectl};
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, PrivateKeyDer};

const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/gateway");
const REAL_KEY: &str = "sk-ant-api03-end-to-end-key-of-the-host";
const SENTINEL: &str = "hive-sentinel-h-alice";

/// A TLS stand-in on 127.0.0.1 (the fixtures' certificate), answering
/// every request with one JSON message and its usage; the head and body of
/// each request it saw.
fn standin() -> (u16, Arc<Mutex<Vec<String>>>) {
    let certs: Vec<CertificateDer<'static>> =
        CertificateDer::pem_file_iter(format!("{FIXTURES}/server.pem"))
            .unwrap()
            .map(Result::unwrap)
            .collect();
    let key = PrivateKeyDer::from_pem_file(format!("{FIXTURES}/server.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = Arc::new(
        rustls::ServerConfig::builder_with_provider(provider)
            .with_safe_default_protocol_versions()
            .unwrap()
            .with_no_client_auth()
            .with_single_cert(certs, key)
            .unwrap(),
    );
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    let seen = Arc::new(Mutex::new(Vec::new()));
    let log = Arc::clone(&seen);
    std::thread::spawn(move || {
        for tcp in listener.incoming().flatten() {
            let conn = rustls::ServerConnection::new(Arc::clone(&config)).unwrap();
            let mut tls = BufReader::new(rustls::StreamOwned::new(conn, tcp));
            let mut head = String::new();
            loop {
                let mut line = String::new();
                if tls.read_line(&mut line).unwrap_or(0) == 0 || line == "\r\n" {
                    break;
                }
                head.push_str(&line);
            }
            let len = head
                .lines()
                .find_map(|l| {
                    l.to_ascii_lowercase()
                        .strip_prefix("content-length:")
                        .map(|v| v.trim().parse::<usize>().unwrap())
                })
                .unwrap_or(0);
            let mut body = vec![0; len];
            tls.read_exact(&mut body).unwrap();
            log.lock()
                .unwrap()
                .push(format!("{head}\r\n{}", String::from_utf8_lossy(&body)));
            let answer = r#"{"id":"msg_e2e","type":"message","model":"claude-haiku-4-5-20251001","content":[{"type":"text","text":"hi"}],"usage":{"input_tokens":321,"output_tokens":45,"cache_creation_input_tokens":6,"cache_read_input_tokens":7}}"#;
            let out = format!(
                "HTTP/1.1 200 OK\r\ncontent-type: application/json\r\nrequest-id: req_e2e_1\r\n\
                 content-length: {}\r\nconnection: close\r\n\r\n{answer}",
                answer.len()
            );
            let stream = tls.get_mut();
            let _ = stream.write_all(out.as_bytes());
            let _ = stream.flush();
            stream.conn.send_close_notify();
            let _ = stream.flush();
        }
    });
    (port, seen)
}

/// The egress service with the model gateway to `upstream`, trusting the
/// fixtures' CA, credential `anthropic` in `creds`.
fn gateway_service(d: &Daemon, upstream: u16, creds: &Path) -> Killed {
    std::fs::write(creds.join("anthropic"), format!("{REAL_KEY}\n")).unwrap();
    let env = [
        (
            "HIVE_MODEL_UPSTREAM",
            format!("https://127.0.0.1:{upstream}"),
        ),
        ("HIVE_MODEL_CA", format!("{FIXTURES}/ca.pem")),
        ("CREDENTIALS_DIRECTORY", creds.display().to_string()),
    ];
    egress_service(d, &env)
}

fn model_log(d: &Daemon, name: &str) -> Vec<serde_json::Value> {
    for _ in 0..100 {
        let (code, out, err) = hivectl(d, &["--json", "model-log", name]);
        assert_eq!(code, 0, "{err}");
        let answer: serde_json::Value = serde_json::from_str(&out).unwrap();
        let rows = answer["model_log"].as_array().cloned().unwrap_or_default();
        if !rows.is_empty() {
            return rows;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    Vec::new()
}

#[test]
fn an_agents_model_request_goes_upstream_with_the_hosts_key_and_its_meter_row_reaches_model_log() {
    let (upstream, seen) = standin();
    let creds = tempfile::tempdir().unwrap();
    let d = Daemon::start_with_config(r#"{"model_credential": "anthropic"}"#);
    let _service = gateway_service(&d, upstream, creds.path());
    assert_eq!(
        d.request(r#"{"cmd":"spawn","name":"alice"}"#),
        r#"{"version":1,"ok":true}"#
    );
    let (_fwd, port) = forwarder(&d, "alice");
    let body = r#"{"model":"claude-haiku-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
    let answer = through(
        port,
        &format!(
            "POST /v1/messages?beta=true HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-api-key: {SENTINEL}\r\n\
             content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
    );
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert!(answer.contains("\"msg_e2e\""), "{answer}");

    let seen = seen.lock().unwrap().clone();
    assert_eq!(seen.len(), 1, "{seen:?}");
    assert!(
        seen[0].starts_with("POST /v1/messages?beta=true HTTP/1.1\r\n"),
        "{}",
        seen[0]
    );
    assert!(
        seen[0].contains(&format!("x-api-key: {REAL_KEY}\r\n")),
        "{}",
        seen[0]
    );
    assert!(!seen[0].contains(SENTINEL), "{}", seen[0]);

    let rows = model_log(&d, "alice");
    assert_eq!(rows.len(), 1, "{rows:?}");
    let r = &rows[0]["request"];
    assert_eq!(rows[0]["agent"], "alice");
    assert_eq!(r["route"], "POST /v1/messages");
    assert_eq!(r["status"], 200);
    assert_eq!(r["model"], "claude-haiku-4-5-20251001");
    assert_eq!(
        r["tokens"],
        serde_json::json!({"input": 321, "output": 45, "cache_write": 6, "cache_read": 7})
    );
    // Haiku 4.5: 1, 5, 1.25 and 0.10 dollars per million tokens:
    // 321 + 225 + 7.5 + 0.7 millionths.
    assert_eq!(r["cost_micro_usd"], 554);
    assert_eq!(r["request_id"], "req_e2e_1");
    assert!(r["at_ms"].as_i64().unwrap() > 1_700_000_000_000, "{r}");
    let (code, text, _) = hivectl(&d, &["model-log", "alice"]);
    assert_eq!(code, 0);
    assert!(
        text.contains("claude-haiku-4-5-20251001") && text.contains("$0.00055"),
        "{text}"
    );
    // No byte of the key in anything the operator's tools answer.
    let (_, json, _) = hivectl(&d, &["--json", "model-log", "alice"]);
    assert!(!json.contains(REAL_KEY) && !text.contains(REAL_KEY));
    // The agent's egress audit has the connection, as a model one.
    // (written within the audit's flush interval).
    let mut audit = String::new();
    for _ in 0..100 {
        audit = hivectl(&d, &["--json", "egress-log", "alice"]).1;
        if audit.contains(r#""verdict":"model""#) {
            break;
        }
        std::thread::sleep(Duration::from_millis(50));
    }
    assert!(audit.contains(r#""verdict":"model""#), "{audit}");
    assert!(!audit.contains(REAL_KEY));
}

/// One model request of `name`'s through its forwarder on `port`.
fn ask_model(port: u16) -> String {
    let body = r#"{"model":"claude-haiku-4-5","max_tokens":5,"messages":[{"role":"user","content":"hi"}]}"#;
    through(
        port,
        &format!(
            "POST /v1/messages HTTP/1.1\r\nHost: 127.0.0.1:{port}\r\nx-api-key: {SENTINEL}\r\n\
             content-type: application/json\r\ncontent-length: {}\r\nconnection: close\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// alice's row of `usage` (host.sock), and the first budget's spent and
/// reached.
fn alices_figures(d: &Daemon) -> (serde_json::Value, (u64, bool)) {
    let usage: serde_json::Value =
        serde_json::from_str(&d.request(r#"{"cmd":"usage","by":"agent"}"#)).unwrap();
    let row = usage["usage"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["key"] == "alice")
        .cloned()
        .unwrap_or_else(|| panic!("{usage}"));
    let budgets: serde_json::Value =
        serde_json::from_str(&d.request(r#"{"cmd":"budgets"}"#)).unwrap();
    let b = &budgets["budgets"][0];
    (
        row,
        (
            b["spent"].as_u64().unwrap(),
            b["reached"].as_bool().unwrap(),
        ),
    )
}

#[test]
fn a_forged_report_turn_leaves_usage_and_the_budget_at_the_metered_spend_which_reaches_it() {
    let (upstream, _seen) = standin();
    let creds = tempfile::tempdir().unwrap();
    let d = Daemon::start_with_config(r#"{"model_credential": "anthropic"}"#);
    let _service = gateway_service(&d, upstream, creds.path());
    let ok = r#"{"version":1,"ok":true}"#;
    assert_eq!(d.request(r#"{"cmd":"spawn","name":"alice"}"#), ok);
    let set = |amount: &str| {
        d.request(&format!(
            r#"{{"cmd":"set_budget","name":"alice","amount":"{amount}"}}"#
        ))
    };
    assert_eq!(set("0.001usd/day"), ok);
    let (_fwd, port) = forwarder(&d, "alice");
    assert!(ask_model(port).starts_with("HTTP/1.1 200 OK\r\n"));
    assert_eq!(model_log(&d, "alice").len(), 1);
    // The row is committed before the budgets are evaluated with it.
    let mut figures = alices_figures(&d);
    for _ in 0..100 {
        if figures.1.0 == 554 {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        figures = alices_figures(&d);
    }
    assert_eq!(figures.1, (554, false), "{figures:?}");
    // Forged from the agent's side: $5, then nothing.
    for cost in [5_000_000, 0] {
        let turn = format!(
            r#"{{"cmd":"report_turn","turn":{{"started_at_ms":1,"ended_at_ms":2,"outcome":"ok","usage":{{"input_tokens":9000000}},"cost_micro_usd":{cost}}}}}"#
        );
        let answer = common::request_raw(&d.agent_socket("alice"), format!("{turn}\n").as_bytes());
        assert!(answer.contains(r#""kind":"ok""#), "{answer}");
        let (row, budget) = alices_figures(&d);
        assert_eq!(budget, (554, false), "{row}");
        assert_eq!(
            row["metered"],
            serde_json::json!({"requests": 1, "tokens": {"input": 321, "output": 45,
                "cache_write": 6, "cache_read": 7}, "cost_micro_usd": 554, "unpriced": 0}),
            "{row}"
        );
    }
    let (row, _) = alices_figures(&d);
    assert_eq!(
        (&row["turns"], &row["cost_micro_usd"]),
        (&serde_json::json!(2), &serde_json::json!(5_000_000)),
        "the reports shown as reported: {row}"
    );
    let (code, table, _) = hivectl(&d, &["usage"]);
    assert_eq!(code, 0);
    let alice: Vec<&str> = table
        .lines()
        .find(|l| l.starts_with("alice"))
        .unwrap()
        .split_whitespace()
        .collect();
    assert_eq!(
        alice,
        [
            "alice",
            "1",
            "321",
            "45",
            "7",
            "6",
            "$0.00055",
            "2",
            "18,000,000",
            "$5.00"
        ],
        "{table}"
    );
    // A second request passes the budget's $0.001: alice is held.
    assert!(ask_model(port).starts_with("HTTP/1.1 200 OK\r\n"));
    for _ in 0..100 {
        if alices_figures(&d).1 == (1108, true) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(alices_figures(&d).1, (1108, true));
    let roster = d.request(r#"{"cmd":"agent_status"}"#);
    assert!(
        roster.contains(r#""budget":"$0.0011 of $0.001 today""#),
        "{roster}"
    );
}

/// alice's model-log rows once there are `n` (within 2 s).
fn rows_of(d: &Daemon, n: usize) -> Vec<serde_json::Value> {
    let mut rows = model_log(d, "alice");
    for _ in 0..100 {
        if rows.len() == n {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
        rows = model_log(d, "alice");
    }
    assert_eq!(rows.len(), n, "{rows:?}");
    rows
}

/// Set alice's budget to `amount` (host.sock).
fn set_alices_budget(d: &Daemon, amount: &str) {
    let answer = d.request(&format!(
        r#"{{"cmd":"set_budget","name":"alice","amount":"{amount}"}}"#
    ));
    assert_eq!(answer, r#"{"version":1,"ok":true}"#);
}

/// A daemon (with `config`), its gateway to a fresh stand-in, alice
/// spawned with a budget of `0.001usd/day` that her two requests reached
/// (the second answered before the hold); what must be kept (the
/// processes, the credentials), her forwarder's port, and what the
/// stand-in saw.
type Kept = ([Killed; 2], tempfile::TempDir);

fn alice_over_budget(config: &str) -> (Daemon, Kept, u16, Arc<Mutex<Vec<String>>>) {
    let (upstream, seen) = standin();
    let creds = tempfile::tempdir().unwrap();
    let d = Daemon::start_with_config(config);
    let service = gateway_service(&d, upstream, creds.path());
    assert_eq!(
        d.request(r#"{"cmd":"spawn","name":"alice"}"#),
        r#"{"version":1,"ok":true}"#
    );
    set_alices_budget(&d, "0.001usd/day");
    let (fwd, port) = forwarder(&d, "alice");
    for _ in 0..2 {
        assert!(ask_model(port).starts_with("HTTP/1.1 200 OK\r\n"));
    }
    rows_of(&d, 2);
    for _ in 0..100 {
        if alices_figures(&d).1 == (1108, true) {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert_eq!(alices_figures(&d).1, (1108, true));
    (d, ([service, fwd], creds), port, seen)
}

#[test]
fn a_request_past_the_budget_is_held_at_the_gateway_and_raising_the_budget_lets_it_through() {
    let (d, _kept, port, seen) = alice_over_budget(r#"{"model_credential": "anthropic"}"#);
    let (tx, rx) = std::sync::mpsc::channel();
    std::thread::spawn(move || tx.send(ask_model(port)).unwrap());
    assert!(
        rx.recv_timeout(Duration::from_millis(800)).is_err(),
        "held while the budget is reached"
    );
    assert_eq!(seen.lock().unwrap().len(), 2, "not forwarded");
    set_alices_budget(&d, "1usd/day");
    let answer = rx
        .recv_timeout(Duration::from_secs(5))
        .expect("let through once the budget is raised");
    assert!(answer.starts_with("HTTP/1.1 200 OK\r\n"), "{answer}");
    assert_eq!(seen.lock().unwrap().len(), 3);
}

#[test]
fn a_request_still_held_after_budget_hold_secs_gets_the_budgets_error_naming_the_command() {
    let config = r#"{"model_credential": "anthropic", "budget_hold_secs": 1}"#;
    let (d, _kept, port, seen) = alice_over_budget(config);
    let started = std::time::Instant::now();
    let answer = ask_model(port);
    assert!(started.elapsed() >= Duration::from_secs(1), "{answer}");
    assert!(
        answer.starts_with("HTTP/1.1 400 Bad Request\r\n"),
        "{answer}"
    );
    assert!(answer.contains("x-should-retry: false\r\n"), "{answer}");
    let body = answer.split("\r\n\r\n").nth(1).unwrap();
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["error"]["type"], "invalid_request_error");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("the budget 0.001usd/day on alice and under is reached")
            && msg.contains("hivectl budget set alice AMOUNT"),
        "{msg}"
    );
    assert_eq!(seen.lock().unwrap().len(), 2, "never forwarded");
    let rows = rows_of(&d, 3);
    let held = &rows[2]["request"];
    assert_eq!(
        (&held["status"], &held["cost_micro_usd"]),
        (&serde_json::json!(400), &serde_json::Value::Null),
        "{held}"
    );
}

#[test]
fn model_log_refuses_an_unknown_agent_and_a_limit_out_of_range_with_their_codes() {
    let d = Daemon::start_with_config("{}");
    let (code, _, err) = hivectl(&d, &["model-log", "ghost"]);
    assert_ne!(code, 0);
    assert!(err.contains("ghost"), "{err}");
    let answer = d.request(r#"{"cmd":"model_log","name":"ghost"}"#);
    assert!(answer.contains(r#""code":"unknown_agent""#), "{answer}");
    let answer = d.request(r#"{"cmd":"spawn","name":"alice"}"#);
    assert_eq!(answer, r#"{"version":1,"ok":true}"#);
    let answer = d.request(r#"{"cmd":"model_log","name":"alice","limit":0}"#);
    assert!(answer.contains(r#""code":"bad_request""#), "{answer}");
    let (code, out, _) = hivectl(&d, &["model-log", "alice"]);
    assert_eq!((code, out.as_str()), (0, "no model requests recorded\n"));
}
