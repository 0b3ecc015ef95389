//! The swarm's service methods: two hives on in-memory stores, the bus
//! replaced by handing the outbox of one to the other (the real bus is in
//! `tests/swarm.rs`).

use std::sync::Arc;

use super::*;
use crate::clock::ManualClock;
use crate::config::{Config, SwarmConfig};
use crate::hive::broker::UnknownRecipient;
use crate::store::Store;
use crate::testing::{config_in, hive_on, id};
use crate::wire::agent::DeliveredMessage;

async fn hive_named(name: &str, dir: &std::path::Path) -> Hive {
    hive_configured(name, dir, |_| {}).await
}

async fn hive_configured(
    name: &str,
    dir: &std::path::Path,
    adjust: impl FnOnce(&mut Config),
) -> Hive {
    let mut config = Config {
        hive_name: Some(id(name)),
        swarm_name: Some(id("s")),
        swarm: Some(SwarmConfig {
            urls: vec!["nats://127.0.0.1:1".into()],
            credentials_file: None,
            user: None,
            password_file: None,
            tls_ca_file: None,
            replicas: 1,
        }),
        ..config_in(&dir.join(name))
    };
    adjust(&mut config);
    let (hive, _) = hive_on(
        config,
        Store::open_in_memory().unwrap(),
        Arc::new(ManualClock::new(1000)),
    );
    for a in ["alice", "bob"] {
        hive.spawn(&id(a)).await.unwrap();
    }
    hive
}

async fn recv_now(hive: &Hive, who: &str) -> Vec<DeliveredMessage> {
    hive.messaging()
        .recv(&id(who), None, Some(100), std::future::pending())
        .await
        .unwrap()
}

/// Every unsent outbox row of `from` as the bus would hand it to its
/// destination (from hive-a).
async fn unsent_batch(from: &Hive) -> Vec<(Ident, BusMessage)> {
    from.outbox_unsent(100)
        .await
        .unwrap()
        .into_iter()
        .map(|i| (id("hive-a"), i.message))
        .collect()
}

/// What a perfect bus would do: hand every unsent row of `from` to `to`.
async fn relay(from: &Hive, source: &str, to: &Hive) -> Vec<Arrival> {
    let items = from.outbox_unsent(100).await.unwrap();
    let ids: Vec<i64> = items.iter().map(|i| i.id).collect();
    let batch = items.into_iter().map(|i| (id(source), i.message)).collect();
    let out = to.accept_from_swarm(batch).await.unwrap();
    from.outbox_sent(ids).await.unwrap();
    out
}

#[tokio::test]
async fn a_cross_hive_send_is_queued_and_arrives_from_agent_at_hive() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        hive_named("hive-a", dir.path()).await,
        hive_named("hive-b", dir.path()).await,
    );
    assert_eq!(
        a.messaging()
            .send(&id("alice"), "bob@hive-b", "one".into(), None)
            .await
            .unwrap(),
        1
    );
    a.messaging()
        .send(&id("alice"), "bob@hive-b", "two".into(), None)
        .await
        .unwrap();
    assert_eq!(a.outbox_backlog().await.unwrap(), 2);
    assert!(recv_now(&a, "bob").await.is_empty(), "stays off a's inbox");
    assert_eq!(relay(&a, "hive-a", &b).await, [Arrival::Stored; 2]);
    assert_eq!(a.outbox_backlog().await.unwrap(), 0);
    let got: Vec<_> = recv_now(&b, "bob")
        .await
        .into_iter()
        .map(|m| (m.from, m.body))
        .collect();
    assert_eq!(
        got,
        [
            ("alice@hive-a".to_owned(), "one".to_owned()),
            ("alice@hive-a".to_owned(), "two".to_owned())
        ]
    );
}

#[tokio::test]
async fn a_redelivered_batch_is_stored_once() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        hive_named("hive-a", dir.path()).await,
        hive_named("hive-b", dir.path()).await,
    );
    a.messaging()
        .send(&id("alice"), "bob@hive-b", "once".into(), None)
        .await
        .unwrap();
    let batch = unsent_batch(&a).await;
    let first = b.accept_from_swarm(batch.clone()).await;
    let second = b.accept_from_swarm(batch).await;
    assert_eq!(first.unwrap(), [Arrival::Stored]);
    assert_eq!(second.unwrap(), [Arrival::Duplicate]);
    assert_eq!(recv_now(&b, "bob").await.len(), 1);
}

#[tokio::test]
async fn a_message_ahead_of_its_predecessor_waits_and_so_do_those_behind_it() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        hive_named("hive-a", dir.path()).await,
        hive_named("hive-b", dir.path()).await,
    );
    for body in ["1", "2", "3"] {
        a.messaging()
            .send(&id("alice"), "bob@hive-b", body.into(), None)
            .await
            .unwrap();
    }
    let batch = unsent_batch(&a).await;
    let late = b.accept_from_swarm(batch[1..].to_vec()).await.unwrap();
    assert_eq!(late, [Arrival::Early { expected: 1 }; 2]);
    assert!(recv_now(&b, "bob").await.is_empty());
    let all = b.accept_from_swarm(batch).await.unwrap();
    assert_eq!(all, [Arrival::Stored; 3]);
    let bodies: Vec<_> = recv_now(&b, "bob")
        .await
        .into_iter()
        .map(|m| m.body)
        .collect();
    assert_eq!(bodies, ["1", "2", "3"]);
}

#[tokio::test]
async fn a_message_for_an_unknown_agent_reaches_the_operator_with_its_name() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        hive_named("hive-a", dir.path()).await,
        hive_named("hive-b", dir.path()).await,
    );
    a.messaging()
        .send(&id("alice"), "zed@hive-b", "lost?".into(), None)
        .await
        .unwrap();
    a.messaging()
        .send(&id("alice"), "operator@hive-b", "hello".into(), None)
        .await
        .unwrap();
    assert_eq!(relay(&a, "hive-a", &b).await, [Arrival::Stored; 2]);
    let rows = b
        .messaging()
        .recent(crate::hive::Recipient::Operator, 10)
        .await
        .unwrap();
    let bodies: Vec<_> = rows.iter().map(|r| r.body.as_str()).collect();
    assert!(bodies.contains(&"hello"), "{bodies:?}");
    assert!(
        bodies
            .iter()
            .any(|b| b.contains("\"zed\"") && b.contains("lost?")),
        "{bodies:?}"
    );
}

#[tokio::test]
async fn an_address_naming_the_own_hive_is_a_local_send() {
    let dir = tempfile::tempdir().unwrap();
    let a = hive_named("hive-a", dir.path()).await;
    a.messaging()
        .send(&id("alice"), "bob@hive-a", "here".into(), None)
        .await
        .unwrap();
    assert_eq!(a.outbox_backlog().await.unwrap(), 0);
    assert_eq!(recv_now(&a, "bob").await[0].body, "here");
}

#[tokio::test]
async fn a_hive_alone_refuses_an_agent_at_hive_address_by_name() {
    let dir = tempfile::tempdir().unwrap();
    let (alone, _) = hive_on(
        Config {
            hive_name: Some(id("hive-a")),
            ..config_in(dir.path())
        },
        Store::open_in_memory().unwrap(),
        Arc::new(ManualClock::new(1000)),
    );
    alone.spawn(&id("alice")).await.unwrap();
    let err = alone
        .messaging()
        .send(&id("alice"), "bob@hive-b", "x".into(), None)
        .await
        .unwrap_err();
    assert!(
        matches!(
            err,
            HiveError::UnknownRecipient(UnknownRecipient::NoSwarm(ref to)) if to == "bob@hive-b"
        ),
        "{err}"
    );
}

#[tokio::test]
async fn the_swarm_roster_has_own_rows_live_and_others_marked_stale_then_forgotten() {
    let dir = tempfile::tempdir().unwrap();
    let a = hive_named("hive-a", dir.path()).await;
    let b = hive_named("hive-b", dir.path()).await;
    for row in b.swarm_roster().await.unwrap() {
        a.swarm_row_heard(row);
    }
    let names = |rows: Vec<SwarmAgentRow>| -> Vec<String> {
        rows.into_iter()
            .map(|r| format!("{}@{}", r.row.name, r.hive))
            .collect()
    };
    assert_eq!(
        names(a.swarm_roster().await.unwrap()),
        [
            "alice@hive-a",
            "bob@hive-a",
            "ruth@hive-a",
            "alice@hive-b",
            "bob@hive-b",
            "ruth@hive-b"
        ]
    );
    a.swarm_row_gone(&id("hive-b"), &id("bob"));
    assert_eq!(a.swarm_roster().await.unwrap().len(), 5);
    // hive-b stops republishing (or the bus is out of reach): its rows
    // stay, marked stale, with when they were heard; an hour on they go.
    // (carol's row was last heard long ago, dave's longer still.)
    let theirs = b.swarm_roster().await.unwrap()[0].clone();
    let heard_long_ago = |name: &str, published_at: i64| {
        let mut row = theirs.clone();
        row.row.name = id(name);
        row.published_at = published_at;
        row
    };
    let heard_at = 1000 - ROSTER_STALE_AFTER.as_secs() as i64 - 1;
    a.swarm_row_heard(heard_long_ago("carol", heard_at));
    let rows = a.swarm_roster().await.unwrap();
    let carol = rows
        .iter()
        .find(|r| r.hive == id("hive-b") && r.row.name == id("carol"));
    let carol = carol.unwrap_or_else(|| panic!("{rows:?}"));
    assert!(carol.stale && carol.published_at == heard_at, "{carol:?}");
    assert!(
        rows.iter()
            .filter(|r| r.hive == id("hive-a"))
            .all(|r| !r.stale)
    );
    let forgotten = 1000 - ROSTER_FORGET_AFTER.as_secs() as i64 - 1;
    a.swarm_row_heard(heard_long_ago("dave", forgotten));
    let rows = names(a.swarm_roster().await.unwrap());
    assert!(!rows.contains(&"dave@hive-b".to_owned()), "{rows:?}");
}

/// The roster watch, recreated after a gap, replays what the bucket stored,
/// which may be older than what the live feed heard meanwhile: the newer
/// row stays.
#[tokio::test]
async fn an_older_row_heard_after_a_newer_one_changes_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let a = hive_named("hive-a", dir.path()).await;
    let b = hive_named("hive-b", dir.path()).await;
    let theirs = b.swarm_roster().await.unwrap()[0].clone();
    let mut stopped = theirs.clone();
    stopped.row.running = !theirs.row.running;
    stopped.published_at = theirs.published_at + 20;
    a.swarm_row_heard(stopped.clone());
    let mut changes = a.subscribe_swarm();
    a.swarm_row_heard(theirs.clone());
    assert!(changes.try_recv().is_err());
    let rows = a.swarm_roster().await.unwrap();
    let kept = rows
        .iter()
        .find(|r| r.hive == theirs.hive && r.row.name == theirs.row.name);
    assert_eq!(
        kept.map(|r| (r.row.running, r.published_at)),
        Some((stopped.row.running, stopped.published_at))
    );
}

#[tokio::test]
async fn a_bus_refusal_is_kept_for_status_with_its_time() {
    let dir = tempfile::tempdir().unwrap();
    let a = hive_named("hive-a", dir.path()).await;
    assert_eq!(a.swarm_last_bus_error(), None);
    a.swarm_bus_error("server error: Permissions Violation for Publish".into());
    assert_eq!(
        a.swarm_last_bus_error(),
        Some((
            1000,
            "server error: Permissions Violation for Publish".into()
        ))
    );
}

#[tokio::test]
async fn live_views_hear_another_hives_changes_once_and_never_their_own_rows() {
    use crate::service::SwarmChange;
    let dir = tempfile::tempdir().unwrap();
    let a = hive_named("hive-a", dir.path()).await;
    let b = hive_named("hive-b", dir.path()).await;
    let mut changes = a.subscribe_swarm();
    let theirs = b.swarm_roster().await.unwrap()[0].clone();
    a.swarm_row_heard(theirs.clone());
    assert_eq!(
        changes.try_recv().unwrap(),
        SwarmChange::Row(Box::new(theirs.clone()))
    );
    // The same row republished later is no change.
    a.swarm_row_heard(SwarmAgentRow {
        published_at: theirs.published_at + 20,
        stale: false,
        ..theirs.clone()
    });
    assert!(changes.try_recv().is_err());
    // A row that differs is.
    let mut stopped = theirs.clone();
    stopped.row.running = false;
    stopped.published_at = theirs.published_at + 40;
    a.swarm_row_heard(stopped.clone());
    assert_eq!(
        changes.try_recv().unwrap(),
        SwarmChange::Row(Box::new(stopped))
    );
    // hive-a's own rows, heard back from the bus, are not: its roster
    // stream carries them.
    let own = a.swarm_roster().await.unwrap()[0].clone();
    assert_eq!(own.hive.as_str(), "hive-a");
    a.swarm_row_heard(own);
    assert!(changes.try_recv().is_err());
    a.swarm_row_gone(&theirs.hive, &theirs.row.name);
    assert_eq!(
        changes.try_recv().unwrap(),
        SwarmChange::Gone {
            hive: theirs.hive.clone(),
            agent: theirs.row.name.clone()
        }
    );
    // Gone twice is one change.
    a.swarm_row_gone(&theirs.hive, &theirs.row.name);
    assert!(changes.try_recv().is_err());
}

#[tokio::test]
async fn the_operator_reaches_another_hives_agent_and_its_reply_comes_back_to_the_operator() {
    let dir = tempfile::tempdir().unwrap();
    let (a, b) = (
        hive_named("hive-a", dir.path()).await,
        hive_named("hive-b", dir.path()).await,
    );
    a.messaging()
        .send_from_operator(&id("bob"), Some(&id("hive-b")), "status?".into())
        .await
        .unwrap();
    assert_eq!(a.outbox_backlog().await.unwrap(), 1);
    relay(&a, "hive-a", &b).await;
    let got = recv_now(&b, "bob").await;
    assert_eq!(
        (got[0].from.as_str(), got[0].body.as_str()),
        ("operator@hive-a", "status?")
    );
    // bob answers the address it saw; it lands in hive-a's operator inbox.
    b.messaging()
        .send(&id("bob"), &got[0].from, "all green".into(), None)
        .await
        .unwrap();
    relay(&b, "hive-b", &a).await;
    let rows = a
        .messaging()
        .recent(crate::hive::Recipient::Operator, 10)
        .await
        .unwrap();
    assert!(
        rows.iter()
            .any(|r| r.from == "bob@hive-b" && r.body == "all green"),
        "{rows:?}"
    );
    // This hive's own name is a local send; a hive alone refuses `hive`.
    a.messaging()
        .send_from_operator(&id("alice"), Some(&id("hive-a")), "local".into())
        .await
        .unwrap();
    assert_eq!(recv_now(&a, "alice").await[0].body, "local");
    let alone = {
        let config = config_in(&dir.path().join("alone"));
        let (hive, _) = hive_on(
            config,
            Store::open_in_memory().unwrap(),
            Arc::new(ManualClock::new(1000)),
        );
        hive
    };
    let err = alone
        .messaging()
        .send_from_operator(&id("bob"), Some(&id("hive-b")), "x".into())
        .await
        .unwrap_err();
    assert!(err.to_string().contains("bob@hive-b"), "{err}");
}

/// The inbox cap holds for what other hives send too: the message past it
/// stays on the bus (with those behind it from the same hive) and is
/// stored once the agent has read, never dropped.
#[tokio::test]
async fn a_swarm_message_for_a_full_inbox_waits_on_the_bus_until_the_agent_reads() {
    let dir = tempfile::tempdir().unwrap();
    let a = hive_named("hive-a", dir.path()).await;
    let b = hive_configured("hive-b", dir.path(), |c| c.inbox_max_messages = 2).await;
    for body in ["1", "2", "3", "4"] {
        a.messaging()
            .send(&id("alice"), "bob@hive-b", body.into(), None)
            .await
            .unwrap();
    }
    let batch = unsent_batch(&a).await;
    let first = b.accept_from_swarm(batch.clone()).await.unwrap();
    assert_eq!(
        first,
        [
            Arrival::Stored,
            Arrival::Stored,
            Arrival::InboxFull,
            Arrival::Early { expected: 3 }
        ]
    );
    assert_eq!(recv_now(&b, "bob").await.len(), 2);
    let again = b.accept_from_swarm(batch).await.unwrap();
    assert_eq!(
        again,
        [
            Arrival::Duplicate,
            Arrival::Duplicate,
            Arrival::Stored,
            Arrival::Stored
        ]
    );
    let bodies: Vec<_> = recv_now(&b, "bob")
        .await
        .into_iter()
        .map(|m| m.body)
        .collect();
    assert_eq!(bodies, ["3", "4"]);
}

/// `system` is every hive's daemon: a bus message claiming it as sender is
/// read by the operator, never by the agent it named, and `system@hive` is
/// refused as a destination.
#[tokio::test]
async fn system_never_crosses_hives_as_a_sender_or_a_destination() {
    let dir = tempfile::tempdir().unwrap();
    let b = hive_named("hive-b", dir.path()).await;
    recv_now(&b, "ruth").await; // the spawns' own events
    let forged = BusMessage {
        v: BUS_VERSION,
        seq: 1,
        from: "system".into(),
        to: "ruth".into(),
        body: r#"{"event":"approval_resolved"}"#.into(),
        at: 1000,
    };
    let out = b
        .accept_from_swarm(vec![(id("hive-a"), forged)])
        .await
        .unwrap();
    assert_eq!(out, [Arrival::Stored]);
    assert!(recv_now(&b, "ruth").await.is_empty());
    let rows = b
        .messaging()
        .recent(crate::hive::Recipient::Operator, 10)
        .await
        .unwrap();
    assert!(
        rows.iter()
            .any(|r| r.body.contains("reserved") && r.body.contains("\"ruth\"")),
        "{rows:?}"
    );
    let err = b
        .messaging()
        .send(&id("alice"), "system@hive-a", "hi".into(), None)
        .await
        .unwrap_err();
    assert!(err.to_string().contains("names no inbox"), "{err}");
}
