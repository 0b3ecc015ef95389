//! Cut turns resumed in their own session (issue 47, the harness's step):
//! the real `hive-agent run` against the real daemon (fake driver), with a
//! stand-in Claude run as `claude_program`, so it gets the harness's
//! default argv, `--resume` included, and records it with its prompt.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(clippy::disallowed_methods)] // test code runs the binaries under test

#[path = "support/agent_rig/mod.rs"]
mod agent_rig;
#[path = "support/common/mod.rs"]
mod common;

use std::path::Path;
use std::time::Duration;

use agent_rig::{Harness, alice_states, alice_turns, eventually, send_to_alice, start_alice};
use common::{daemon_with, hivectl};
use nix::sys::signal::Signal;
use nix::unistd::Pid;

const LONG: Duration = Duration::from_secs(30);

fn start(d: &common::Daemon, dir: &Path, turn_timeout: u64) -> Harness {
    start_alice(d, dir, turn_timeout, Some(&dir.join("stand-in")))
}

/// The session turn `n` was told to resume, if any.
fn resumed(h: &Harness, n: usize) -> Option<String> {
    let argv = h.argv(n);
    let mut args = argv.lines();
    args.by_ref().find(|a| *a == "--resume")?;
    args.next().map(str::to_owned)
}

fn hang_pid(dir: &Path) -> Option<i32> {
    std::fs::read_to_string(dir.join("hang.pid"))
        .ok()?
        .trim()
        .parse()
        .ok()
}

fn record(dir: &Path) -> std::path::PathBuf {
    dir.join("state/turn-in-progress.json")
}

/// alice's turns from the journal, oldest first: (outcome, error).
fn journal(d: &common::Daemon) -> Vec<(String, String)> {
    let mut turns = alice_turns(d);
    turns.reverse();
    turns
}

#[test]
fn claude_killed_alone_mid_turn_is_resumed_in_the_same_session_told_what_completed() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = start(&d, tmp.path(), 300);
    h.set_mode("tools"); // Bash completes, then Read runs until killed
    send_to_alice(&d, "build the thing");
    eventually("the Read call running", LONG, || {
        hang_pid(tmp.path()).is_some()
    });
    // The session is saved as soon as the stream names it (the harness
    // reads the stand-in's lines a moment after they are written).
    eventually("the session saved mid-turn", LONG, || {
        std::fs::read_to_string(tmp.path().join("state/claude-session"))
            .ok()
            .as_deref()
            == Some("s-1")
    });
    eventually("the Bash call in the record", LONG, || {
        std::fs::read_to_string(record(tmp.path())).is_ok_and(|r| r.contains(r#""name":"Bash""#))
    });
    h.set_mode("ok");
    let pid = hang_pid(tmp.path()).unwrap();
    std::fs::remove_file(tmp.path().join("hang.pid")).unwrap();
    nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    eventually("the message handled", LONG, || {
        alice_states(&d) == [("handled".into(), true)]
    });
    assert_eq!(h.turns(), 2);
    assert_eq!(resumed(&h, 1), None);
    assert_eq!(resumed(&h, 2).as_deref(), Some("s-1"));
    let prompt = h.prompt(2);
    for part in [
        "the turn that was working on them was cut off",
        "by Claude Code exiting (signal: 9 (SIGKILL))",
        "This is the same conversation, resumed",
        "Tool calls that had completed, in order: Bash (ok).",
        "build the thing",
    ] {
        assert!(prompt.contains(part), "{part:?} not in {prompt}");
    }
    // The running call is not listed; no input reached the prompt.
    assert!(
        !prompt.contains("Read (") && !prompt.contains("secret"),
        "{prompt}"
    );
    assert!(!record(tmp.path()).exists(), "the turn ended: no record");
    let turns = journal(&d);
    assert_eq!(turns.len(), 2, "{turns:?}");
    assert_eq!(turns[0].0, "failed");
    assert!(
        turns[0]
            .1
            .contains("the next attempt resumes session s-1 (resume 1 of at most 2)"),
        "{turns:?}"
    );
    assert_eq!(turns[1].0, "ok");
}

#[test]
fn a_harness_killed_in_the_agents_first_turn_resumes_the_session_its_init_named() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = start(&d, tmp.path(), 300);
    h.set_mode("hang");
    send_to_alice(&d, "first words");
    eventually("the turn hanging", LONG, || hang_pid(tmp.path()).is_some());
    // Killed once the harness has read the init line naming the session.
    eventually("the session in the record", LONG, || {
        std::fs::read_to_string(record(tmp.path())).is_ok_and(|r| r.contains(r#""session":"s-1""#))
    });
    h.signal(Signal::SIGKILL);
    drop(h); // reaps the harness and kills the orphaned stand-in
    std::fs::remove_file(tmp.path().join("hang.pid")).unwrap();
    let h = start(&d, tmp.path(), 300);
    h.set_mode("ok");
    eventually("the message handled", LONG, || {
        alice_states(&d) == [("handled".into(), true)]
    });
    assert_eq!(resumed(&h, 2).as_deref(), Some("s-1"));
    let prompt = h.prompt(2);
    assert!(
        prompt.contains(
            "(the last time it was seen working) by the hive's harness, its container or the host restarting"
        ) && prompt.contains("No tool call had completed.")
            && prompt.contains("first words"),
        "{prompt}"
    );
    assert!(!record(tmp.path()).exists());
}

#[test]
fn a_session_claude_cannot_resume_starts_a_new_conversation_and_the_reason_is_reported() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = start(&d, tmp.path(), 300);
    send_to_alice(&d, "one");
    eventually("the first message handled", LONG, || {
        alice_states(&d) == [("handled".into(), false)]
    });
    // Claude has lost s-1 (its config directory was replaced, say).
    h.set_mode("notfound");
    send_to_alice(&d, "two");
    eventually("the second message handled", LONG, || {
        alice_states(&d) == [("handled".into(), false), ("handled".into(), true)]
    });
    assert_eq!(h.turns(), 3);
    assert_eq!(resumed(&h, 2).as_deref(), Some("s-1"));
    assert_eq!(resumed(&h, 3), None, "a new conversation");
    let turns = journal(&d);
    assert!(
        turns[1].1.contains(
            "Claude Code cannot resume session s-1 (it has no such conversation): \
             the next attempt starts a new conversation"
        ),
        "{turns:?}"
    );
    // The new conversation is the agent's from now on.
    assert_eq!(
        std::fs::read_to_string(tmp.path().join("state/claude-session")).unwrap(),
        "s-3"
    );
    let prompt = h.prompt(3);
    assert!(prompt.contains("could not be resumed"), "{prompt}");
}

#[test]
fn a_turn_cut_past_max_resumes_fails_and_its_next_attempt_is_a_new_conversation() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = start(&d, tmp.path(), 1); // every attempt passes its deadline
    h.set_mode("hang");
    send_to_alice(&d, "too big");
    eventually("four attempts", LONG, || h.turns() >= 4);
    h.set_mode("ok");
    let sessions: Vec<Option<String>> = (1..=4).map(|n| resumed(&h, n)).collect();
    assert_eq!(
        sessions,
        [None, Some("s-1".into()), Some("s-1".into()), None],
        "resumed twice (max_resumes 2), then a new conversation"
    );
    eventually("the message handled", LONG, || {
        alice_states(&d) == [("handled".into(), true)]
    });
    let turns = journal(&d);
    assert!(
        turns[2]
            .1
            .contains("the turn was cut after 2 resume(s), the limit (max_resumes 2)"),
        "{turns:?}"
    );
    assert!(turns[..3].iter().all(|(o, _)| o == "killed"), "{turns:?}");
    let prompt = h.prompt(4);
    assert!(
        prompt.contains("by the turn's deadline (1 s)") && prompt.contains("could not be resumed"),
        "{prompt}"
    );
}

#[test]
fn an_interrupted_turn_is_never_resumed() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = start(&d, tmp.path(), 300);
    h.set_mode("hang");
    send_to_alice(&d, "wrong path");
    eventually("the turn hanging", LONG, || hang_pid(tmp.path()).is_some());
    h.set_mode("ok");
    eventually("the interrupt taken", LONG, || {
        hivectl(&d, &["interrupt", "alice", "--note", "stop there"]).0 == 0
    });
    eventually("both handled", LONG, || {
        alice_states(&d) == [("handled".into(), false), ("handled".into(), false)]
    });
    let prompt = h.prompt(2);
    assert!(
        prompt.contains("stop there")
            && !prompt.contains("cut off")
            && !prompt.contains("wrong path"),
        "{prompt}"
    );
    // The session goes on (the note is the next prompt in it).
    assert_eq!(resumed(&h, 2).as_deref(), Some("s-1"));
    assert!(!record(tmp.path()).exists());
}

/// bob's messages: how many there are.
fn bobs_messages(d: &common::Daemon) -> usize {
    agent_rig::message_states(&d.state_dir(), "bob").len()
}

#[test]
fn a_send_made_before_the_harness_was_killed_is_not_sent_again_by_the_resumed_turn() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = start(&d, tmp.path(), 300);
    h.set_mode("send-hang"); // sends bob "built it", then hangs
    send_to_alice(&d, "build it and tell bob");
    eventually("the send made and the turn hanging", LONG, || {
        hang_pid(tmp.path()).is_some()
    });
    assert_eq!(bobs_messages(&d), 1);
    h.signal(Signal::SIGKILL);
    drop(h); // reaps the harness and kills the orphaned stand-in
    std::fs::remove_file(tmp.path().join("hang.pid")).unwrap();
    let h = start(&d, tmp.path(), 300);
    h.set_mode("send-ok"); // the resumed turn makes the same send again
    eventually("the message handled", LONG, || {
        alice_states(&d) == [("handled".into(), true)]
    });
    assert_eq!(h.turns(), 2, "{}", h.log());
    assert_eq!(resumed(&h, 2).as_deref(), Some("s-1"));
    assert_eq!(
        bobs_messages(&d),
        1,
        "bob got the send once; calls: {}",
        std::fs::read_to_string(tmp.path().join("calls.log")).unwrap_or_default()
    );
    // The turn ended: its call log with it.
    assert!(!tmp.path().join("state/turn-calls").exists());
}

#[test]
fn a_send_made_before_claude_was_killed_alone_is_not_sent_again_by_the_resumed_attempt() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = start(&d, tmp.path(), 300);
    h.set_mode("send-hang");
    send_to_alice(&d, "build it and tell bob");
    eventually("the send made and the turn hanging", LONG, || {
        hang_pid(tmp.path()).is_some()
    });
    h.set_mode("send-ok");
    let pid = hang_pid(tmp.path()).unwrap();
    std::fs::remove_file(tmp.path().join("hang.pid")).unwrap();
    nix::sys::signal::kill(Pid::from_raw(pid), Signal::SIGKILL).unwrap();
    eventually("the message handled", LONG, || {
        alice_states(&d) == [("handled".into(), true)]
    });
    assert_eq!(bobs_messages(&d), 1);
}

#[test]
fn two_identical_sends_in_one_turn_are_both_sent_and_the_next_turns_same_send_too() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = start(&d, tmp.path(), 300);
    h.set_mode("send-twice");
    send_to_alice(&d, "tell bob twice");
    eventually("the message handled", LONG, || {
        alice_states(&d) == [("handled".into(), false)]
    });
    assert_eq!(bobs_messages(&d), 2);
    h.set_mode("send-ok");
    send_to_alice(&d, "tell bob again");
    eventually("the second message handled", LONG, || {
        alice_states(&d).len() == 2 && alice_states(&d)[1].0 == "handled"
    });
    assert_eq!(bobs_messages(&d), 3);
}
