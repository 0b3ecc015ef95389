//! `destroy --purge` forgets an agent: a later agent of the same name (a
//! different agent: another config, maybe another owner) sees nothing of
//! the old one. A plain `destroy` keeps the mail for a re-spawn of the same
//! agent. The real daemon (fake driver), agents played by socket
//! connections, the operator by host.sock.
//! What used to break: the new alice's first `recv` returned the operator's
//! "secret for the first alice".

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use common::{Conn, Daemon, hivectl};

fn spawn(d: &Daemon, name: &str) {
    let (code, _, err) = hivectl(d, &["spawn", name]);
    assert_eq!(code, 0, "{err}");
}

#[test]
fn a_purged_agents_mail_questions_and_reminders_never_reach_the_next_agent_of_its_name() {
    let d = Daemon::start(common::Launch::Standalone);
    spawn(&d, "alice");
    spawn(&d, "bob");
    assert_eq!(
        hivectl(&d, &["send", "alice", "secret for the first alice"]).0,
        0
    );
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert!(
        bob.ask(r#"{"cmd":"send","to":"alice","body":"bob's note to the first alice"}"#)
            .contains(r#""delivered":1"#)
    );
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert!(
        alice
            .ask(r#"{"cmd":"ask","question":"the first alice asks","options":[]}"#)
            .contains("question_queued")
    );
    assert!(alice
        .ask(r#"{"cmd":"remind","message":"the first alice's reminder","timing":{"timing_type":"in_seconds","seconds":3600}}"#)
        .starts_with(r#"{"kind":"ok""#));
    // One message taken and not acked: in flight, a state of its own.
    assert_eq!(alice.recv(5, 1).len(), 1);
    drop(alice);

    let (code, _, err) = hivectl(&d, &["destroy", "--purge", "alice"]);
    assert_eq!(code, 0, "{err}");
    spawn(&d, "alice");
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert_eq!(
        alice.ask(r#"{"cmd":"requeue_inflight"}"#),
        r#"{"kind":"ok"}"#
    );
    assert!(alice.recv(0, 100).is_empty(), "the new alice got old mail");
    let questions = d.request(r#"{"cmd":"questions"}"#);
    assert!(!questions.contains("the first alice asks"), "{questions}");
    let ends = alice.ask(r#"{"cmd":"get_loose_ends"}"#);
    assert_eq!(ends, r#"{"kind":"loose_ends","loose_ends":[]}"#);
    let status = alice.ask(r#"{"cmd":"status"}"#);
    assert_eq!(status, r#"{"kind":"status","unread":0}"#);
}

#[test]
fn a_plain_destroy_keeps_the_mail_for_a_respawn_of_the_same_agent() {
    let d = Daemon::start(common::Launch::Standalone);
    spawn(&d, "alice");
    assert_eq!(hivectl(&d, &["send", "alice", "still here"]).0, 0);
    assert_eq!(hivectl(&d, &["destroy", "alice"]).0, 0);
    spawn(&d, "alice");
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let got = alice.recv(5, 10);
    assert_eq!(got.len(), 1, "{got:?}");
    assert_eq!(got[0]["body"], "still here");
}

#[test]
fn a_purge_after_a_destroy_forgets_the_mail_the_destroy_kept() {
    let d = Daemon::start(common::Launch::Standalone);
    spawn(&d, "alice");
    assert_eq!(hivectl(&d, &["send", "alice", "kept by destroy"]).0, 0);
    assert_eq!(hivectl(&d, &["destroy", "alice"]).0, 0);
    let (code, _, err) = hivectl(&d, &["destroy", "--purge", "alice"]);
    assert_eq!(code, 0, "{err}");
    spawn(&d, "alice");
    let mut alice = Conn::open(&d.agent_socket("alice"));
    assert!(alice.recv(1, 10).is_empty());
}
