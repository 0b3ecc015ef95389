//! The agent and manager sockets end to end: the real daemon with the fake
//! driver, agents spawned over host.sock, their harness side played by
//! plain socket connections.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use std::collections::HashSet;
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, Ordering};
use std::time::{Duration, Instant};

use common::{Conn, daemon_with};
use serde_json::Value;

const OK: &str = r#"{"kind":"ok"}"#;
/// A send that reached one inbox.
const SENT: &str = r#"{"kind":"ok","delivered":1}"#;
const HOST_OK: &str = r#"{"version":1,"ok":true}"#;

fn send(c: &mut Conn, to: &str, body: &str) -> String {
    c.ask(&format!(r#"{{"cmd":"send","to":"{to}","body":"{body}"}}"#))
}

fn bodies(messages: &[Value]) -> Vec<(String, String)> {
    messages
        .iter()
        .map(|m| {
            (
                m["from"].as_str().unwrap().to_owned(),
                m["body"].as_str().unwrap().to_owned(),
            )
        })
        .collect()
}

fn pair(from: &str, body: &str) -> (String, String) {
    (from.to_owned(), body.to_owned())
}

#[test]
fn sockets_are_bound_per_agent_and_for_the_manager_at_the_spec_paths() {
    let d = daemon_with(&["alice"]);
    assert!(d.agent_socket("alice").exists());
    assert!(d.manager_socket().exists());
    // The manager has its own socket, not an agent one.
    assert!(!d.agent_socket("ruth").exists());
    use std::os::unix::fs::PermissionsExt;
    let mode = std::fs::metadata(d.agent_socket("alice"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
    // Destroy removes the socket with the agent.
    assert_eq!(d.request(r#"{"cmd":"destroy","name":"alice"}"#), HOST_OK);
    assert!(!d.agent_socket("alice").exists());
}

#[test]
fn two_agents_exchange_messages() {
    let d = daemon_with(&["alice", "bob"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert_eq!(send(&mut alice, "bob", "hello bob"), SENT);
    let got = bob.recv(5, 10);
    assert_eq!(bodies(&got), [pair("alice", "hello bob")]);
    let id = got[0]["id"].as_i64().unwrap();
    assert_eq!(
        bob.ask(&format!(
            r#"{{"cmd":"send","to":"alice","body":"hi alice","in_reply_to":{id}}}"#
        )),
        SENT
    );
    assert_eq!(bob.ask(r#"{"cmd":"ack_turn"}"#), OK);
    let got = alice.recv(5, 10);
    assert_eq!(bodies(&got), [pair("bob", "hi alice")]);
    assert_eq!(got[0]["in_reply_to"].as_i64(), Some(id));
    assert_eq!(
        send(&mut alice, "nobody", "x"),
        r#"{"kind":"err","message":"no recipient \"nobody\" in this hive: send to a managed agent, \"operator\", \"<parent>\", \"<children>\" or \"agent@hive\"","code":"unknown_recipient"}"#
    );
}

#[test]
fn parent_and_children_follow_a_set_parent_without_restart() {
    let d = daemon_with(&["alice", "bob", "carol"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let mut bob = Conn::open(&d.agent_socket("bob"));
    let mut carol = Conn::open(&d.agent_socket("carol"));
    let mut ruth = Conn::open(&d.manager_socket());
    ruth.recv(0, 100); // the spawn events

    // Spawned agents are the manager's children.
    assert_eq!(send(&mut bob, "<parent>", "to my parent"), SENT);
    assert_eq!(bodies(&ruth.recv(5, 10)), [pair("bob", "to my parent")]);

    // Move bob under alice: the same connection now reaches alice.
    assert_eq!(
        d.request(r#"{"cmd":"set_parent","child":"bob","new_parent":"alice"}"#),
        HOST_OK
    );
    assert_eq!(send(&mut bob, "<parent>", "new parent"), SENT);
    assert_eq!(bodies(&alice.recv(5, 10)), [pair("bob", "new parent")]);
    assert_eq!(send(&mut alice, "<children>", "to my kids"), SENT);
    assert_eq!(bodies(&bob.recv(5, 10)), [pair("alice", "to my kids")]);
    assert!(carol.recv(0, 10).is_empty());

    // The manager's children are now alice and carol.
    assert_eq!(
        send(&mut ruth, "<children>", "all hands"),
        r#"{"kind":"ok","delivered":2}"#
    );
    assert_eq!(bodies(&alice.recv(5, 10)), [pair("ruth", "all hands")]);
    assert_eq!(bodies(&carol.recv(5, 10)), [pair("ruth", "all hands")]);
    assert!(bob.recv(0, 10).is_empty());

    // A root agent's parent is the operator; a leaf's children are nobody.
    assert_eq!(
        d.request(r#"{"cmd":"set_parent","child":"bob","new_parent":null}"#),
        HOST_OK
    );
    assert_eq!(send(&mut bob, "<parent>", "up to the operator"), SENT);
    let inbox = d.request(r#"{"cmd":"inbox"}"#);
    assert!(
        inbox.contains(r#""from":"bob","body":"up to the operator""#),
        "{inbox}"
    );
    // The answer says so: it reached no inbox.
    assert_eq!(
        send(&mut bob, "<children>", "nobody hears this"),
        r#"{"kind":"ok","delivered":0}"#
    );
    assert!(alice.recv(0, 10).is_empty());
}

#[test]
fn a_long_poll_wakes_promptly_on_send() {
    let d = daemon_with(&["alice", "bob"]);
    let mut bob = Conn::open(&d.agent_socket("bob"));
    let poll = std::thread::spawn(move || {
        let got = bob.recv(30, 10);
        (got, Instant::now())
    });
    // Let the poll reach its wait: there is no event to await for "the
    // daemon is now waiting". Were it not yet waiting, the message would
    // simply be popped at once and the timing below still holds.
    std::thread::sleep(Duration::from_millis(300));
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let sent = Instant::now();
    assert_eq!(send(&mut alice, "bob", "wake up"), SENT);
    let (got, answered) = poll.join().unwrap();
    assert_eq!(bodies(&got), [pair("alice", "wake up")]);
    let latency = answered.saturating_duration_since(sent);
    assert!(
        latency < Duration::from_secs(1),
        "the poll answered {latency:?} after the send (its wait was 30 s)"
    );
}

#[test]
fn nothing_is_handed_out_twice_while_in_flight() {
    let d = daemon_with(&["alice", "bob"]);
    let done = Arc::new(AtomicBool::new(false));
    // Two harness connections of the same agent race for its inbox.
    let receivers: Vec<_> = (0..2)
        .map(|_| {
            let mut bob = Conn::open(&d.agent_socket("bob"));
            let done = done.clone();
            std::thread::spawn(move || {
                let mut ids = Vec::new();
                loop {
                    let finished = done.load(Ordering::SeqCst);
                    let got = bob.recv(1, 7);
                    if got.is_empty() && finished {
                        return ids;
                    }
                    ids.extend(got.iter().map(|m| m["id"].as_i64().unwrap()));
                }
            })
        })
        .collect();
    let mut alice = Conn::open(&d.agent_socket("alice"));
    for n in 0..300 {
        assert_eq!(send(&mut alice, "bob", &format!("m{n}")), SENT);
    }
    done.store(true, Ordering::SeqCst);
    let all: Vec<i64> = receivers
        .into_iter()
        .flat_map(|r| r.join().unwrap())
        .collect();
    let unique: HashSet<i64> = all.iter().copied().collect();
    assert_eq!(
        all.len(),
        300,
        "handed out {} times for 300 messages",
        all.len()
    );
    assert_eq!(unique.len(), 300);
}

#[test]
fn ack_requeue_and_redelivered_follow_the_harness_cycle() {
    let d = daemon_with(&["alice", "bob"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let mut bob = Conn::open(&d.agent_socket("bob"));
    for body in ["one", "two", "three"] {
        assert_eq!(send(&mut alice, "bob", body), SENT);
    }
    assert_eq!(
        bob.ask(r#"{"cmd":"status"}"#),
        r#"{"kind":"status","unread":3}"#
    );
    let first = bob.recv(0, 2);
    assert_eq!(first.len(), 2);
    assert_eq!(
        bob.ask(r#"{"cmd":"status"}"#),
        r#"{"kind":"status","unread":1}"#
    );
    // A crash mid-turn: the harness requeues at boot.
    assert_eq!(bob.ask(r#"{"cmd":"requeue_inflight"}"#), OK);
    let again = bob.recv(0, 10);
    let flags: Vec<(&str, bool)> = again
        .iter()
        .map(|m| {
            (
                m["body"].as_str().unwrap(),
                m["redelivered"].as_bool().unwrap(),
            )
        })
        .collect();
    assert_eq!(flags, [("one", true), ("two", true), ("three", false)]);
    assert_eq!(bob.ask(r#"{"cmd":"ack_turn"}"#), OK);
    // Acked: a requeue brings nothing back.
    assert_eq!(bob.ask(r#"{"cmd":"requeue_inflight"}"#), OK);
    assert!(bob.recv(0, 10).is_empty());
    // recent is newest first and changes nothing.
    let recent = bob.ask(r#"{"cmd":"recent","limit":2}"#);
    let v: Value = serde_json::from_str(&recent).unwrap();
    let rows: Vec<&str> = v["rows"]
        .as_array()
        .unwrap()
        .iter()
        .map(|r| r["body"].as_str().unwrap())
        .collect();
    assert_eq!(rows, ["three", "two"]);
    // operator_msg and wake land in my own inbox.
    assert_eq!(
        bob.ask(r#"{"cmd":"operator_msg","body":"from my page"}"#),
        OK
    );
    assert_eq!(
        bob.ask(r#"{"cmd":"wake","from":"bash","body":"task done","transient":true}"#),
        OK
    );
    assert_eq!(
        bodies(&bob.recv(0, 10)),
        [pair("bash", "task done"), pair("operator", "from my page")]
    );
}

#[test]
fn a_request_on_agent_a_socket_can_never_read_or_act_as_agent_b() {
    let d = daemon_with(&["alice", "bob"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert_eq!(send(&mut alice, "bob", "for bob only"), SENT);
    // Fields naming someone else are ignored: identity is the socket.
    assert_eq!(
        alice.ask(r#"{"cmd":"send","to":"bob","body":"forged","from":"ruth","agent":"ruth"}"#),
        SENT
    );
    assert_eq!(
        alice.ask(r#"{"cmd":"status","agent":"bob"}"#),
        r#"{"kind":"status","unread":0}"#
    );
    assert!(alice.recv(0, 10).is_empty());
    assert_eq!(
        alice.ask(r#"{"cmd":"recent","limit":10,"name":"bob"}"#),
        r#"{"kind":"recent","rows":[]}"#
    );
    assert_eq!(
        alice.ask(r#"{"cmd":"set_status","text":"busy","name":"bob"}"#),
        OK
    );
    let got = bob.recv(0, 10);
    assert_eq!(
        bodies(&got),
        [pair("alice", "for bob only"), pair("alice", "forged")]
    );
    // alice's ack and requeue do not touch bob's in-flight messages.
    assert_eq!(alice.ask(r#"{"cmd":"ack_turn"}"#), OK);
    assert_eq!(alice.ask(r#"{"cmd":"requeue_inflight"}"#), OK);
    assert_eq!(bob.ask(r#"{"cmd":"requeue_inflight"}"#), OK);
    assert_eq!(
        bob.recv(0, 10).len(),
        2,
        "bob's messages were still his, in flight"
    );
    // set_status changed alice, not bob.
    let meta_bob = bob.ask(r#"{"cmd":"get_agent_meta"}"#);
    let (head, rev) = meta_bob.split_once(r#","hyperhive_rev":""#).unwrap();
    assert_eq!(head, r#"{"kind":"agent_meta","name":"bob","running":true"#);
    assert!(
        rev.len() == 42 && rev.ends_with(r#""}"#),
        "bob's deployed config commit: {meta_bob}"
    );
    let meta_alice = bob.ask(r#"{"cmd":"get_agent_meta","name":"alice"}"#);
    assert!(
        meta_alice.contains(r#""name":"alice","running":true,"hyperhive_rev":""#)
            && meta_alice.contains(r#"","status_text":"busy""#),
        "{meta_alice}"
    );
}

#[test]
fn the_manager_receives_config_ready_and_approval_resolved_after_an_operator_approve() {
    let d = daemon_with(&["alice"]);
    let mut ruth = Conn::open(&d.manager_socket());
    ruth.recv(0, 100); // the spawn event
    assert_eq!(
        ruth.ask(r#"{"cmd":"request_init_config","name":"carol","description":"a tester"}"#),
        r#"{"kind":"ok","approval":1}"#
    );
    let pending = d.request(r#"{"cmd":"pending"}"#);
    assert!(
        pending.contains(r#""id":1,"agent":"carol","kind":"init_config","commit_ref":"""#),
        "{pending}"
    );
    d.request(r#"{"cmd":"approve","id":1}"#);
    let got = ruth.recv(10, 10);
    assert_eq!(got.len(), 2, "{got:?}");
    let events: Vec<Value> = got
        .iter()
        .map(|m| {
            assert_eq!(m["from"], "system");
            serde_json::from_str(m["body"].as_str().unwrap()).unwrap()
        })
        .collect();
    assert_eq!(events[0]["event"], "config_ready");
    assert_eq!(events[0]["agent"], "carol");
    assert_eq!(events[1]["event"], "approval_resolved");
    assert_eq!(events[1]["id"], 1);
    assert_eq!(events[1]["agent"], "carol");
    assert_eq!(events[1]["status"], "approved");
}

#[test]
fn a_privileged_variant_on_an_agent_socket_is_refused_with_the_spec_message() {
    let d = daemon_with(&["alice"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert_eq!(
        alice.ask(r#"{"cmd":"kill","name":"alice"}"#),
        r#"{"kind":"err","message":"privileged variant kill is refused on an agent socket","code":"denied"}"#
    );
    // ... and the connection goes on.
    assert_eq!(
        alice.ask(r#"{"cmd":"status"}"#),
        r#"{"kind":"status","unread":0}"#
    );
    let status = d.request(r#"{"cmd":"agent_status"}"#);
    assert!(
        status.contains(r#""name":"alice","running":true"#),
        "{status}"
    );
}

#[test]
fn the_operator_reads_its_inbox_and_sends_to_an_agent_over_host_sock() {
    let d = daemon_with(&["alice"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert_eq!(send(&mut alice, "operator", "first"), SENT);
    assert_eq!(send(&mut alice, "operator", "second"), SENT);
    let inbox = d.request(r#"{"cmd":"inbox","limit":1}"#);
    assert!(
        inbox.starts_with(r#"{"version":1,"ok":true,"messages":[{"id":"#)
            && inbox.contains(r#""from":"alice","body":"second""#)
            && !inbox.contains("first"),
        "{inbox}"
    );
    assert_eq!(
        d.request(r#"{"cmd":"send","to":"alice","body":"hello from the operator"}"#),
        HOST_OK
    );
    assert_eq!(
        bodies(&alice.recv(5, 10)),
        [pair("operator", "hello from the operator")]
    );
    let refused = d.request(r#"{"cmd":"send","to":"zed","body":"x"}"#);
    assert!(
        refused.contains(r#"agent \"zed\" is not managed"#),
        "{refused}"
    );
}

#[test]
fn sigterm_ends_open_long_polls_promptly_and_removes_the_agent_sockets() {
    let d = daemon_with(&["alice"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert_eq!(
        alice.ask(r#"{"cmd":"status"}"#),
        r#"{"kind":"status","unread":0}"#
    );
    let poll = std::thread::spawn(move || alice.recv(170, 10));
    // The poll is in flight (or about to be): either way the drain must
    // not wait for its 170 s.
    let (agent_socket, manager_socket) = (d.agent_socket("alice"), d.manager_socket());
    let started = Instant::now();
    let pid = nix::unistd::Pid::from_raw(d.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    assert!(d.terminate_wait().success());
    assert!(
        started.elapsed() < Duration::from_secs(8),
        "{:?}",
        started.elapsed()
    );
    // The poll got its (empty) answer or its connection closed.
    let _ = poll.join();
    assert!(!agent_socket.exists() && !manager_socket.exists());
}
