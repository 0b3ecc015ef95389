//! An agent's queue in memory: order by id whatever the filing order,
//! idempotent filing, the answer budget, in flight until settled or
//! requeued, and the body cache's bound.

use std::sync::Arc;

use super::{BODY_CACHE_BYTES, Content, QueueState, Queued};
use crate::store::messages::QueuedRow;
use crate::testing::id;

fn row(id: i64, body: &str) -> Queued {
    Queued {
        id,
        len: body.len(),
        redelivered: false,
        content: Some(Arc::new(Content {
            from: "x".into(),
            body: body.into(),
            in_reply_to: None,
        })),
    }
}

fn ids(rows: &[Queued]) -> Vec<i64> {
    rows.iter().map(|q| q.id).collect()
}

#[test]
fn rows_are_handed_out_in_id_order_whatever_order_they_were_filed_in() {
    let q = QueueState::default();
    let a = id("a");
    for n in [3, 1, 2, 1] {
        q.file(&a, row(n, "b"));
    }
    assert_eq!(q.waiting(&a), 3, "filing twice keeps one");
    assert_eq!(ids(&q.take(&a, 10, usize::MAX, true)), [1, 2, 3]);
    assert_eq!(q.waiting(&a), 0);
}

#[test]
fn a_take_stops_at_the_budget_but_the_first_of_an_answer_always_goes() {
    let q = QueueState::default();
    let a = id("a");
    for n in 1..=3 {
        q.file(&a, row(n, "1234"));
    }
    assert_eq!(ids(&q.take(&a, 10, 2, true)), [1]);
    assert!(
        q.take(&a, 10, 2, false).is_empty(),
        "not first: nothing fits"
    );
    assert_eq!(ids(&q.take(&a, 1, usize::MAX, true)), [2]);
    assert_eq!(ids(&q.take(&a, 10, 8, true)), [3]);
}

#[test]
fn rows_in_flight_wait_again_first_and_redelivered_until_settled() {
    let q = QueueState::default();
    let a = id("a");
    for n in 1..=3 {
        q.file(&a, row(n, "b"));
    }
    q.take(&a, 2, usize::MAX, true);
    q.file(&a, row(1, "b"));
    assert_eq!(q.waiting(&a), 1, "a row in flight is not filed again");
    assert_eq!(q.requeue(&a), [1, 2]);
    let again = q.take(&a, 10, usize::MAX, true);
    assert_eq!(ids(&again), [1, 2, 3]);
    assert_eq!(
        again.iter().map(|r| r.redelivered).collect::<Vec<_>>(),
        [true, true, false]
    );
    assert_eq!(q.give_back(&a, &[3]), [3]);
    assert_eq!(ids(&q.settle(&a)), [1, 2]);
    assert!(q.settle(&a).is_empty());
    assert_eq!(ids(&q.take(&a, 10, usize::MAX, true)), [3]);
}

#[test]
fn a_failed_ack_leaves_its_rows_in_flight() {
    let q = QueueState::default();
    let a = id("a");
    q.file(&a, row(1, "b"));
    q.take(&a, 10, usize::MAX, true);
    let settled = q.settle(&a);
    q.unsettle(&a, settled);
    assert_eq!(q.requeue(&a), [1]);
}

#[test]
fn rows_loaded_from_the_table_keep_what_is_held_and_popped_ones_are_in_flight() {
    let q = QueueState::default();
    let a = id("a");
    q.file(&a, row(2, "b"));
    let loaded = |id, popped| QueuedRow {
        id,
        recipient: "a".into(),
        len: 1,
        redelivered: false,
        popped,
    };
    q.load(vec![loaded(1, true), loaded(2, false), loaded(3, false)]);
    let taken = q.take(&a, 10, usize::MAX, true);
    assert_eq!(ids(&taken), [2, 3]);
    assert!(taken[0].content.is_some(), "the held row keeps its body");
    assert!(
        taken[1].content.is_none(),
        "a loaded row is read when handed out"
    );
    assert_eq!(q.requeue(&a), [1, 2, 3]);
}

#[test]
fn bodies_past_the_cache_bound_are_left_to_the_table_and_settling_frees_room() {
    let q = QueueState::default();
    let a = id("a");
    let big = "x".repeat(BODY_CACHE_BYTES / 2 + 1);
    q.file(&a, row(1, &big));
    q.file(&a, row(2, &big));
    let taken = q.take(&a, 10, usize::MAX, true);
    assert!(taken[0].content.is_some() && taken[1].content.is_none());
    q.settle(&a);
    q.file(&a, row(3, &big));
    assert!(q.take(&a, 10, usize::MAX, true)[0].content.is_some());
}

#[test]
fn a_forgotten_queue_hands_out_nothing() {
    let q = QueueState::default();
    let a = id("a");
    q.file(&a, row(1, "b"));
    q.forget(&a);
    assert!(q.take(&a, 10, usize::MAX, true).is_empty());
    assert_eq!(q.waiting(&a), 0);
}

#[test]
fn marks_ask_for_one_write_until_it_takes_them() {
    let q = QueueState::default();
    assert!(q.mark([1, 2]));
    assert!(!q.mark([3]));
    assert_eq!(q.take_marks(), [1, 2, 3]);
    assert!(!q.mark([]));
    assert!(q.mark([4]));
}

#[test]
fn the_inbox_load_counts_the_waiting_rows_and_bytes_not_those_in_flight() {
    let q = QueueState::default();
    let a = id("a");
    q.file(&a, row(1, "12345"));
    q.file(&a, row(2, "123"));
    let load = |q: &QueueState| (q.inbox_load(&a).messages, q.inbox_load(&a).bytes);
    assert_eq!(load(&q), (2, 8));
    q.take(&a, 1, usize::MAX, true);
    assert_eq!(load(&q), (1, 3));
    q.requeue(&a);
    assert_eq!(load(&q), (2, 8));
    q.take(&a, 10, usize::MAX, true);
    q.settle(&a);
    assert_eq!(load(&q), (0, 0));
}
