//! The broker's service methods against the fake driver, an in-memory store
//! and a manual clock.

use crate::testing::{config_in, hive_on};
use std::sync::Arc;
use std::time::{Duration, Instant};

use super::*;
use crate::clock::ManualClock;
use crate::config::Config;
use crate::hive::Outcome;
use crate::service::Hive;
use crate::store::Store;

/// Every waiting test ends within this.
const LIMIT: Duration = Duration::from_secs(10);

use crate::testing::id;

async fn hive() -> (Hive, Arc<ManualClock>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        max_body_bytes: 100,
        message_retention_secs: 3600,
        ..config_in(dir.path())
    };
    let clock = Arc::new(ManualClock::new(1000));
    let (hive, _) = hive_on(config, Store::open_in_memory().unwrap(), clock.clone());
    hive.spawn(&id("alice")).await.unwrap();
    hive.spawn(&id("bob")).await.unwrap();
    // Start from empty inboxes (spawns tell the manager).
    hive.messaging()
        .recv(&id("ruth"), None, Some(100), std::future::pending())
        .await
        .unwrap();
    hive.messaging().ack_turn(&id("ruth")).await.unwrap();
    (hive, clock, dir)
}

async fn recv_now(hive: &Hive, who: &str) -> Vec<DeliveredMessage> {
    hive.messaging()
        .recv(&id(who), None, Some(100), std::future::pending())
        .await
        .unwrap()
}

/// alice sends `body` to bob.
async fn to_bob(hive: &Hive, body: &str) {
    hive.messaging()
        .send(&id("alice"), "bob", body.into(), None)
        .await
        .unwrap();
}

/// A 60 s long poll of `who`'s, in a task of its own.
fn long_poll(
    hive: &Hive,
    who: &str,
) -> tokio::task::JoinHandle<Result<Vec<DeliveredMessage>, HiveError>> {
    let (hive, who) = (hive.clone(), id(who));
    tokio::spawn(async move {
        hive.messaging()
            .recv(
                &who,
                Some(Duration::from_secs(60)),
                None,
                std::future::pending(),
            )
            .await
    })
}

/// What the long poll `poll` answered, within [`LIMIT`].
async fn answered(
    poll: tokio::task::JoinHandle<Result<Vec<DeliveredMessage>, HiveError>>,
) -> Vec<DeliveredMessage> {
    tokio::time::timeout(LIMIT, poll)
        .await
        .unwrap()
        .unwrap()
        .unwrap()
}

/// At most one message of `who`'s, without waiting.
async fn recv_one(hive: &Hive, who: &str) -> Vec<DeliveredMessage> {
    hive.messaging()
        .recv(&id(who), None, Some(1), std::future::pending())
        .await
        .unwrap()
}

#[tokio::test]
async fn handled_messages_are_vacuumed_after_the_retention_and_no_sooner() {
    let (hive, clock, _dir) = hive().await;
    to_bob(&hive, "handled").await;
    to_bob(&hive, "still in flight").await;
    let got = recv_one(&hive, "bob").await;
    assert_eq!(got[0].body, "handled");
    hive.messaging().ack_turn(&id("bob")).await.unwrap();
    recv_now(&hive, "bob").await; // the second one is now in flight, unacked
    hive.messaging()
        .send(&id("alice"), "operator", "for the operator".into(), None)
        .await
        .unwrap();
    clock.advance(3600);
    assert_eq!(hive.vacuum_messages().await.unwrap(), 0, "not yet past");
    clock.advance(1);
    // bob's handled message and the manager's two acked spawn events.
    assert_eq!(hive.vacuum_messages().await.unwrap(), 3);
    let left: Vec<String> = hive
        .messaging()
        .recent(Recipient::Agent(id("bob")), 10)
        .await
        .unwrap()
        .into_iter()
        .map(|r| r.body)
        .collect();
    assert_eq!(left, ["still in flight"]);
    assert_eq!(
        hive.messaging()
            .recent(Recipient::Operator, 10)
            .await
            .unwrap()
            .len(),
        1
    );
}

#[tokio::test]
async fn a_body_over_the_cap_is_refused_naming_its_size_and_the_cap() {
    let (hive, _clock, _dir) = hive().await;
    let err = hive
        .messaging()
        .send(&id("alice"), "bob", "x".repeat(101), None)
        .await
        .unwrap_err();
    assert_eq!(
        err.to_string(),
        "message body is 101 bytes, over this hive's cap of 100 bytes (max_body_bytes); \
         shorten it or put the text in a file and send its path"
    );
    assert!(
        hive.messaging()
            .send(&id("alice"), "bob", "x".repeat(100), None)
            .await
            .is_ok()
    );
    assert!(matches!(
        hive.messaging()
            .wake(&id("bob"), "x".into(), "y".repeat(101), true)
            .await,
        Err(HiveError::BodyTooLarge {
            size: 101,
            cap: 100
        })
    ));
}

#[tokio::test]
async fn a_transient_wake_is_handed_out_once_first_and_never_stored() {
    let (hive, _clock, _dir) = hive().await;
    to_bob(&hive, "stored").await;
    hive.messaging()
        .wake(&id("bob"), "bash".into(), "job 3 done".into(), true)
        .await
        .unwrap();
    assert_eq!(hive.messaging().unread(&id("bob")).await.unwrap(), 2);
    let got = recv_now(&hive, "bob").await;
    let seen: Vec<(&str, &str, i64)> = got
        .iter()
        .map(|m| (m.from.as_str(), m.body.as_str(), m.id))
        .collect();
    assert_eq!(seen[0], ("bash", "job 3 done", 0));
    assert_eq!(seen[1].1, "stored");
    assert!(
        hive.messaging()
            .recent(Recipient::Agent(id("bob")), 10)
            .await
            .unwrap()
            .iter()
            .all(|r| r.body != "job 3 done")
    );
    assert!(recv_now(&hive, "bob").await.is_empty());
}

#[tokio::test]
async fn recv_pops_at_most_max_oldest_first() {
    let (hive, _clock, _dir) = hive().await;
    for n in 0..5 {
        hive.messaging()
            .send(&id("alice"), "bob", format!("m{n}"), None)
            .await
            .unwrap();
    }
    let first = hive
        .messaging()
        .recv(&id("bob"), None, Some(2), std::future::pending())
        .await
        .unwrap();
    let rest = recv_now(&hive, "bob").await;
    let bodies: Vec<&str> = first.iter().chain(&rest).map(|m| m.body.as_str()).collect();
    assert_eq!(bodies, ["m0", "m1", "m2", "m3", "m4"]);
    assert_eq!(first.len(), 2);
}

#[tokio::test]
async fn a_long_poll_returns_empty_at_its_deadline() {
    let (hive, _clock, _dir) = hive().await;
    let started = Instant::now();
    let got = tokio::time::timeout(
        LIMIT,
        hive.messaging().recv(
            &id("bob"),
            Some(Duration::from_secs(1)),
            None,
            std::future::pending(),
        ),
    )
    .await
    .unwrap()
    .unwrap();
    assert!(got.is_empty());
    assert!(started.elapsed() >= Duration::from_secs(1));
}

#[tokio::test]
async fn a_long_poll_wakes_on_a_requeue() {
    let (hive, _clock, _dir) = hive().await;
    to_bob(&hive, "first").await;
    recv_now(&hive, "bob").await;
    let poll = long_poll(&hive, "bob");
    // Whether the poll is already waiting or not, the requeued row reaches
    // it well before its 60 s.
    hive.requeue_inflight(&id("bob")).await.unwrap();
    let got = answered(poll).await;
    assert_eq!(got[0].body, "first");
    assert!(got[0].redelivered);
}

/// A hive restarted on the store of `hive` (its queues rebuilt from the
/// table), once every write queued so far is committed.
async fn restarted(hive: &Hive, clock: Arc<ManualClock>) -> Hive {
    // Queued writes (the in-flight marks) run before any later one.
    hive.store().run(|_| Ok(())).await.unwrap();
    let config = hive.config().clone();
    hive_on(config, hive.store().clone(), clock).0
}

#[tokio::test]
async fn a_message_received_and_not_acked_is_in_flight_again_after_a_restart() {
    let (hive, clock, _dir) = hive().await;
    to_bob(&hive, "one").await;
    to_bob(&hive, "two").await;
    let got = recv_one(&hive, "bob").await;
    assert_eq!(got[0].body, "one");
    // A harness that outlived the daemon acks its turn: the one in flight.
    let again = restarted(&hive, clock.clone()).await;
    assert_eq!(again.messaging().unread(&id("bob")).await.unwrap(), 1);
    assert_eq!(again.messaging().ack_turn(&id("bob")).await.unwrap(), 1);
    // A harness that starts again requeues instead: nothing was in flight,
    // and "two", read back from the table, is handed out.
    let third = restarted(&again, clock).await;
    assert_eq!(third.requeue_inflight(&id("bob")).await.unwrap(), 0);
    let rest = recv_now(&third, "bob").await;
    let bodies: Vec<_> = rest
        .iter()
        .map(|m| (m.body.as_str(), m.from.as_str()))
        .collect();
    assert_eq!(bodies, [("two", "alice")]);
}

#[tokio::test]
async fn a_requeue_after_a_restart_hands_the_message_out_again_marked_redelivered() {
    let (hive, clock, _dir) = hive().await;
    to_bob(&hive, "again").await;
    recv_now(&hive, "bob").await;
    let again = restarted(&hive, clock).await;
    assert_eq!(again.requeue_inflight(&id("bob")).await.unwrap(), 1);
    let got = recv_now(&again, "bob").await;
    assert_eq!((got[0].body.as_str(), got[0].redelivered), ("again", true));
}

#[tokio::test]
async fn an_acked_message_is_handled_in_the_table_and_never_handed_out_again() {
    let (hive, clock, _dir) = hive().await;
    to_bob(&hive, "once").await;
    recv_now(&hive, "bob").await;
    assert_eq!(hive.messaging().ack_turn(&id("bob")).await.unwrap(), 1);
    assert_eq!(hive.messaging().ack_turn(&id("bob")).await.unwrap(), 0);
    let again = restarted(&hive, clock).await;
    assert_eq!(again.requeue_inflight(&id("bob")).await.unwrap(), 0);
    assert!(recv_now(&again, "bob").await.is_empty());
    let state: String = again
        .store()
        .read(|c| {
            Ok(
                c.query_row("SELECT state FROM messages WHERE body = 'once'", [], |r| {
                    r.get(0)
                })?,
            )
        })
        .await
        .unwrap();
    assert_eq!(state, "handled");
}

#[tokio::test]
async fn messages_sent_at_once_by_many_senders_are_each_handed_out_once_in_id_order() {
    let (hive, _clock, _dir) = hive().await;
    let sends: Vec<_> = (0..50)
        .map(|n| {
            let hive = hive.clone();
            tokio::spawn(async move {
                hive.messaging()
                    .send(&id("alice"), "bob", format!("{n}"), None)
                    .await
            })
        })
        .collect();
    for s in sends {
        s.await.unwrap().unwrap();
    }
    let mut got = Vec::new();
    loop {
        let batch = hive
            .messaging()
            .recv(&id("bob"), None, Some(7), std::future::pending())
            .await
            .unwrap();
        if batch.is_empty() {
            break;
        }
        got.extend(batch.into_iter().map(|m| m.id));
    }
    let mut sorted = got.clone();
    sorted.sort_unstable();
    sorted.dedup();
    assert_eq!((got.len(), &got), (50, &sorted));
}

#[tokio::test]
async fn a_paused_agents_recv_pops_nothing_until_it_is_resumed_and_a_waiting_poll_then_gets_the_message()
 {
    let (hive, _clock, _dir) = hive().await;
    assert_eq!(
        hive.set_paused(&id("bob"), true).await.unwrap(),
        Outcome::Done
    );
    to_bob(&hive, "held").await;
    assert!(
        recv_now(&hive, "bob").await.is_empty(),
        "popped while paused"
    );
    // Pausing twice is "already so"; the flag is in the store, so a hive
    // restarted on it still holds bob.
    assert_eq!(
        hive.set_paused(&id("bob"), true).await.unwrap(),
        Outcome::AlreadyInState
    );
    let clock = Arc::new(ManualClock::new(1000));
    let again = restarted(&hive, clock).await;
    assert!(
        again
            .roster()
            .rows()
            .iter()
            .any(|r| r.name.as_str() == "bob" && r.paused)
    );
    assert!(
        recv_now(&again, "bob").await.is_empty(),
        "popped after a restart"
    );
    let poll = long_poll(&again, "bob");
    tokio::task::yield_now().await;
    again.set_paused(&id("bob"), false).await.unwrap();
    let got = answered(poll).await;
    assert_eq!(got[0].body, "held");
}
