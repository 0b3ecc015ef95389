//! The agenda variants of the agent and manager sockets, end to end through
//! the dispatcher.

use crate::testing::{config_in, hive_at, id};

use super::*;
use crate::service::Caller;
use crate::wire::agent::Request;

async fn hive() -> (Hive, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _) = hive_at(config_in(dir.path()), 1000);
    hive.spawn(&id("alice")).await.unwrap();
    (hive, dir)
}

fn manager() -> Caller {
    Caller::Manager(id("ruth"))
}

async fn call(hive: &Hive, caller: &Caller, line: &str) -> Option<String> {
    let request: Request = serde_json::from_str(line).unwrap();
    let response = dispatch(hive, caller, request, std::future::pending()).await;
    Some(serde_json::to_string(&response).unwrap())
}

#[tokio::test]
async fn agenda_requests_are_answered_in_the_wire_shapes() {
    let (hive, _dir) = hive().await;
    let alice = Caller::Agent(id("alice"));
    assert_eq!(
        call(&hive, &alice, r#"{"cmd":"ask","question":"q","to":"ruth"}"#).await,
        Some(r#"{"kind":"question_queued","id":1}"#.into())
    );
    assert_eq!(
        call(&hive, &manager(), r#"{"cmd":"answer","id":1,"answer":"a"}"#).await,
        Some(r#"{"kind":"ok"}"#.into())
    );
    assert_eq!(
        call(
            &hive,
            &alice,
            r#"{"cmd":"remind","message":"m","timing":{"timing_type":"in_seconds","seconds":5}}"#
        )
        .await,
        Some(r#"{"kind":"ok"}"#.into())
    );
    assert_eq!(
        call(&hive, &alice, r#"{"cmd":"count_pending_reminders"}"#).await,
        Some(r#"{"kind":"pending_reminders_count","count":1}"#.into())
    );
    assert_eq!(
        call(&hive, &alice, r#"{"cmd":"reminder_rollup"}"#).await,
        Some(r#"{"kind":"reminder_rollup","scheduled":1,"delivered":0,"pending":1}"#.into())
    );
    let ends = call(&hive, &alice, r#"{"cmd":"get_loose_ends"}"#)
        .await
        .unwrap();
    assert!(
        ends.starts_with(r#"{"kind":"loose_ends","loose_ends":[{"kind":"reminder","id":1,"owner":"alice","message":"m","due_at":1005"#),
        "{ends}"
    );
    assert_eq!(
        call(&hive, &alice, r#"{"cmd":"get_loose_ends","agent":"*"}"#).await,
        Some(
            r#"{"kind":"err","message":"agent \"*\" (the whole hive) is only served on the manager socket","code":"denied"}"#
                .into()
        )
    );
}

#[tokio::test]
async fn schedule_variants_are_refused_on_an_agent_socket_and_served_on_the_manager_socket() {
    let (hive, _dir) = hive().await;
    let alice = Caller::Agent(id("alice"));
    assert_eq!(
        call(&hive, &alice, r#"{"cmd":"list_schedules"}"#).await,
        Some(
            r#"{"kind":"err","message":"privileged variant list_schedules is refused on an agent socket","code":"denied"}"#
                .into()
        )
    );
    let request = r#"{"cmd":"request_schedule_prompt","targets":["alice","operator"],"body":"b","first_fire_at_unix":2000,"interval_seconds":60}"#;
    assert_eq!(
        call(&hive, &manager(), request).await,
        Some(r#"{"kind":"ok","approval":1}"#.into())
    );
    hive.approve(1, None).await.unwrap();
    let listed = call(&hive, &manager(), r#"{"cmd":"list_schedules"}"#)
        .await
        .unwrap();
    assert!(
        listed.starts_with(r#"{"kind":"schedules","schedules":[{"id":1,"owner":"ruth","body":"b","interval_seconds":60,"next_fire_at_unix":2000"#),
        "{listed}"
    );
    assert_eq!(
        call(
            &hive,
            &manager(),
            r#"{"cmd":"edit_schedule","id":1,"interval_seconds":null}"#
        )
        .await,
        Some(r#"{"kind":"ok"}"#.into())
    );
    assert_eq!(
        hive.list_schedules().await.unwrap()[0].interval_seconds,
        None
    );
}
