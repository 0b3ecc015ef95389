//! Scheduled prompts end to end in the service: request, approve, fire by
//! the timer over simulated time, across restarts; fire-now, edit, cancel.

use super::agenda_tests::{T0, World, agenda, id};
use crate::hive::agenda::AgendaError;
use crate::store::schedules::ScheduleEdit;
use crate::wire::agenda::{SchedulePromptPayload, WireScheduleSource};
use crate::wire::host::ApprovalStatus;

fn payload(targets: &[&str], first: i64, every: Option<u64>) -> SchedulePromptPayload {
    SchedulePromptPayload {
        targets: targets.iter().map(|t| (*t).to_owned()).collect(),
        body: "standup".into(),
        first_fire_at_unix: first,
        interval_seconds: every,
        description: Some("daily standup".into()),
    }
}

/// Request and approve a schedule; its id.
async fn approved_schedule(w: &World, p: SchedulePromptPayload) -> i64 {
    let row = w.hive.request_schedule_prompt(p).await.unwrap().row;
    let done = w.hive.approve(row.id, None).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Approved);
    let all = w.hive.list_schedules().await.unwrap();
    all.iter()
        .find(|s| s.source == WireScheduleSource::Approval { id: row.id })
        .unwrap()
        .id
}

#[tokio::test]
async fn a_recurring_schedule_over_a_simulated_day_fires_once_per_slot_and_survives_a_restart() {
    let mut w = World::new().await;
    // Every 3 h from T0 + 1 h: due 8 times in the 24 h after T0.
    approved_schedule(
        &w,
        payload(&["alice", "operator"], T0 + 3600, Some(3 * 3600)),
    )
    .await;
    let mut fired = 0;
    for minute in 1..=24 * 60 {
        w.clock.set(T0 + minute * 60);
        fired += w.hive.tick().await.unwrap().schedules;
        if minute == 10 * 60 {
            // Restart right after the fire due at T0 + 10 h: no second one.
            w.restart();
            fired += w.hive.tick().await.unwrap().schedules;
        }
    }
    assert_eq!(fired, 8);
    assert_eq!(w.from("alice", "schedule").await.len(), 8);
    assert_eq!(w.from("operator", "schedule").await.len(), 8);
}

#[tokio::test]
async fn a_schedule_that_missed_windows_while_down_fires_once_then_keeps_its_rhythm() {
    let mut w = World::new().await;
    let id_ = approved_schedule(&w, payload(&["bob"], T0 + 60, Some(60))).await;
    // Down for ten intervals.
    w.clock.set(T0 + 60 * 10 + 5);
    w.restart();
    assert_eq!(w.hive.tick().await.unwrap().schedules, 1);
    assert_eq!(w.hive.tick().await.unwrap().schedules, 0);
    let s = w.hive.list_schedules().await.unwrap();
    let s = s.iter().find(|s| s.id == id_).unwrap();
    assert_eq!(s.next_fire_at_unix, T0 + 60 * 11);
    assert_eq!(w.from("bob", "schedule").await.len(), 1);
}

#[tokio::test]
async fn a_one_shot_schedule_fires_once_and_ends() {
    let w = World::new().await;
    let id_ = approved_schedule(&w, payload(&["alice"], T0 + 10, None)).await;
    w.clock.advance(10);
    assert_eq!(w.hive.tick().await.unwrap().schedules, 1);
    w.clock.advance(1000);
    assert_eq!(w.hive.tick().await.unwrap().schedules, 0);
    let ended = w.hive.fire_schedule_now(id_).await.unwrap_err();
    assert_eq!(agenda(ended), AgendaError::ScheduleEnded(id_));
}

#[tokio::test]
async fn schedules_are_fired_now_edited_and_cancelled_by_target() {
    let w = World::new().await;
    let id_ = approved_schedule(&w, payload(&["alice", "bob"], T0 + 3600, Some(3600))).await;
    w.hive.fire_schedule_now(id_).await.unwrap();
    assert_eq!(
        w.from("alice", "schedule").await,
        vec!["standup".to_owned()]
    );
    // Fire-now leaves the due time alone.
    let s = &w.hive.list_schedules().await.unwrap()[0];
    assert_eq!(s.next_fire_at_unix, T0 + 3600);

    w.hive
        .edit_schedule(
            id_,
            ScheduleEdit {
                body: Some("retro".into()),
                description: Some(None),
                targets_add: Some(vec!["operator".into()]),
                targets_remove: Some(vec!["alice".into()]),
                ..ScheduleEdit::default()
            },
        )
        .await
        .unwrap();
    let bad = w
        .hive
        .edit_schedule(
            id_,
            ScheduleEdit {
                targets_add: Some(vec!["ghost".into()]),
                ..ScheduleEdit::default()
            },
        )
        .await;
    assert_eq!(
        agenda(bad.unwrap_err()),
        AgendaError::UnknownTarget("ghost".into())
    );
    w.hive
        .cancel_schedule(id_, Some(vec!["bob".into()]))
        .await
        .unwrap();
    w.clock.advance(3600);
    w.hive.tick().await.unwrap();
    assert_eq!(
        w.from("operator", "schedule").await,
        vec!["retro".to_owned()]
    );
    assert_eq!(w.from("bob", "schedule").await, vec!["standup".to_owned()]);
    assert_eq!(w.from("alice", "schedule").await.len(), 1);
    let s = &w.hive.list_schedules().await.unwrap()[0];
    assert_eq!(s.description, None);
    w.hive.cancel_schedule(id_, None).await.unwrap();
    assert!(
        w.hive.list_schedules().await.unwrap()[0]
            .cancelled_at_unix
            .is_some()
    );
    let unknown = w.hive.cancel_schedule(999, None).await;
    assert_eq!(
        agenda(unknown.unwrap_err()),
        AgendaError::UnknownSchedule(999)
    );
}

#[tokio::test]
async fn a_schedule_request_with_bad_targets_or_interval_is_refused_before_any_approval() {
    let w = World::new().await;
    for (p, want) in [
        (payload(&[], T0, None), AgendaError::NoTargets),
        (payload(&["alice"], T0, Some(0)), AgendaError::ZeroInterval),
        (
            payload(&["ghost"], T0, None),
            AgendaError::UnknownTarget("ghost".into()),
        ),
        (
            payload(&["../x"], T0, None),
            AgendaError::UnknownTarget("../x".into()),
        ),
    ] {
        let err = w.hive.request_schedule_prompt(p).await.unwrap_err();
        assert_eq!(agenda(err), want);
    }
    assert!(w.hive.approvals().await.unwrap().is_empty());
}

#[tokio::test]
async fn an_approved_schedule_whose_target_vanished_ends_the_approval_failed() {
    let w = World::new().await;
    let row = w
        .hive
        .request_schedule_prompt(payload(&["bob"], T0, None))
        .await
        .unwrap()
        .row;
    w.hive.destroy(&id("bob"), false).await.unwrap();
    let err = w.hive.approve(row.id, None).await.unwrap_err();
    assert!(err.to_string().contains("\"bob\""), "{err}");
    assert!(w.hive.list_schedules().await.unwrap().is_empty());
}
