//! `notify_command` as the operator sees it: one JSON line per event on
//! its stdin, at most one per event and agent within the interval, and a
//! failing command costs the hive nothing.

use std::sync::Arc;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use crate::containers::fake::FakeDriver;
use crate::testing::{config_in, hive_at, id};
use crate::wire::notify::Notification;

use crate::service::Hive;

/// A hive whose `notify_command` is `argv`, its worker and unit watcher
/// running.
fn hive_notifying(dir: &std::path::Path, argv: &[&str]) -> (Hive, Arc<FakeDriver>) {
    let mut config = config_in(dir);
    config.notify_command = argv.iter().map(|s| (*s).to_owned()).collect();
    let (hive, driver) = hive_at(config, 10_000);
    tokio::spawn(
        hive.messaging()
            .clone()
            .run_notifier(CancellationToken::new()),
    );
    tokio::spawn(hive.clone().watch_units());
    (hive, driver)
}

/// The events `tee -a file` has written so far, once there are `n`.
async fn written(file: &std::path::Path, n: usize) -> Vec<Notification> {
    for _ in 0..200 {
        let text = std::fs::read_to_string(file).unwrap_or_default();
        let lines: Vec<Notification> = text
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect();
        if lines.len() >= n {
            return lines;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("fewer than {n} events in {}", file.display());
}

const PERMISSION: &str = r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash"}"#;
const PROMPT: &str = r#"{"hook_event_name":"UserPromptSubmit","prompt":"go"}"#;

#[tokio::test]
async fn a_person_needed_an_approval_queued_and_a_crash_each_run_the_command_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("events");
    let (hive, driver) = hive_notifying(dir.path(), &["tee", "-a", out.to_str().unwrap()]);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    hive.hook_event(&alice, PERMISSION.into()).await.unwrap();
    // Back to work and waiting again within the interval: not a second page.
    hive.hook_event(&alice, PROMPT.into()).await.unwrap();
    hive.hook_event(&alice, PERMISSION.into()).await.unwrap();
    let row = hive.request_spawn(&id("bob")).await.unwrap();
    driver.crash(&alice);

    let events = written(&out, 3).await;
    tokio::time::sleep(Duration::from_millis(200)).await;
    let events_later = written(&out, 3).await;
    assert_eq!(events.len(), events_later.len(), "{events_later:?}");
    let lines: Vec<String> = events
        .iter()
        .map(|n| serde_json::to_string(&n.event).unwrap())
        .collect();
    assert_eq!(
        lines,
        [
            r#"{"event":"needs_person","agent":"alice","state":"needs_permission","message":"Claude needs your permission to use Bash"}"#.to_owned(),
            format!(r#"{{"event":"approval_waiting","id":{},"agent":"bob","kind":"spawn"}}"#, row.id),
            r#"{"event":"crashed","agent":"alice","result":"signal"}"#.to_owned(),
        ]
    );
    assert!(events.iter().all(|n| n.at > 0));
}

#[tokio::test]
async fn a_notify_command_that_cannot_run_costs_the_hive_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_notifying(dir.path(), &["/nonexistent/notify"]);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    for _ in 0..100 {
        hive.hook_event(&alice, PERMISSION.into()).await.unwrap();
        hive.hook_event(&alice, PROMPT.into()).await.unwrap();
    }
    hive.request_spawn(&id("bob")).await.unwrap();
    assert_eq!(hive.approvals().await.unwrap().len(), 1);
}

#[tokio::test]
async fn one_agents_thousand_events_leave_another_agents_event_delivered() {
    // Issue 44: alice's approval spam filled the 64-slot queue before the
    // worker deduplicated it, and bob's approval never reached the operator.
    use crate::wire::host::ApprovalKind;
    use crate::wire::notify::NotifyEvent;
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("events");
    let (hive, _driver) = hive_notifying(dir.path(), &["tee", "-a", out.to_str().unwrap()]);
    let waiting = |id: i64, agent: &str| NotifyEvent::ApprovalWaiting {
        id,
        agent: crate::testing::id(agent),
        kind: ApprovalKind::Egress,
        description: None,
    };
    for i in 0..1_000 {
        hive.mail().to_operator(waiting(i, "alice"));
    }
    hive.mail().to_operator(waiting(5_000, "bob"));
    written(&out, 2).await;
    // Nothing more comes: alice's 999 others were dropped at the door.
    tokio::time::sleep(Duration::from_millis(200)).await;
    let got = written(&out, 2).await;
    let agents: Vec<String> = got.iter().map(|n| n.event.agent().to_string()).collect();
    assert_eq!(agents, ["alice", "bob"], "{got:?}");
    assert_eq!(got[1].event, waiting(5_000, "bob"));
}
