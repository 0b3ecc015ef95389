//! Container jobs slower than the daemon's answer budget (4 s), with the
//! fake driver's job delay (`serve --fake-job-delay-ms`): the answer says
//! "in progress" on time, and the work is finished and recorded when the
//! job ends. What used to break: the driver's own 4 s budget ended the
//! wait with an error, so an approved spawn was recorded `failed` and the
//! manager heard `spawned{ok:false}` while the container was coming up.
//! The same under a real systemd: `tests/system/tests/slow_boot.sh`.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use std::time::{Duration, Instant};

use common::{Conn, Daemon, hivectl};
use serde_json::Value;

/// Longer than the answer budget (4 s), well inside hivectl's wait.
const JOB_DELAY_MS: &str = "5000";

fn slow_daemon() -> Daemon {
    Daemon::start_with_args(&["--fake-job-delay-ms", JOB_DELAY_MS])
}

/// The manager's events (bodies of `system` messages) until `done` holds
/// for the ones seen so far, or 20 s pass.
fn events_until(ruth: &mut Conn, done: impl Fn(&[Value]) -> bool) -> Vec<Value> {
    let deadline = Instant::now() + Duration::from_secs(20);
    let mut events = Vec::new();
    while !done(&events) && Instant::now() < deadline {
        for m in ruth.recv(2, 50) {
            if m["from"] == "system" {
                events.push(serde_json::from_str(m["body"].as_str().unwrap()).unwrap());
            }
        }
    }
    events
}

fn row(d: &Daemon, name: &str) -> Value {
    let (_, out, _) = hivectl(d, &["--json", "status"]);
    let answer: Value = serde_json::from_str(&out).unwrap();
    answer["agent_statuses"]
        .as_array()
        .unwrap()
        .iter()
        .find(|r| r["name"] == name)
        .cloned()
        .unwrap_or(Value::Null)
}

#[test]
fn an_approved_spawn_slower_than_the_answer_budget_ends_approved_and_the_manager_hears_it_spawned()
{
    let d = slow_daemon();
    let mut ruth = Conn::open(&d.manager_socket());
    ruth.recv(0, 100);
    assert_eq!(hivectl(&d, &["request-spawn", "bob"]).0, 0);

    let started = Instant::now();
    let answer = d.request(r#"{"cmd":"approve","id":1}"#);
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "answered within the budget"
    );
    assert!(answer.contains("is still in progress"), "{answer}");

    let events = events_until(&mut ruth, |seen| {
        seen.iter().any(|e| e["event"] == "spawned")
            && seen.iter().any(|e| e["event"] == "approval_resolved")
    });
    let spawned = events.iter().find(|e| e["event"] == "spawned");
    assert_eq!(
        spawned.map(|e| (&e["agent"], &e["ok"])),
        Some((&Value::from("bob"), &Value::from(true))),
        "{events:?}"
    );
    let resolved = events.iter().find(|e| e["event"] == "approval_resolved");
    assert_eq!(
        resolved.map(|e| &e["status"]),
        Some(&Value::from("approved")),
        "{events:?}"
    );
    let (_, pending, _) = hivectl(&d, &["--json", "pending", "--all"]);
    let answer: Value = serde_json::from_str(&pending).unwrap();
    assert_eq!(answer["approvals"][0]["status"], "approved", "{pending}");
    assert_eq!(row(&d, "bob")["running"], true);
}

#[test]
fn a_start_slower_than_the_answer_budget_answers_in_progress_and_the_row_goes_running() {
    let d = slow_daemon();
    // hivectl waits past the daemon's answer for the row to run.
    let (code, _, err) = hivectl(&d, &["spawn", "alice"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(row(&d, "alice")["running"], true);
    assert_eq!(hivectl(&d, &["stop", "alice"]).0, 0);

    // --no-block: the daemon's "in progress" is hivectl's exit 4.
    let started = Instant::now();
    let (code, out, err) = hivectl(&d, &["start", "alice", "--no-block"]);
    assert!(started.elapsed() < Duration::from_secs(5));
    assert_eq!(code, 4, "{out}{err}");
    assert_eq!(row(&d, "alice")["running"], false, "still booting");

    let deadline = Instant::now() + Duration::from_secs(10);
    while row(&d, "alice")["running"] != true {
        assert!(Instant::now() < deadline, "alice never ran");
        std::thread::sleep(Duration::from_millis(100));
    }
    assert_eq!(row(&d, "alice")["failed"], false);
}
