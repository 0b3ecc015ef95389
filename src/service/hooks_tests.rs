use std::sync::Arc;
use std::time::Duration;

use crate::clock::ManualClock;
use crate::service::{Hive, HiveError, RosterChange};
use crate::store::{Store, hooks};
use crate::testing::{config_in, hive_at, hive_on, id};
use crate::wire::host::SessionState;

fn hook(name: &str, extra: &str) -> String {
    format!(r#"{{"hook_event_name":"{name}","session_id":"s1"{extra}}}"#)
}

async fn events(hive: &Hive, agent: &str) -> Vec<(i64, String, String)> {
    let a = id(agent);
    hive.store()
        .run(move |c| hooks::events(c, &a))
        .await
        .unwrap()
}

async fn attention_events(hive: &Hive) -> Vec<String> {
    crate::testing::manager_events(hive, &["needs_attention"]).await
}

#[tokio::test]
async fn a_permission_prompt_reaches_a_subscriber_with_its_message_and_time() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 1_796_040_000);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    let mut rows = hive.subscribe_roster();
    let moved = hive
        .hook_event(
            &alice,
            hook(
                "Notification",
                r#","notification_type":"permission_prompt","message":"Claude needs your permission to use Edit""#,
            ),
        )
        .await
        .unwrap();
    assert_eq!(moved, Some(SessionState::NeedsPermission));
    let Ok(RosterChange::Row(row)) = rows.try_recv() else {
        panic!("no row pushed");
    };
    assert_eq!(row.session_state, Some(SessionState::NeedsPermission));
    assert_eq!(
        row.session_message.as_deref(),
        Some("Claude needs your permission to use Edit")
    );
    assert_eq!(row.session_since.as_deref(), Some("2026-11-30T12:00:00Z"));
}

#[tokio::test]
async fn bad_payloads_are_refused_and_nothing_is_stored_or_pushed() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 1000);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    let mut rows = hive.subscribe_roster();
    for bad in [
        "not json".to_owned(),
        r#"{"session_id":"s"}"#.to_owned(),
        hook("Stop", &format!(r#","x":"{}""#, "a".repeat(2 << 20))),
    ] {
        let err = hive.hook_event(&alice, bad).await.unwrap_err();
        assert!(matches!(err, HiveError::BadHook(_)), "{err}");
    }
    assert!(events(&hive, "alice").await.is_empty());
    assert!(rows.try_recv().is_err());
    let row = hive.row(&alice).await.unwrap().unwrap();
    assert_eq!(row.session_state, None);
}

#[tokio::test]
async fn unknown_events_are_recorded_whole_but_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 1000);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    let raw = hook("SomethingNew", r#","future":{"a":1}"#);
    assert_eq!(hive.hook_event(&alice, raw.clone()).await.unwrap(), None);
    assert_eq!(
        events(&hive, "alice").await,
        [(1000, "SomethingNew".to_owned(), raw)]
    );
    assert_eq!(hive.row(&alice).await.unwrap().unwrap().session_state, None);
}

#[tokio::test]
async fn an_unmanaged_sender_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 1000);
    let err = hive
        .hook_event(&id("ghost"), hook("Stop", ""))
        .await
        .unwrap_err();
    assert!(matches!(err, HiveError::UnknownAgent(_)));
}

#[tokio::test]
async fn the_newest_events_are_kept_bounded_and_survive_a_restart() {
    let dir = tempfile::tempdir().unwrap();
    let db = dir.path().join("hive.db");
    let clock = Arc::new(ManualClock::new(1000));
    let alice = id("alice");
    {
        let (hive, _d) = hive_on(
            config_in(dir.path()),
            Store::open(&db).unwrap(),
            clock.clone(),
        );
        hive.spawn(&alice).await.unwrap();
        for i in 0..hooks::KEPT_PER_AGENT + 5 {
            hive.hook_event(&alice, hook("PreToolUse", &format!(r#","n":{i}"#)))
                .await
                .unwrap();
        }
        hive.hook_event(&alice, hook("Stop", "")).await.unwrap();
    }
    let (hive, _d) = hive_on(config_in(dir.path()), Store::open(&db).unwrap(), clock);
    let kept = events(&hive, "alice").await;
    assert_eq!(kept.len() as i64, hooks::KEPT_PER_AGENT);
    assert_eq!(kept.last().unwrap().1, "Stop");
    assert!(kept[0].2.contains(r#""n":6"#), "the oldest were dropped");
    let row = hive.row(&alice).await.unwrap().unwrap();
    assert_eq!(row.session_state, Some(SessionState::AwaitingReview));
}

#[tokio::test]
async fn the_manager_hears_of_an_agent_blocked_past_the_configured_time_once() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.attention_after_secs = 1;
    let (hive, _driver) = hive_at(config, 1_796_040_000);
    let (alice, bob) = (id("alice"), id("bob"));
    hive.spawn(&alice).await.unwrap();
    hive.spawn(&bob).await.unwrap();
    let question = hook(
        "Notification",
        r#","notification_type":"elicitation_dialog","message":"Which branch?""#,
    );
    hive.hook_event(&alice, question.clone()).await.unwrap();
    hive.hook_event(&bob, question).await.unwrap();
    // bob is answered in time; alice is not.
    hive.hook_event(&bob, hook("UserPromptSubmit", ""))
        .await
        .unwrap();
    tokio::time::sleep(Duration::from_millis(500)).await;
    assert!(attention_events(&hive).await.is_empty(), "not yet");
    tokio::time::sleep(Duration::from_millis(1000)).await;
    assert_eq!(
        attention_events(&hive).await,
        [
            r#"{"event":"needs_attention","agent":"alice","state":"needs_answer","message":"Which branch?","since":"2026-11-30T12:00:00Z"}"#
        ]
    );
}

/// Used to be: a "needs you: permission" row survived stop, restart and
/// rebuild (the dashboard kept counting it) though its session was gone.
#[tokio::test]
async fn a_container_going_down_clears_its_session_state_whatever_brought_it_down() {
    use crate::wire::host::{LifecycleScope, Signal};
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 1_796_040_000);
    tokio::spawn(hive.clone().watch_units());
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    let permission = hook(
        "Notification",
        r#","notification_type":"permission_prompt","message":"Edit?""#,
    );
    let state = async |hive: &Hive| hive.row(&alice).await.unwrap().unwrap().session_state;
    let cleared = async |hive: &Hive| {
        for _ in 0..200 {
            if state(hive).await.is_none() {
                return true;
            }
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
        false
    };
    let alice_only = LifecycleScope::agents(vec![alice.clone()]);

    hive.hook_event(&alice, permission.clone()).await.unwrap();
    hive.stop(&alice_only, false, None).await.unwrap();
    assert!(cleared(&hive).await, "a stop left {:?}", state(&hive).await);

    hive.start(&alice_only).await.unwrap();
    hive.hook_event(&alice, permission.clone()).await.unwrap();
    assert_eq!(state(&hive).await, Some(SessionState::NeedsPermission));
    hive.restart(&alice).await.unwrap();
    assert!(
        cleared(&hive).await,
        "a restart left {:?}",
        state(&hive).await
    );

    hive.hook_event(&alice, permission).await.unwrap();
    hive.signal(&alice, Signal::Kill).await.unwrap();
    assert!(cleared(&hive).await, "a kill left {:?}", state(&hive).await);
}
