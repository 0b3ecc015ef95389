//! Nothing done twice (issue 47): an acting request on an agent socket
//! that carries an idempotency key is answered once per agent and key; a
//! repeat gets the first answer and acts no more, also after the daemon was
//! SIGKILLed and started again on the same state. The real daemon (fake
//! driver), harnesses played by plain socket connections.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use common::{Conn, Daemon, Launch, daemon_with};

const SENT: &str = r#"{"kind":"ok","delivered":1}"#;

fn keyed_send(c: &mut Conn, to: &str, body: &str, key: &str) -> String {
    c.ask(&format!(
        r#"{{"cmd":"send","to":"{to}","body":"{body}","idempotency_key":"{key}"}}"#
    ))
}

/// The bodies waiting in `c`'s inbox (popped, then acked).
fn inbox(c: &mut Conn) -> Vec<String> {
    let got = c.recv(0, 100);
    assert_eq!(c.ask(r#"{"cmd":"ack_turn"}"#), r#"{"kind":"ok"}"#);
    got.iter()
        .map(|m| m["body"].as_str().unwrap().to_owned())
        .collect()
}

#[test]
fn a_repeated_send_with_the_same_key_delivers_once_and_gets_the_first_answer_also_after_a_daemon_restart()
 {
    let d = daemon_with(&["alice", "bob"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert_eq!(keyed_send(&mut alice, "bob", "deploy done", "k-1"), SENT);
    assert_eq!(keyed_send(&mut alice, "bob", "deploy done", "k-1"), SENT);
    // The daemon killed and started again on the same state.
    let dir = d.kill_hard();
    let d = Daemon::start_in(dir, Launch::Standalone);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert_eq!(keyed_send(&mut alice, "bob", "deploy done", "k-1"), SENT);
    // Another key is another send; no key is the send of old.
    assert_eq!(keyed_send(&mut alice, "bob", "deploy done", "k-2"), SENT);
    assert_eq!(
        alice.ask(r#"{"cmd":"send","to":"bob","body":"deploy done"}"#),
        SENT
    );
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert_eq!(inbox(&mut bob), ["deploy done"; 3]);
}

#[test]
fn a_repeat_is_answered_as_the_first_time_even_when_the_first_send_reached_several_inboxes() {
    // Spawned agents are the manager's children.
    let d = daemon_with(&["alice", "bob"]);
    let mut ruth = Conn::open(&d.manager_socket());
    let first = keyed_send(&mut ruth, "<children>", "stand by", "fan-1");
    assert_eq!(first, r#"{"kind":"ok","delivered":2}"#);
    assert_eq!(
        keyed_send(&mut ruth, "<children>", "stand by", "fan-1"),
        first
    );
    for child in ["alice", "bob"] {
        let mut c = Conn::open(&d.agent_socket(child));
        assert_eq!(inbox(&mut c), ["stand by"], "{child}");
    }
}

#[test]
fn one_agents_key_never_answers_another_agents_request() {
    let d = daemon_with(&["alice", "bob"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert_eq!(keyed_send(&mut alice, "bob", "from alice", "same"), SENT);
    // Bob uses alice's key: his own send, delivered, not alice's answer.
    assert_eq!(keyed_send(&mut bob, "alice", "from bob", "same"), SENT);
    assert_eq!(inbox(&mut alice), ["from bob"]);
    assert_eq!(inbox(&mut bob), ["from alice"]);
}

#[test]
fn a_repeated_question_or_reminder_is_queued_once_and_answered_with_the_first_id_across_a_restart()
{
    let d = daemon_with(&["alice"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let ask = r#"{"cmd":"ask","question":"deploy?","idempotency_key":"q-1"}"#;
    let first = alice.ask(ask);
    assert_eq!(first, r#"{"kind":"question_queued","id":1}"#);
    let remind = r#"{"cmd":"remind","message":"later","timing":{"timing_type":"in_seconds","seconds":3600},"idempotency_key":"r-1"}"#;
    assert_eq!(alice.ask(remind), r#"{"kind":"ok"}"#);
    let dir = d.kill_hard();
    let d = Daemon::start_in(dir, Launch::Standalone);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert_eq!(alice.ask(ask), first);
    assert_eq!(alice.ask(remind), r#"{"kind":"ok"}"#);
    let open = d.request(r#"{"cmd":"questions"}"#);
    assert_eq!(open.matches(r#""question":"deploy?""#).count(), 1, "{open}");
    assert_eq!(
        alice.ask(r#"{"cmd":"count_pending_reminders"}"#),
        r#"{"kind":"pending_reminders_count","count":1}"#
    );
    // A new key asks again.
    assert_eq!(
        alice.ask(r#"{"cmd":"ask","question":"deploy?","idempotency_key":"q-2"}"#),
        r#"{"kind":"question_queued","id":2}"#
    );
}

#[test]
fn a_refused_request_is_not_kept_so_its_repeat_is_served_again() {
    let d = daemon_with(&["alice"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let refused = keyed_send(&mut alice, "bob", "hi", "k-1");
    assert!(refused.contains(r#""kind":"err""#), "{refused}");
    assert_eq!(
        d.request(r#"{"cmd":"spawn","name":"bob"}"#),
        r#"{"version":1,"ok":true}"#
    );
    assert_eq!(keyed_send(&mut alice, "bob", "hi", "k-1"), SENT);
}

#[test]
fn a_malformed_key_is_refused_and_nothing_is_sent() {
    let d = daemon_with(&["alice", "bob"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    for key in [
        r#""../x""#,
        r#""""#,
        "7",
        &format!("\"{}\"", "k".repeat(65)),
    ] {
        let answer = alice.ask(&format!(
            r#"{{"cmd":"send","to":"bob","body":"hi","idempotency_key":{key}}}"#
        ));
        assert!(
            answer.contains(r#""code":"bad_request""#) && answer.contains("idempotency_key"),
            "{key}: {answer}"
        );
    }
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert!(inbox(&mut bob).is_empty());
}
