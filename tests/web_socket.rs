//! The dashboard's socket, with raw HTTP (the browser tier is
//! `web_browser.rs`): taken from socket activation by its name `web`, bound
//! 0660 by the daemon otherwise, refusing forged state changes before they
//! reach the hive, and surviving a bad client.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use std::io::{Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use common::{Daemon, Launch, daemon_with, request_raw};

/// One HTTP/1.1 request with `Connection: close`; the whole answer.
fn http(socket: &Path, request: &str) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn get(socket: &Path, path: &str) -> String {
    http(
        socket,
        &format!("GET {path} HTTP/1.1\r\nHost: dash\r\nConnection: close\r\n\r\n"),
    )
}

fn post(socket: &Path, path: &str, headers: &str, body: &str) -> String {
    http(
        socket,
        &format!(
            "POST {path} HTTP/1.1\r\nHost: dash\r\nConnection: close\r\n{headers}\
             Content-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{body}",
            body.len()
        ),
    )
}

/// The token every form of the roster page carries.
fn token(socket: &Path) -> String {
    let page = get(socket, "/");
    let at = page
        .find(r#"name="csrf" value=""#)
        .expect("a form with a token")
        + 19;
    page[at..at + 64].to_owned()
}

/// The first number after `"key":` in a JSON answer.
fn number_after(json: &str, key: &str) -> i64 {
    let at = json
        .find(&format!("\"{key}\":"))
        .unwrap_or_else(|| panic!("no {key} in {json}"))
        + key.len()
        + 3;
    json[at..]
        .chars()
        .take_while(char::is_ascii_digit)
        .collect::<String>()
        .parse()
        .unwrap()
}

fn running(d: &Daemon, name: &str) -> bool {
    let rows = d.request(r#"{"cmd":"agent_status"}"#);
    rows.contains(&format!(r#""name":"{name}","running":true"#))
}

#[test]
fn the_dashboard_socket_is_taken_from_activation_by_its_name() {
    let d = Daemon::start(Launch::ActivatedWithWeb);
    let page = get(&d.web_socket(), "/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    assert!(page.contains("<title>Roster · hive</title>"), "{page}");
    // systemd-socket-activate made the file; the daemon did not rebind it.
    assert!(d.web_socket().exists());
}

#[test]
fn a_daemon_not_activated_binds_web_sock_for_owner_and_group_only() {
    let d = Daemon::start(Launch::Standalone);
    let mode = std::fs::metadata(d.web_socket())
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o660, "{mode:o}");
    let page = get(&d.web_socket(), "/approvals");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
}

#[test]
fn every_answer_carries_a_strict_content_security_policy() {
    let d = Daemon::start(Launch::Standalone);
    for path in ["/", "/inbox", "/nope", "/static/dashboard.js"] {
        let answer = get(&d.web_socket(), path);
        let csp = answer
            .lines()
            .find(|l| {
                l.to_ascii_lowercase()
                    .starts_with("content-security-policy:")
            })
            .unwrap_or_else(|| panic!("no CSP on {path}: {answer}"));
        assert!(csp.contains("script-src 'self'"), "{csp}");
        assert!(!csp.contains("unsafe-inline"), "{csp}");
    }
}

#[test]
fn a_post_without_the_token_or_from_another_origin_changes_nothing() {
    let d = daemon_with(&["alice"]);
    let web = d.web_socket();
    let tok = token(&web);
    let same = "Origin: http://dash\r\n";
    // No token.
    let a = post(&web, "/agent/alice/stop", same, "back=%2F");
    assert!(a.starts_with("HTTP/1.1 403"), "{a}");
    assert!(a.contains("token is missing or stale"), "{a}");
    // The right token, from another site.
    let body = format!("csrf={tok}");
    let a = post(
        &web,
        "/agent/alice/stop",
        "Origin: http://evil.example\r\n",
        &body,
    );
    assert!(a.starts_with("HTTP/1.1 403"), "{a}");
    assert!(a.contains("evil.example"), "{a}");
    // No Origin at all.
    let a = post(&web, "/agent/alice/stop", "", &body);
    assert!(a.starts_with("HTTP/1.1 403"), "{a}");
    assert!(running(&d, "alice"));
    // The same request done right goes through.
    let a = post(&web, "/agent/alice/stop", same, &body);
    assert!(a.starts_with("HTTP/1.1 303"), "{a}");
    assert!(!running(&d, "alice"));
}

#[test]
fn a_refused_action_shows_host_socks_own_words() {
    let d = daemon_with(&["alice"]);
    let web = d.web_socket();
    let body = format!("csrf={}&name=alice&how=spawn", token(&web));
    let a = post(&web, "/spawn", "Origin: http://dash\r\n", &body);
    let wire = d.request(r#"{"cmd":"spawn","name":"alice"}"#);
    // The code's status: the name is taken (409), not a malformed request.
    assert!(a.starts_with("HTTP/1.1 409"), "{a}");
    assert!(wire.contains(r#""code":"already_exists""#), "{wire}");
    assert!(
        wire.contains(
            r#""error":"agent \"alice\" already exists in this hive; choose another name""#
        ),
        "{wire}"
    );
    assert!(
        a.contains("agent &quot;alice&quot; already exists in this hive; choose another name"),
        "{a}"
    );
}

#[test]
fn an_egress_request_approved_on_the_dashboard_for_an_hour_is_granted_for_an_hour() {
    let d = daemon_with(&["alice"]);
    let asked = request_raw(
        &d.agent_socket("alice"),
        b"{\"cmd\":\"request_egress\",\"host\":\"pypi.org:443\",\"reason\":\"pip\"}\n",
    );
    assert!(asked.contains(r#""kind":"ok""#), "{asked}");
    let web = d.web_socket();
    let page = get(&web, "/approvals");
    assert!(
        page.contains(r#"<option value="3600">for 1 hour</option>"#),
        "{page}"
    );
    let pending = d.request(r#"{"cmd":"pending"}"#);
    let id = number_after(&pending, "id");
    let body = format!("csrf={}&for_secs=3600", token(&web));
    let a = post(
        &web,
        &format!("/approvals/{id}/approve"),
        "Origin: http://dash\r\n",
        &body,
    );
    assert!(a.starts_with("HTTP/1.1 303"), "{a}");
    let grants = d.request(r#"{"cmd":"grants","name":"alice"}"#);
    let until = number_after(&grants, "expires_at");
    // The daemon's own clock: the row's request time, a moment before.
    let asked = number_after(&pending, "requested_at");
    assert!(
        (asked + 3600..=asked + 3610).contains(&until),
        "{until} vs {asked}"
    );
}

#[test]
fn the_agent_pages_interrupt_answers_the_harness_wait_and_without_one_says_no_turn() {
    let d = daemon_with(&["alice"]);
    let web = d.web_socket();
    let origin = "Origin: http://dash\r\n";
    let body = format!("csrf={}&note=", token(&web));
    let refused = post(&web, "/agent/alice/interrupt", origin, &body);
    assert!(refused.starts_with("HTTP/1.1 409"), "{refused}");
    assert!(
        refused.contains("alice has no turn in progress"),
        "{refused}"
    );
    assert!(get(&web, "/agent/alice").contains("interrupt the turn"));

    // A harness's wait, as hive-agent holds it for the length of a turn.
    let socket = d.agent_socket("alice");
    let harness =
        std::thread::spawn(move || common::Conn::open(&socket).ask(r#"{"cmd":"await_interrupt"}"#));
    let body = format!("csrf={}&note=stop", token(&web));
    let mut taken = String::new();
    for _ in 0..100 {
        taken = post(&web, "/agent/alice/interrupt", origin, &body);
        if taken.starts_with("HTTP/1.1 303") {
            break;
        }
        std::thread::sleep(Duration::from_millis(20));
    }
    assert!(taken.starts_with("HTTP/1.1 303"), "{taken}");
    assert_eq!(harness.join().unwrap(), r#"{"kind":"interrupted"}"#);
    // The note waits in alice's inbox as her next message.
    let status = common::Conn::open(&d.agent_socket("alice")).ask(r#"{"cmd":"status"}"#);
    assert_eq!(status, r#"{"kind":"status","unread":1}"#);
}

#[test]
fn the_usage_page_refuses_a_window_it_does_not_offer_and_names_those_it_does() {
    let d = daemon_with(&["alice"]);
    let page = get(&d.web_socket(), "/usage?since=1y");
    assert!(page.starts_with("HTTP/1.1 400"), "{page}");
    assert!(
        page.contains("since &quot;1y&quot;: choose one of 24h, 7d, 30d, all"),
        "{page}"
    );
    let page = get(&d.web_socket(), "/usage");
    assert!(
        page.starts_with("HTTP/1.1 200")
            && page.contains("Nothing metered or reported in this window."),
        "{page}"
    );
}

#[test]
fn a_budget_set_and_unset_on_the_usage_page_is_the_one_host_sock_lists() {
    let d = daemon_with(&["alice", "bob"]);
    let web = d.web_socket();
    let origin = "Origin: http://dash\r\n";
    let page = get(&web, "/usage");
    assert!(page.contains("No budget"), "{page}");
    assert!(
        page.contains(r#"<option value="alice">alice and under</option>"#),
        "{page}"
    );

    let body = format!("csrf={}&scope=alice&amount=20usd%2Fday", token(&web));
    let set = post(&web, "/budgets/set", origin, &body);
    assert!(set.starts_with("HTTP/1.1 303"), "{set}");
    let listed = d.request(r#"{"cmd":"budgets"}"#);
    assert!(
        listed.contains(r#""agent":"alice""#) && listed.contains(r#""amount":"20usd/day""#),
        "{listed}"
    );
    let page = get(&web, "/usage");
    assert!(
        page.contains("alice and under") && page.contains("$0.00 of $20.00 today"),
        "{page}"
    );

    // A bad amount is refused in the parser's words; nothing changes.
    let body = format!("csrf={}&scope=&amount=lots", token(&web));
    let bad = post(&web, "/budgets/set", origin, &body);
    assert!(
        bad.starts_with("HTTP/1.1 400") && bad.contains("5usd/5h"),
        "{bad}"
    );

    let body = format!("csrf={}&scope=alice", token(&web));
    let unset = post(&web, "/budgets/unset", origin, &body);
    assert!(unset.starts_with("HTTP/1.1 303"), "{unset}");
    let listed = d.request(r#"{"cmd":"budgets"}"#);
    assert!(!listed.contains(r#""agent":"alice""#), "{listed}");
}

#[test]
fn a_garbage_client_does_not_stop_the_dashboard() {
    let d = Daemon::start(Launch::Standalone);
    let web = d.web_socket();
    let mut bad = UnixStream::connect(&web).unwrap();
    bad.write_all(b"\x00\x01 not http at all\r\n\r\n").unwrap();
    drop(bad);
    let silent = UnixStream::connect(&web).unwrap();
    let page = get(&web, "/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    drop(silent);
}

#[test]
fn a_client_that_never_finishes_its_request_head_is_cut_off_while_others_are_served() {
    let d = Daemon::start(Launch::Standalone);
    let web = d.web_socket();
    let mut slow = UnixStream::connect(&web).unwrap();
    slow.write_all(b"GET / HTTP/1.1\r\nHost: dash\r\nX-Dribble: 1")
        .unwrap();
    let started = std::time::Instant::now();
    // While it dribbles, the dashboard answers others.
    let page = get(&web, "/");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    // Then its connection is closed at the head deadline (5 s, host.sock's),
    // with nothing of a page in it.
    slow.set_read_timeout(Some(Duration::from_secs(20)))
        .unwrap();
    let mut got = Vec::new();
    let read = slow.read_to_end(&mut got);
    let waited = started.elapsed();
    assert!(read.is_ok(), "closed, not timed out on our side: {read:?}");
    assert!(
        waited >= Duration::from_secs(4) && waited < Duration::from_secs(15),
        "{waited:?}"
    );
    assert!(!String::from_utf8_lossy(&got).contains("200 OK"));
}

#[test]
fn an_open_live_stream_does_not_hold_up_the_daemons_exit() {
    let d = Daemon::start(Launch::Standalone);
    let mut stream = UnixStream::connect(d.web_socket()).unwrap();
    stream
        .write_all(b"GET /events/roster HTTP/1.1\r\nHost: dash\r\n\r\n")
        .unwrap();
    stream
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    let mut head = [0u8; 512];
    let n = stream.read(&mut head).unwrap();
    assert!(String::from_utf8_lossy(&head[..n]).contains("text/event-stream"));
    let started = std::time::Instant::now();
    let status = d.terminate();
    assert!(status.success(), "{status:?}");
    // The drain deadline is 10 s; a stream that held the drain would use it.
    assert!(
        started.elapsed() < Duration::from_secs(3),
        "{:?}",
        started.elapsed()
    );
    // And the browser's stream was ended, not left hanging.
    let mut rest = Vec::new();
    let _ = stream.read_to_end(&mut rest);
}

/// The Python script that parses `/metrics` (stdin) with
/// `prometheus_client`'s own parser and prints every sample as a JSON line:
/// `[family, type, sample name, labels, value]`.
const PARSE_METRICS: &str = r#"
import json, sys
from prometheus_client.parser import text_string_to_metric_families
for family in text_string_to_metric_families(sys.stdin.read()):
    for s in family.samples:
        print(json.dumps([family.name, family.type, s.name, s.labels, s.value]))
"#;

/// `/metrics` read by a parser no one here wrote: the Python
/// `prometheus_client` (`HIVE_TEST_PYTHON`, from `tests/clients/install`).
#[test]
#[ignore = "needs the Python prometheus_client: eval \"$(tests/clients/install)\""]
#[allow(clippy::disallowed_methods)] // it runs the real parser, a Python program
fn metrics_parse_with_the_prometheus_clients_own_parser_and_count_a_reported_turn_as_reported() {
    let python = std::env::var("HIVE_TEST_PYTHON")
        .expect("HIVE_TEST_PYTHON (eval \"$(tests/clients/install)\")");
    let d = daemon_with(&["alice", "bob"]);
    let turn = r#"{"cmd":"report_turn","turn":{"started_at_ms":1796040000000,"ended_at_ms":1796040002000,"outcome":"ok","usage":{"input_tokens":120,"output_tokens":30},"cost_micro_usd":42000}}"#;
    let answer = request_raw(&d.agent_socket("alice"), format!("{turn}\n").as_bytes());
    assert!(answer.contains(r#""kind":"ok""#), "{answer}");

    let answer = get(&d.web_socket(), "/metrics");
    let (head, body) = answer.split_once("\r\n\r\n").unwrap();
    assert!(head.starts_with("HTTP/1.1 200"), "{head}");
    assert!(
        head.contains("content-type: text/plain; version=0.0.4; charset=utf-8"),
        "{head}"
    );
    let mut parser = std::process::Command::new(python)
        .args(["-c", PARSE_METRICS])
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .stderr(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    parser
        .stdin
        .take()
        .unwrap()
        .write_all(body.as_bytes())
        .unwrap();
    let out = parser.wait_with_output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let samples: Vec<serde_json::Value> = String::from_utf8(out.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let value = |family: &str, kind: &str, name: &str, labels: serde_json::Value| {
        samples
            .iter()
            .find(|s| s[0] == family && s[2] == name && s[3] == labels)
            .map(|s| {
                assert_eq!(s[1], kind, "{s}");
                s[4].as_f64().unwrap()
            })
            .unwrap_or_else(|| panic!("no {name} {labels} in {samples:?}"))
    };
    use serde_json::json;
    let alice = json!({"agent": "alice", "outcome": "ok"});
    assert_eq!(
        value("hive_turns", "counter", "hive_turns_total", alice),
        1.0
    );
    // Its figures are the report's, under their own names: the spend
    // (`hive_tokens_total`, `hive_cost_usd_total`) is the meter's alone.
    let input = json!({"agent": "alice", "kind": "input"});
    let name = "hive_reported_tokens";
    assert_eq!(
        value(name, "counter", &format!("{name}_total"), input),
        120.0
    );
    let cost = json!({"agent": "alice"});
    let name = "hive_reported_cost_usd";
    assert_eq!(
        value(name, "counter", &format!("{name}_total"), cost),
        0.042
    );
    let alice = json!({"agent": "alice"});
    assert_eq!(
        value("hive_cost_usd", "counter", "hive_cost_usd_total", alice),
        0.0,
        "no request was metered"
    );
    let up = json!({"agent": "bob"});
    assert_eq!(value("hive_agent_up", "gauge", "hive_agent_up", up), 1.0);
    // alice and bob run; the manager is registered, never started here.
    let running = json!({"state": "running"});
    assert_eq!(value("hive_agents", "gauge", "hive_agents", running), 2.0);
    let stopped = json!({"state": "stopped"});
    assert_eq!(value("hive_agents", "gauge", "hive_agents", stopped), 1.0);
    let inf = json!({"le": "+Inf"});
    let name = "hive_hook_to_roster_seconds";
    value(name, "histogram", &format!("{name}_bucket"), inf);
}
