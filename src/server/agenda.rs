//! The agenda's part of the agent and manager sockets: every agenda
//! `Request` variant answered in one place, so the socket dispatcher wires
//! them with one line (`if let Some(r) = agenda::dispatch(..).await`).
//!
//! The caller comes from the socket ([`Caller`]), never from the request.
//! The privileged schedule variants are refused here on an agent socket
//! too, with the same words as the dispatcher's privilege gate, so the
//! rule holds even if a dispatcher forgets its gate. Rejected: a second
//! error mapping; agenda errors reach the wire through
//! [`super::reply::wire_error`], the one exhaustive match.

use super::reply::{answer, done};
use crate::service::{Answerer, Caller, Hive, ScheduleEdit};
use crate::wire::agent::{Request, Response};

/// Answer `request` if it is an agenda variant; `None` for any other.
pub async fn dispatch(hive: &Hive, caller: &Caller, request: &Request) -> Option<Response> {
    let me = caller.name().clone();
    let (cmd, _) = request.describe();
    let privileged = matches!(
        request,
        Request::RequestSchedulePrompt(_)
            | Request::CancelSchedule { .. }
            | Request::ListSchedules
            | Request::FireScheduleNow { .. }
            | Request::EditSchedule { .. }
    );
    if privileged && matches!(caller, Caller::Agent(_)) {
        return Some(Response::err(format!(
            "privileged variant {cmd} is refused on an agent socket"
        )));
    }
    Some(match request {
        Request::Ask {
            question,
            options,
            multi,
            ttl_seconds,
            to,
        } => answer(
            hive.ask(
                &me,
                question.clone(),
                options.clone(),
                *multi,
                *ttl_seconds,
                to.clone(),
            )
            .await,
            |id| Response::QuestionQueued { id },
        ),
        Request::Answer { id, answer: text } => {
            done(hive.answer(Answerer::Agent(me), *id, text.clone()).await)
        }
        Request::Remind {
            message,
            timing,
            file_path,
        } => done(
            hive.remind(&me, message.clone(), timing.clone(), file_path.clone())
                .await,
        ),
        Request::GetLooseEnds { agent } => answer(
            hive.loose_ends(caller, agent.as_deref()).await,
            |loose_ends| Response::LooseEnds { loose_ends },
        ),
        Request::CountPendingReminders { agent } => answer(
            hive.count_pending_reminders(caller, agent.as_deref()).await,
            |count| Response::PendingRemindersCount { count },
        ),
        Request::ReminderRollup { since_secs, agent } => answer(
            hive.reminder_rollup(caller, *since_secs, agent.as_deref())
                .await,
            Response::ReminderRollup,
        ),
        Request::CancelLooseEnd { kind, id } => {
            done(hive.cancel_loose_end(caller, *kind, *id).await)
        }
        Request::RequestSchedulePrompt(payload) => {
            done(hive.request_schedule_prompt(payload.clone()).await)
        }
        Request::CancelSchedule { id, targets } => {
            done(hive.cancel_schedule(*id, targets.clone()).await)
        }
        Request::ListSchedules => answer(hive.list_schedules().await, |schedules| {
            Response::Schedules { schedules }
        }),
        Request::FireScheduleNow { id } => done(hive.fire_schedule_now(*id).await),
        Request::EditSchedule {
            id,
            body,
            description,
            interval_seconds,
            next_fire_at_unix,
            targets_add,
            targets_remove,
        } => done(
            hive.edit_schedule(
                *id,
                ScheduleEdit {
                    body: body.clone(),
                    description: description.clone(),
                    interval_seconds: *interval_seconds,
                    next_fire_at_unix: *next_fire_at_unix,
                    targets_add: targets_add.clone(),
                    targets_remove: targets_remove.clone(),
                },
            )
            .await,
        ),
        _ => return None,
    })
}

#[cfg(test)]
mod tests {
    use crate::testing::{config_in, hive_at, id};

    use super::*;

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
        dispatch(hive, caller, &request)
            .await
            .map(|r| serde_json::to_string(&r).unwrap())
    }

    #[tokio::test]
    async fn agenda_requests_are_answered_in_the_wire_shapes_and_others_are_left_alone() {
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
                r#"{"kind":"err","message":"agent \"*\" (the whole hive) is only served on the manager socket"}"#
                    .into()
            )
        );
        assert_eq!(call(&hive, &alice, r#"{"cmd":"status"}"#).await, None);
    }

    #[tokio::test]
    async fn schedule_variants_are_refused_on_an_agent_socket_and_served_on_the_manager_socket() {
        let (hive, _dir) = hive().await;
        let alice = Caller::Agent(id("alice"));
        assert_eq!(
            call(&hive, &alice, r#"{"cmd":"list_schedules"}"#).await,
            Some(
                r#"{"kind":"err","message":"privileged variant list_schedules is refused on an agent socket"}"#
                    .into()
            )
        );
        let request = r#"{"cmd":"request_schedule_prompt","targets":["alice","operator"],"body":"b","first_fire_at_unix":2000,"interval_seconds":60}"#;
        assert_eq!(
            call(&hive, &manager(), request).await,
            Some(r#"{"kind":"ok"}"#.into())
        );
        hive.approve(1).await.unwrap();
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
}
