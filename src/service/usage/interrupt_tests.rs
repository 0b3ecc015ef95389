//! `interrupt` through the service: it answers the harness's wait, only
//! while one is open, and queues the note as the agent's next message.

use std::time::Duration;

use crate::testing::{config_in, hive_at, id};
use crate::wire::codes::ErrorCode;

use crate::service::Hive;

async fn hive() -> (Hive, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 10_000);
    hive.spawn(&id("alice")).await.unwrap();
    hive.spawn(&id("bob")).await.unwrap();
    (hive, dir)
}

/// A harness's wait, as a task; `true` when it was interrupted.
fn waiting(hive: &Hive, name: &str) -> tokio::task::JoinHandle<bool> {
    let (hive, name) = (hive.clone(), id(name));
    tokio::spawn(async move {
        hive.usage()
            .await_interrupt(&name, std::future::pending())
            .await
            .unwrap()
    })
}

async fn settle() {
    tokio::time::sleep(Duration::from_millis(20)).await;
}

#[tokio::test]
async fn an_interrupt_answers_the_waiting_harness_of_that_agent_alone() {
    let (hive, _dir) = hive().await;
    let alice = waiting(&hive, "alice");
    let bob = waiting(&hive, "bob");
    settle().await;
    hive.usage().interrupt(&id("alice"), None).await.unwrap();
    let answered = tokio::time::timeout(Duration::from_secs(5), alice).await;
    assert!(answered.unwrap().unwrap(), "alice's wait ends interrupted");
    settle().await;
    assert!(!bob.is_finished(), "bob's turn goes on");
    bob.abort();
}

#[tokio::test]
async fn without_a_turn_in_progress_an_interrupt_is_refused_with_no_turn() {
    let (hive, _dir) = hive().await;
    let err = hive
        .usage()
        .interrupt(&id("alice"), None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NoTurn);
    assert!(
        err.to_string().contains("alice has no turn in progress"),
        "{err}"
    );
    let unknown = hive
        .usage()
        .interrupt(&id("carol"), None)
        .await
        .unwrap_err();
    assert_eq!(unknown.code(), ErrorCode::UnknownAgent);
}

#[tokio::test]
async fn a_wait_that_ended_leaves_no_turn_behind_for_the_next_interrupt() {
    let (hive, _dir) = hive().await;
    let gone = hive
        .usage()
        .await_interrupt(&id("alice"), async {})
        .await
        .unwrap();
    assert!(!gone, "a hung-up wait is not an interrupt");
    let err = hive
        .usage()
        .interrupt(&id("alice"), None)
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::NoTurn);
}

#[tokio::test]
async fn the_note_is_the_agents_next_message_and_a_refused_interrupt_sends_none() {
    let (hive, _dir) = hive().await;
    let refused = hive
        .usage()
        .interrupt(&id("alice"), Some("never sent".into()))
        .await;
    assert!(refused.is_err());
    let wait = waiting(&hive, "alice");
    settle().await;
    hive.usage()
        .interrupt(&id("alice"), Some("stop; use the staging db".into()))
        .await
        .unwrap();
    assert!(wait.await.unwrap());
    let next = hive
        .messaging()
        .recv(&id("alice"), None, Some(10), std::future::pending())
        .await
        .unwrap();
    let bodies: Vec<(&str, &str)> = next
        .iter()
        .map(|m| (m.from.as_str(), m.body.as_str()))
        .collect();
    assert_eq!(bodies, [("operator", "stop; use the staging db")]);
}
