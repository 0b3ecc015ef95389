//! Egress end to end on this host, with the real binaries and the fake
//! container driver: an agent's forwarder (`hive-agent egress-forward`, as
//! the harness runs it in the container), the daemon's per-agent
//! `egress.sock`, the egress service (`hive-c0re egress`) dialling a
//! loopback target. The agent's side is what a command in its container
//! can do: speak HTTP to the forwarder's port. (The container's network
//! namespace and the units are the real-systemd tier's: tests/system/tests/egress.sh.)

#![allow(clippy::disallowed_methods)] // test code runs the binaries under test
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/common/mod.rs"]
mod common;

use std::io::{Read, Write};
use std::net::TcpListener;
use std::path::Path;
use std::process::Command;
use std::time::Duration;

use common::egress::{AGENT, egress_service, forwarder, through};
use common::{Daemon, hivectl};

/// A target on 127.0.0.1 answering "pong" to every connection; its port.
fn target() -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        for mut s in listener.incoming().flatten() {
            let _ = s.write_all(b"pong");
        }
    });
    port
}

/// The same on the agent's egress socket itself.
fn on_socket(path: &Path, request: &str) -> String {
    let mut s = std::os::unix::net::UnixStream::connect(path).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(request.as_bytes()).unwrap();
    let mut out = Vec::new();
    let _ = s.read_to_end(&mut out);
    String::from_utf8_lossy(&out).into_owned()
}

fn spawn(d: &Daemon, name: &str) {
    assert_eq!(
        d.request(&format!(r#"{{"cmd":"spawn","name":"{name}"}}"#)),
        r#"{"version":1,"ok":true}"#
    );
}

#[test]
fn through_its_forwarder_an_agent_reaches_a_host_on_the_configured_list_and_no_other() {
    let (allowed, other) = (target(), target());
    let d = Daemon::start_with_config(&format!(
        r#"{{"egress_allow": ["api.anthropic.com:443", "127.0.0.1:{allowed}"]}}"#
    ));
    let _service = egress_service(&d, &[]);
    spawn(&d, "alice");
    let (_fwd, port) = forwarder(&d, "alice");

    let answer = through(
        port,
        &format!("CONNECT 127.0.0.1:{allowed} HTTP/1.1\r\n\r\n"),
    );
    assert_eq!(answer, "HTTP/1.1 200 Connection established\r\n\r\npong");

    let answer = through(port, &format!("CONNECT 127.0.0.1:{other} HTTP/1.1\r\n\r\n"));
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(
        answer.contains(&format!(
            "127.0.0.1:{other} is not on agent alice's allow-list"
        )),
        "{answer}"
    );
}

#[test]
fn the_proxy_names_the_agent_whose_socket_was_used_whatever_the_request_says() {
    let d = Daemon::start_with_config("{}");
    let _service = egress_service(&d, &[]);
    spawn(&d, "alice");
    spawn(&d, "bob");
    let bob = d.agent_socket("bob").with_file_name("egress.sock");
    let answer = on_socket(
        &bob,
        "CONNECT example.org:443 HTTP/1.1\r\nX-Agent: alice\r\nProxy-Authorization: alice\r\n\r\n",
    );
    assert!(
        answer.contains("example.org:443 is not on agent bob's allow-list"),
        "{answer}"
    );
}

#[test]
fn without_the_egress_service_an_agent_is_told_503_and_who_must_start_it() {
    let d = Daemon::start_with_config("{}");
    spawn(&d, "alice");
    let alice = d.agent_socket("alice").with_file_name("egress.sock");
    let answer = on_socket(&alice, "CONNECT api.anthropic.com:443 HTTP/1.1\r\n\r\n");
    assert!(answer.starts_with("HTTP/1.1 503 "), "{answer}");
    assert!(answer.contains("hive-c0re-egress"), "{answer}");
}

#[test]
fn a_client_still_writing_its_request_after_the_503_reads_it_instead_of_a_broken_pipe() {
    let d = Daemon::start_with_config("{}");
    spawn(&d, "alice");
    let alice = d.agent_socket("alice").with_file_name("egress.sock");
    let mut s = std::os::unix::net::UnixStream::connect(&alice).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // With no egress service the daemon answers at once, before reading.
    std::thread::sleep(Duration::from_millis(300));
    s.write_all(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\n\r\n")
        .expect("the daemon still takes the request it answered");
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    assert!(out.starts_with("HTTP/1.1 503 "), "{out}");
}

#[test]
fn destroy_removes_the_agents_egress_socket_with_its_agent_socket() {
    let d = Daemon::start_with_config("{}");
    spawn(&d, "alice");
    let egress = d.agent_socket("alice").with_file_name("egress.sock");
    assert!(egress.exists());
    assert_eq!(
        d.request(r#"{"cmd":"destroy","name":"alice"}"#),
        r#"{"version":1,"ok":true}"#
    );
    assert!(!egress.exists());
}

/// `hive-agent call TOOL ARGS` as agent `name` would (its own socket):
/// exit code and output.
fn call(d: &Daemon, name: &str, tool: &str, args: &str) -> (i32, String) {
    let out = Command::new(AGENT)
        .args(["call", tool, args, "--socket"])
        .arg(d.agent_socket(name))
        .output()
        .unwrap();
    let text = String::from_utf8_lossy(&out.stdout).into_owned();
    (out.status.code().unwrap_or(-1), text)
}

#[test]
fn an_operators_grant_opens_a_host_to_that_agent_alone_and_a_revoke_closes_it() {
    let port = target();
    let d = Daemon::start_with_config("{}");
    let _service = egress_service(&d, &[]);
    spawn(&d, "alice");
    spawn(&d, "bob");
    let (_fwd, alice) = forwarder(&d, "alice");
    let connect = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    let host = format!("127.0.0.1:{port}");
    assert!(through(alice, &connect).starts_with("HTTP/1.1 403 "));

    let (code, out, err) = hivectl(&d, &["grant", "alice", "--egress", &host, "--for", "1h"]);
    assert_eq!((code, out.as_str()), (0, "alice: granted\n"), "{err}");
    assert!(through(alice, &connect).ends_with("\r\n\r\npong"));
    let bob = d.agent_socket("bob").with_file_name("egress.sock");
    assert!(
        on_socket(&bob, &connect).starts_with("HTTP/1.1 403 "),
        "bob got alice's grant"
    );
    let (_, grants, _) = hivectl(&d, &["grants", "alice"]);
    assert!(grants.contains(&format!("{host} (until ")), "{grants}");

    assert_eq!(hivectl(&d, &["revoke", "alice", "--egress", &host]).0, 0);
    assert!(through(alice, &connect).starts_with("HTTP/1.1 403 "));
}

#[test]
fn request_egress_then_approve_opens_the_host_to_the_agent_that_asked() {
    let port = target();
    let d = Daemon::start_with_config("{}");
    let _service = egress_service(&d, &[]);
    spawn(&d, "alice");
    let (_fwd, alice) = forwarder(&d, "alice");
    let connect = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    let args = format!(r#"{{"host":"127.0.0.1:{port}","reason":"the test's stand-in"}}"#);

    let (code, out) = call(&d, "alice", "request_egress", &args);
    assert_eq!(code, 0, "{out}");
    assert!(
        through(alice, &connect).starts_with("HTTP/1.1 403 "),
        "granted before approval"
    );
    let (_, pending, _) = hivectl(&d, &["pending"]);
    assert!(
        pending.contains("egress") && pending.contains("alice"),
        "{pending}"
    );
    let (_, ids, _) = hivectl(&d, &["pending", "-q"]);
    let (code, out, err) = hivectl(&d, &["approve", ids.trim(), "--for", "2h"]);
    assert_eq!(code, 0, "{out}{err}");
    assert!(through(alice, &connect).ends_with("\r\n\r\npong"));
    let (_, grants, _) = hivectl(&d, &["grants", "alice"]);
    assert!(
        grants.contains(&format!("127.0.0.1:{port} (until ")),
        "{grants}"
    );

    // Asking again is refused with its code: the host is there already.
    let (code, out) = call(&d, "alice", "request_egress", &args);
    assert_eq!(code, 1, "{out}");
    assert!(out.contains("already_allowed"), "{out}");
}

#[test]
fn an_allow_listed_name_resolving_to_loopback_is_refused_naming_the_address() {
    // Before issue 44 the service dialled whatever the granted name
    // resolved to: here the host's own loopback listener.
    let port = target();
    let d = Daemon::start_with_config(&format!(
        r#"{{"egress_allow": ["localhost:{port}", "127.0.0.1:{port}"]}}"#
    ));
    let _service = egress_service(&d, &[]);
    spawn(&d, "alice");
    let (_fwd, fwd) = forwarder(&d, "alice");
    let answer = through(fwd, &format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n"));
    assert!(answer.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{answer}");
    assert!(
        answer.contains(&format!("localhost:{port} resolved to ")) && answer.contains("loopback"),
        "{answer}"
    );
    assert!(answer.contains("grant its IP literal"), "{answer}");
    // The operator's IP literal of the same service is dialled.
    let answer = through(fwd, &format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n"));
    assert!(answer.ends_with("\r\n\r\npong"), "{answer}");
}

#[test]
fn one_agents_connection_flood_is_answered_429_and_leaves_another_agent_served() {
    let d = Daemon::start_with_config("{}");
    let _service = egress_service(&d, &[]);
    spawn(&d, "mallory");
    spawn(&d, "bob");
    let mallory = d.agent_socket("mallory").with_file_name("egress.sock");
    let request = "CONNECT example.org:443 HTTP/1.1\r\n\r\n";
    // 150 in a row: the first 64 and what refills (16 a second) are
    // refused 403 as off the list, the rest 429.
    let answers: Vec<String> = (0..150).map(|_| on_socket(&mallory, request)).collect();
    let limited = answers
        .iter()
        .filter(|a| a.starts_with("HTTP/1.1 429 "))
        .count();
    assert!(limited > 0, "no 429 in 150 connections");
    assert!(
        answers
            .iter()
            .any(|a| a.contains("agent mallory opened more than 64 connections")),
        "{:?}",
        answers.last()
    );
    let bob = d.agent_socket("bob").with_file_name("egress.sock");
    let answer = on_socket(&bob, request);
    assert!(
        answer.contains("example.org:443 is not on agent bob's allow-list"),
        "{answer}"
    );
}

/// Agent `name`'s egress audit as `hivectl egress-log --json` answers it,
/// once the audit's batched write had its time.
fn egress_log(d: &Daemon, name: &str) -> Vec<serde_json::Value> {
    std::thread::sleep(Duration::from_millis(800));
    let (code, out, err) = hivectl(d, &["--json", "egress-log", name, "-n", "1000"]);
    assert_eq!(code, 0, "{out}{err}");
    let answer: serde_json::Value = serde_json::from_str(&out).unwrap();
    answer["egress_log"].as_array().cloned().unwrap_or_default()
}

#[test]
fn egress_log_shows_each_connection_with_its_verdict_target_address_and_bytes() {
    let (allowed, other) = (target(), target());
    let d = Daemon::start_with_config(&format!(r#"{{"egress_allow": ["127.0.0.1:{allowed}"]}}"#));
    let _service = egress_service(&d, &[]);
    spawn(&d, "alice");
    spawn(&d, "bob");
    let (_fwd, port) = forwarder(&d, "alice");
    let connect = format!("CONNECT 127.0.0.1:{allowed} HTTP/1.1\r\n\r\n");
    assert!(through(port, &connect).ends_with("\r\n\r\npong"));
    let refused = format!("CONNECT 127.0.0.1:{other} HTTP/1.1\r\n\r\n");
    assert!(through(port, &refused).starts_with("HTTP/1.1 403 "));

    let rows = egress_log(&d, "alice");
    assert_eq!(rows.len(), 2, "{rows:?}");
    let target = format!("127.0.0.1:{allowed}");
    assert_eq!(rows[0]["verdict"], "allowed");
    assert_eq!(rows[0]["target"], target.as_str());
    assert_eq!(rows[0]["address"], target.as_str());
    // What the agent got, the verdict line taken off: the 200 and "pong".
    let got = "HTTP/1.1 200 Connection established\r\n\r\npong".len();
    assert_eq!(rows[0]["down"], got, "{rows:?}");
    assert!(rows[0]["up"].as_u64().unwrap() > 0, "{rows:?}");
    assert_eq!(rows[1]["verdict"], "refused");
    assert_eq!(rows[1]["target"], format!("127.0.0.1:{other}").as_str());
    assert_eq!(rows[1]["reason"], "not on its allow-list");

    let (code, text, _) = hivectl(&d, &["egress-log", "alice"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 3, "{text}");
    assert!(
        lines[1].contains("allowed") && lines[1].contains(&target),
        "{text}"
    );
    assert!(lines[2].contains("refused") && lines[2].contains("not on its allow-list"));
    assert_eq!(egress_log(&d, "bob"), Vec::<serde_json::Value>::new());
}

#[test]
fn egress_log_refuses_an_unknown_agent_and_a_limit_out_of_range_with_their_codes() {
    let d = Daemon::start_with_config("{}");
    spawn(&d, "alice");
    let (code, _, err) = hivectl(&d, &["egress-log", "ghost"]);
    assert_eq!(code, 1, "{err}");
    assert!(err.contains("\"ghost\" is not managed"), "{err}");
    let answer = d.request(r#"{"cmd":"egress_log","name":"ghost"}"#);
    assert!(answer.contains(r#""code":"unknown_agent""#), "{answer}");
    for limit in ["0", "10001"] {
        let (code, _, err) = hivectl(&d, &["egress-log", "alice", "-n", limit]);
        assert_eq!(code, 1, "{err}");
        assert!(
            err.contains(&format!("limit {limit} is out of range")),
            "{err}"
        );
    }
    let answer = d.request(r#"{"cmd":"egress_log","name":"alice","limit":0}"#);
    assert!(answer.contains(r#""code":"bad_request""#), "{answer}");
}

#[test]
fn a_429_flood_is_counted_into_few_rows_and_leaves_another_agents_rows_in_the_audit() {
    let d = Daemon::start_with_config(r#"{"egress_audit_rows_per_agent": 20}"#);
    let _service = egress_service(&d, &[]);
    spawn(&d, "mallory");
    spawn(&d, "bob");
    let request = "CONNECT example.org:443 HTTP/1.1\r\n\r\n";
    let bob = d.agent_socket("bob").with_file_name("egress.sock");
    assert!(on_socket(&bob, request).starts_with("HTTP/1.1 403 "));
    let mallory = d.agent_socket("mallory").with_file_name("egress.sock");
    let answers: Vec<String> = (0..300).map(|_| on_socket(&mallory, request)).collect();
    let limited = answers
        .iter()
        .filter(|a| a.starts_with("HTTP/1.1 429 "))
        .count() as u64;
    assert!(limited > 0, "no 429 in 300 connections");

    let rows = egress_log(&d, "mallory");
    assert!(rows.len() <= 20, "{} rows", rows.len());
    let counted = |verdict: &str| -> u64 {
        rows.iter()
            .filter(|r| r["verdict"] == verdict)
            .map(|r| r["count"].as_u64().unwrap())
            .sum()
    };
    // Every connection is counted (the flood stays within a few minutes'
    // rows, far below the bound).
    assert_eq!(counted("limited"), limited, "{rows:?}");
    assert_eq!(counted("refused"), 300 - limited, "{rows:?}");
    let bobs = egress_log(&d, "bob");
    assert_eq!(bobs.len(), 1, "{bobs:?}");
    assert_eq!(bobs[0]["verdict"], "refused");
}
