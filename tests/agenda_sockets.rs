//! The agenda over the agent and manager sockets, end to end: the real
//! daemon (fake driver), harnesses played by plain socket connections, the
//! operator by host.sock. Waits are long polls on `recv`, never sleeps.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use common::{Conn, daemon_with};
use serde_json::Value;

const OK: &str = r#"{"kind":"ok"}"#;
const HOST_OK: &str = r#"{"version":1,"ok":true}"#;

/// The next message to `c` (waiting up to 10 s): `(from, body as JSON or
/// string)`.
fn next(c: &mut Conn) -> (String, Value) {
    let got = c.recv(10, 1);
    assert_eq!(got.len(), 1, "{got:?}");
    let body = got[0]["body"].as_str().unwrap();
    let parsed = serde_json::from_str(body).unwrap_or_else(|_| Value::String(body.into()));
    assert_eq!(c.ask(r#"{"cmd":"ack_turn"}"#), OK);
    (got[0]["from"].as_str().unwrap().to_owned(), parsed)
}

#[test]
fn an_agent_asks_the_operator_and_hears_the_answer_given_on_host_sock() {
    let d = daemon_with(&["alice"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert_eq!(
        alice.ask(r#"{"cmd":"ask","question":"deploy?","options":["yes","no"]}"#),
        r#"{"kind":"question_queued","id":1}"#
    );
    let open = d.request(r#"{"cmd":"questions"}"#);
    assert!(
        open.contains(r#""id":1,"asker":"alice","question":"deploy?""#),
        "{open}"
    );
    assert_eq!(
        d.request(r#"{"cmd":"answer","id":1,"answer":"yes"}"#),
        HOST_OK
    );
    let (from, event) = next(&mut alice);
    assert_eq!(from, "system");
    assert_eq!(event["event"], "question_answered");
    assert_eq!(
        (event["answer"].as_str(), event["answerer"].as_str()),
        (Some("yes"), Some("operator"))
    );
}

#[test]
fn an_agent_asks_another_which_answers_on_its_own_socket() {
    let d = daemon_with(&["alice", "bob"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert_eq!(
        alice.ask(r#"{"cmd":"ask","question":"lunch?","to":"bob"}"#),
        r#"{"kind":"question_queued","id":1}"#
    );
    let (from, asked) = next(&mut bob);
    assert_eq!(
        (from.as_str(), asked["event"].as_str()),
        ("system", Some("question_asked"))
    );
    assert_eq!(asked["asker"], "alice");
    // Alice is not the target: she cannot answer her own question.
    let refused = alice.ask(r#"{"cmd":"answer","id":1,"answer":"sure"}"#);
    assert!(
        refused.contains("only its target or the operator"),
        "{refused}"
    );
    assert_eq!(bob.ask(r#"{"cmd":"answer","id":1,"answer":"sure"}"#), OK);
    let (_, answered) = next(&mut alice);
    assert_eq!(
        (answered["answer"].as_str(), answered["answerer"].as_str()),
        (Some("sure"), Some("bob"))
    );
}

#[test]
fn a_reminder_arrives_from_reminder_when_due_and_loose_ends_follow_the_scoping_rules() {
    let d = daemon_with(&["alice", "bob"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert_eq!(
        bob.ask(r#"{"cmd":"remind","message":"much later","timing":{"timing_type":"in_seconds","seconds":3600}}"#),
        OK
    );
    let status = common::without_deployed_sha(&d.request(r#"{"cmd":"agent_status"}"#));
    assert!(status.contains(r#""name":"bob","running":true,"failed":false,"needs_update":false,"needs_login":false,"pending_reminders":1"#), "{status}");
    // Bob is not alice's child: refused until the operator grants.
    let refused = alice.ask(r#"{"cmd":"get_loose_ends","agent":"bob"}"#);
    assert!(refused.contains("query_agent_state"), "{refused}");
    // Allowed at once; the note says the sessions' tool list follows at a rebuild.
    let granted = d.request(r#"{"cmd":"grant","name":"alice","capability":"query_agent_state"}"#);
    assert!(
        granted.starts_with(r#"{"version":1,"ok":true,"note":"alice: granted capability"#),
        "{granted}"
    );
    let ends = alice.ask(r#"{"cmd":"get_loose_ends","agent":"bob"}"#);
    assert!(
        ends.contains(r#""kind":"reminder","id":1,"owner":"bob","message":"much later""#),
        "{ends}"
    );
    // A reminder due at once is delivered by the daemon's timer.
    assert_eq!(
        alice.ask(
            r#"{"cmd":"remind","message":"now","timing":{"timing_type":"in_seconds","seconds":0}}"#
        ),
        OK
    );
    assert_eq!(
        next(&mut alice),
        ("reminder".to_owned(), Value::String("now".into()))
    );
}

#[test]
fn an_approved_schedule_prompt_is_listed_and_fired_to_its_targets() {
    let d = daemon_with(&["alice"]);
    let mut ruth = Conn::open(&d.manager_socket());
    let mut alice = Conn::open(&d.agent_socket("alice"));
    ruth.recv(0, 100); // spawn events
    let refused = alice.ask(r#"{"cmd":"list_schedules"}"#);
    assert!(refused.contains("refused on an agent socket"), "{refused}");
    assert_eq!(
        ruth.ask(r#"{"cmd":"request_schedule_prompt","targets":["alice","operator"],"body":"standup","first_fire_at_unix":4102444800,"interval_seconds":86400}"#),
        r#"{"kind":"ok","approval":1}"#
    );
    assert_eq!(d.request(r#"{"cmd":"approve","id":1}"#), HOST_OK);
    let listed = d.request(r#"{"cmd":"schedules"}"#);
    assert!(listed.contains(r#""id":1,"owner":"ruth","body":"standup","interval_seconds":86400,"next_fire_at_unix":4102444800"#), "{listed}");
    assert_eq!(ruth.ask(r#"{"cmd":"fire_schedule_now","id":1}"#), OK);
    assert_eq!(
        next(&mut alice),
        ("schedule".to_owned(), Value::String("standup".into()))
    );
    let inbox = d.request(r#"{"cmd":"inbox"}"#);
    assert!(
        inbox.contains(r#""from":"schedule","body":"standup""#),
        "{inbox}"
    );
    assert_eq!(ruth.ask(r#"{"cmd":"cancel_schedule","id":1}"#), OK);
    let listed = ruth.ask(r#"{"cmd":"list_schedules"}"#);
    assert!(listed.contains(r#""cancelled_at_unix""#), "{listed}");
}
