use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::clock::ManualClock;
use crate::testing::id;
use crate::wire::codes::ErrorCode;

fn room() -> Replies {
    Replies::open(
        Store::open_in_memory().unwrap(),
        Arc::new(ManualClock::new(1_000)),
    )
}

#[tokio::test]
async fn a_kept_answer_is_recalled_by_its_agent_only_and_an_error_is_never_kept() {
    let replies = room();
    let (alice, bob) = (id("alice"), id("bob"));
    replies
        .remember(&alice, "k1", &Response::sent(2))
        .await
        .unwrap();
    replies
        .remember(&alice, "k2", &Response::err(ErrorCode::BadRequest, "no"))
        .await
        .unwrap();
    assert_eq!(
        replies.recall(&alice, "k1").await.unwrap(),
        Some(Response::sent(2))
    );
    assert_eq!(replies.recall(&bob, "k1").await.unwrap(), None);
    assert_eq!(replies.recall(&alice, "k2").await.unwrap(), None);
}

#[tokio::test]
async fn a_key_being_served_holds_its_repeat_until_released_and_nothing_else() {
    let replies = room();
    let alice = id("alice");
    let first = replies.hold(&alice, "k").await;
    // Another key, or another agent's same key, is not held up.
    let other = tokio::time::timeout(Duration::from_secs(1), replies.hold(&alice, "other"))
        .await
        .expect("another key is not held");
    let bobs = tokio::time::timeout(Duration::from_secs(1), replies.hold(&id("bob"), "k"))
        .await
        .expect("another agent's key is not held");
    drop((other, bobs));
    let again = {
        let replies = replies.clone();
        let alice = alice.clone();
        tokio::spawn(async move { drop(replies.hold(&alice, "k").await) })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(
        !again.is_finished(),
        "the repeat waits while its key is served"
    );
    drop(first);
    tokio::time::timeout(Duration::from_secs(1), again)
        .await
        .expect("the repeat goes on once the first is done")
        .unwrap();
    // Nothing served, nothing kept in memory.
    assert!(replies.state.serving.lock().unwrap().is_empty());
}
