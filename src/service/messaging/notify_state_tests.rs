use super::*;
use crate::testing::id;
use crate::wire::host::ApprovalKind;
use crate::wire::notify::NotifyEvent;

const INTERVAL: i64 = 60;

fn approval(agent: &str, id_: i64, at: i64) -> Notification {
    Notification {
        at,
        event: NotifyEvent::ApprovalWaiting {
            id: id_,
            agent: id(agent),
            kind: ApprovalKind::Egress,
            description: None,
        },
    }
}

fn crashed(agent: &str, at: i64) -> Notification {
    Notification {
        at,
        event: NotifyEvent::Crashed {
            agent: id(agent),
            result: "signal".into(),
        },
    }
}

fn drain(q: &mut NotifyQueue) -> Vec<Notification> {
    std::iter::from_fn(|| q.pop()).collect()
}

#[test]
fn one_agents_thousand_events_leave_another_agents_one_event_delivered() {
    // Issue 44: alice's approval spam filled the 64-slot queue and bob's
    // approval was dropped.
    let mut q = NotifyQueue::default();
    q.push(approval("alice", 0, 1_000), INTERVAL);
    for i in 1..1_000 {
        // Within the interval: dropped before taking a place.
        assert_eq!(
            q.push(approval("alice", i, 1_000), INTERVAL),
            Pushed::TooSoon
        );
    }
    assert_eq!(
        q.push(approval("bob", 5_000, 1_000), INTERVAL),
        Pushed::Queued
    );
    assert_eq!(q.len(), 2);
    let got = drain(&mut q);
    assert_eq!(
        got,
        [approval("alice", 0, 1_000), approval("bob", 5_000, 1_000)]
    );
}

#[test]
fn a_flood_spread_past_the_interval_keeps_one_place_and_the_latest_event() {
    // The worker is stuck (a slow command): alice's events, each past the
    // interval, replace her waiting one instead of queueing behind it.
    let mut q = NotifyQueue::default();
    assert_eq!(q.push(approval("alice", 0, 0), INTERVAL), Pushed::Queued);
    for i in 1..1_000 {
        assert_eq!(
            q.push(approval("alice", i, i * INTERVAL), INTERVAL),
            Pushed::Replaced
        );
    }
    q.push(crashed("bob", 1), INTERVAL);
    assert_eq!(q.len(), 2);
    assert_eq!(
        drain(&mut q),
        [approval("alice", 999, 999 * INTERVAL), crashed("bob", 1)]
    );
}

#[test]
fn agents_take_turns_and_each_event_name_waits_once_per_agent() {
    let mut q = NotifyQueue::default();
    q.push(approval("alice", 1, 10), INTERVAL);
    q.push(crashed("alice", 10), INTERVAL);
    q.push(approval("bob", 2, 10), INTERVAL);
    q.push(approval("carol", 3, 10), INTERVAL);
    let order: Vec<(String, &str)> = drain(&mut q)
        .iter()
        .map(|n| (n.event.agent().to_string(), n.event.name()))
        .collect();
    assert_eq!(
        order,
        [
            ("alice".to_owned(), "approval_waiting"),
            ("bob".to_owned(), "approval_waiting"),
            ("carol".to_owned(), "approval_waiting"),
            ("alice".to_owned(), "crashed"),
        ]
    );
    assert!(q.pop().is_none());
}

#[test]
fn the_interval_counts_from_the_last_accepted_event_and_zero_drops_nothing() {
    let mut q = NotifyQueue::default();
    q.push(crashed("alice", 100), INTERVAL);
    assert_eq!(q.push(crashed("alice", 159), INTERVAL), Pushed::TooSoon);
    drain(&mut q);
    assert_eq!(q.push(crashed("alice", 160), INTERVAL), Pushed::Queued);
    let mut q = NotifyQueue::default();
    for _ in 0..3 {
        assert_ne!(q.push(crashed("alice", 100), 0), Pushed::TooSoon);
    }
}

#[test]
fn the_memory_of_past_events_is_swept_of_what_the_interval_forgot() {
    let mut q = NotifyQueue::default();
    for i in 0..SWEEP_AT as i64 {
        q.push(crashed(&format!("a{i}"), 0), INTERVAL);
    }
    drain(&mut q);
    q.push(crashed("late", INTERVAL), INTERVAL);
    assert_eq!(q.last.len(), 1);
}

#[tokio::test]
async fn a_waiting_worker_is_woken_by_a_push_made_before_it_waited() {
    let state = NotifyState::default();
    assert!(state.take());
    assert!(!state.take(), "a second worker gets nothing");
    state.push(crashed("alice", 1), INTERVAL);
    // The permit was kept: this returns at once.
    tokio::time::timeout(std::time::Duration::from_secs(5), state.ready())
        .await
        .unwrap();
    assert_eq!(state.pop(), Some(crashed("alice", 1)));
    assert_eq!(state.pop(), None);
}
