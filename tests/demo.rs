//! The demo hive (`hive-c0re serve --driver fake --demo-agents`, the
//! README's first command): its agents run the real harness with the
//! scripted stand-in of Claude Code, so a message to one is a turn, a reply
//! in the operator's inbox and a row of its turn journal; stopping the agent
//! stops its harness, and killing the daemon ends every harness.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(clippy::disallowed_methods)] // runs the daemon binary under test

#[path = "support/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{Daemon, hivectl};

/// Poll `check` every 100 ms for `within`; panic with `what` and `last`.
fn wait_until(within: Duration, what: &str, mut check: impl FnMut() -> Option<String>) {
    let deadline = Instant::now() + within;
    loop {
        if check().is_some() {
            return;
        }
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(100));
    }
}

/// The `hive-agent run` processes whose agent socket is under `dir`.
fn harnesses(dir: &std::path::Path) -> usize {
    let needle = dir.to_string_lossy().into_owned();
    std::fs::read_dir("/proc")
        .unwrap()
        .filter_map(|e| std::fs::read(e.ok()?.path().join("environ")).ok())
        .filter(|env| {
            env.split(|b| *b == 0).any(|kv| {
                let kv = String::from_utf8_lossy(kv);
                kv.starts_with("HIVE_AGENT_SOCKET=") && kv.contains(&needle)
            })
        })
        .count()
}

#[test]
fn a_message_to_a_demo_agent_is_a_turn_that_answers_and_its_harness_ends_with_it() {
    let d = Daemon::start_with_args(&["--demo-agents"]);
    let (code, out, err) = hivectl(&d, &["spawn", "alice"]);
    assert_eq!(code, 0, "{out}{err}");
    let (code, _, err) = hivectl(&d, &["send", "alice", "please build the thing\nnow"]);
    assert_eq!(code, 0, "{err}");

    // alice's reply, from her turn, reaches the operator.
    wait_until(
        Duration::from_secs(30),
        "alice's reply in the inbox",
        || {
            let (_, inbox, _) = hivectl(&d, &["--json", "inbox"]);
            inbox
                .contains(r#""from":"alice""#)
                .then(|| inbox.contains("please build the thing").then_some(inbox))
                .flatten()
        },
    );
    // Her turn is in the journal, as the stand-in reported it.
    wait_until(
        Duration::from_secs(10),
        "alice's turn in the journal",
        || {
            let (_, turns, _) = hivectl(&d, &["turns", "alice"]);
            (turns.contains(" ok ") && turns.contains("demo-model")).then_some(turns)
        },
    );
    let runtime = d.socket().parent().unwrap().to_owned();
    assert_eq!(harnesses(&runtime), 1);

    // Stopping the agent stops its harness; starting it starts another.
    assert_eq!(hivectl(&d, &["stop", "alice"]).0, 0);
    wait_until(Duration::from_secs(10), "alice's harness gone", || {
        (harnesses(&runtime) == 0).then(String::new)
    });
    assert_eq!(hivectl(&d, &["start", "alice"]).0, 0);
    wait_until(Duration::from_secs(10), "alice's harness back", || {
        (harnesses(&runtime) == 1).then(String::new)
    });

    // A daemon killed outright takes its demo harnesses with it.
    let _dir = d.kill_hard();
    wait_until(
        Duration::from_secs(10),
        "no harness after the daemon",
        || (harnesses(&runtime) == 0).then(String::new),
    );
}

#[test]
fn demo_agents_need_the_fake_driver() {
    let dir = tempfile::tempdir().unwrap();
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hive-c0re"))
        .args(["serve", "--driver", "systemd", "--demo-agents"])
        .arg("--state-dir")
        .arg(dir.path().join("state"))
        .arg("--runtime-dir")
        .arg(dir.path().join("run"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    // Refused before anything is made.
    assert_eq!(std::fs::read_dir(dir.path()).unwrap().count(), 0);
    let err = String::from_utf8_lossy(&out.stderr);
    assert!(err.contains("--demo-agents needs --driver fake"), "{err}");
}
