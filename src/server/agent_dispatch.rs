//! What each request does on an agent or the manager socket: the access
//! policy first ([`Hive::authorize`], on the command and target
//! [`Request::describe`] names), then one exhaustive match over [`Request`],
//! so a new variant must decide here what it does.
//!
//! A request the policy refuses (a privileged variant on an agent socket, a
//! missing grant, the manager acting on itself) is answered before anything
//! else looks at it. Every variant, the agenda's (questions, reminders,
//! loose ends, schedules) included, is an arm of the one match, taking the
//! request by value.

use std::future::Future;
use std::time::Duration;

use super::manager;
use super::reply::{answer, done, refusal};
use crate::service::{Answerer, Caller, Hive, OPERATOR};
use crate::wire::agent::{ContainerInfo, Request, Response};
use crate::wire::journal::render_short;

/// Answer one request from `caller`. `gone` resolves when the caller can
/// no longer read the answer; a long poll stops waiting then.
pub async fn dispatch(
    hive: &Hive,
    caller: &Caller,
    request: Request,
    gone: impl Future<Output = ()>,
) -> Response {
    let (cmd, target) = request.describe();
    if let Err(err) = hive.authorize(caller.into(), cmd, target).await {
        return refusal(&err);
    }
    let me = caller.name();
    // The broker's round (send, recv, ack) and the interrupt long poll are
    // served here; every other request in a boxed future of its own
    // ([`the_rest`]). One future for
    // every arm was 4 KB, written out for each request (issue 31).
    match request {
        Request::Send {
            to,
            body,
            in_reply_to,
        } => answer(
            hive.messaging().send(me, &to, body, in_reply_to).await,
            Response::sent,
        ),
        Request::Recv { wait_seconds, max } => {
            let wait = wait_seconds.map(Duration::from_secs);
            answer(
                hive.messaging().recv(me, wait, max, gone).await,
                |messages| Response::Messages { messages },
            )
        }
        Request::AckTurn => done(hive.messaging().ack_turn(me).await),
        Request::AwaitInterrupt => answer(
            hive.usage().await_interrupt(me, gone).await,
            |interrupted| {
                if interrupted {
                    Response::Interrupted
                } else {
                    Response::ok()
                }
            },
        ),
        request => Box::pin(the_rest(hive, caller, request)).await,
    }
}

/// [`dispatch`] of a request that carried an idempotency key `key`
/// (issue 47: the harness derives it from the turn and the call, so a cut
/// turn's resumed attempt repeats the key of a call it repeats). A request
/// that acts ([`Request::keyed`]) is answered once per `(caller, key)`:
/// a repeat gets the first answer, kept by the replies room, and nothing
/// is done again; a repeat arriving while the first is served waits for
/// it. The key is looked up with the caller (its socket), so a key never
/// reaches another agent's answers. Without a key, or on a request that
/// does not act, this is [`dispatch`].
///
/// The policy still comes first: a request refused now is refused, kept
/// answer or not. A `send` keeps its answer in its own transaction
/// (`Messaging::send_once`); any other act's answer is kept right after
/// it (the window is in the replies room's docs). A failure to keep it is
/// logged and the act's answer still given: the act happened.
pub async fn dispatch_keyed(
    hive: &Hive,
    caller: &Caller,
    request: Request,
    key: Option<String>,
    gone: impl Future<Output = ()>,
) -> Response {
    let Some(key) = key.filter(|_| request.keyed()) else {
        return dispatch(hive, caller, request, gone).await;
    };
    let (cmd, target) = request.describe();
    if let Err(err) = hive.authorize(caller.into(), cmd, target).await {
        return refusal(&err);
    }
    let me = caller.name();
    let replies = hive.replies();
    let _held = replies.hold(me, &key).await;
    match replies.recall(me, &key).await {
        Ok(Some(first)) => {
            tracing::info!(agent = %me, cmd, "a repeated request (its idempotency key was answered before): answered as the first time, nothing done again");
            return first;
        }
        Ok(None) => {}
        Err(err) => return refusal(&err),
    }
    if let Request::Send {
        to,
        body,
        in_reply_to,
    } = request
    {
        return answer(
            hive.messaging()
                .send_once(me, &to, body, in_reply_to, &key)
                .await,
            Response::sent,
        );
    }
    let response = dispatch(hive, caller, request, gone).await;
    if let Err(err) = replies.remember(me, &key, &response).await {
        tracing::warn!(agent = %me, cmd, "the answer to a keyed request was not kept ({err}); a repeat of it acts again");
    }
    response
}

/// Every request but the broker's round and the long polls.
async fn the_rest(hive: &Hive, caller: &Caller, request: Request) -> Response {
    let me = caller.name();
    match request {
        Request::Send { .. }
        | Request::Recv { .. }
        | Request::AckTurn
        | Request::AwaitInterrupt => {
            unreachable!("served by dispatch")
        }
        Request::Status => answer(hive.messaging().unread(me).await, |unread| {
            Response::Status { unread }
        }),
        Request::OperatorMsg { body } => done(
            hive.messaging()
                .wake(me, OPERATOR.into(), body, false)
                .await,
        ),
        Request::Wake {
            from,
            body,
            transient,
        } => done(hive.messaging().wake(me, from, body, transient).await),
        Request::Recent { limit } => answer(
            hive.messaging().recent_for_agent(me, limit).await,
            |(rows, truncated)| Response::Recent { rows, truncated },
        ),
        Request::SetStatus { text } => done(hive.set_status_text(me, text).await),
        Request::GetAgentMeta { name } => {
            let name = name.unwrap_or_else(|| me.clone());
            answer(hive.agent_meta(&name).await, |(record, running)| {
                Response::AgentMeta {
                    name: record.name.to_string(),
                    running,
                    hyperhive_rev: record.deployed_sha,
                    status_text: record.status_text,
                    status_set_at: record.status_set_at,
                    hive_name: None,
                    swarm_name: None,
                }
            })
        }
        Request::ReportSession {
            needs_login,
            active_model,
        } => done(hive.report_session(me, needs_login, active_model).await),
        Request::HookEvent { payload, headless } => done(
            hive.hook_event_from(me, payload, headless)
                .await
                .map(|_| ()),
        ),
        Request::ReportTurn { turn } => done(hive.usage().report_turn(me, turn).await),
        Request::TurnProgress { progress, dropped } => {
            done(hive.usage().turn_progress(me, progress, dropped))
        }
        Request::RequeueInflight => done(hive.requeue_inflight(me).await),
        Request::ListDescendants => {
            answer(hive.descendants(me).await, |list| Response::Containers {
                containers: list
                    .into_iter()
                    .map(|(name, running)| ContainerInfo {
                        name: name.to_string(),
                        running,
                    })
                    .collect(),
            })
        }
        Request::RequestInitConfig { name, description } => {
            manager::request_init_config(hive, name, description).await
        }
        Request::RequestApplyCommit {
            agent,
            commit_ref,
            description,
        } => manager::request_apply_commit(hive, agent, commit_ref, description).await,
        Request::RequestBudget {
            agent,
            amount,
            reason,
        } => manager::queued(hive.request_budget(&agent, amount, &reason).await),
        Request::RequestUpdateMetaInputs {
            inputs,
            description,
        } => manager::request_update_meta_inputs(hive, inputs, description).await,
        Request::Kill { name } => manager::lifecycle(hive, manager::Verb::Kill, &name).await,
        Request::Start { name } => manager::lifecycle(hive, manager::Verb::Start, &name).await,
        Request::Restart { name } => manager::lifecycle(hive, manager::Verb::Restart, &name).await,
        Request::Update { name } => manager::lifecycle(hive, manager::Verb::Update, &name).await,
        // The agenda: questions, reminders, loose ends, schedules.
        Request::Ask {
            question,
            options,
            multi,
            ttl_seconds,
            to,
        } => answer(
            hive.ask(me, question, options, multi, ttl_seconds, to)
                .await,
            |id| Response::QuestionQueued { id },
        ),
        Request::Answer { id, answer: text } => {
            done(hive.answer(Answerer::Agent(me.clone()), id, text).await)
        }
        Request::Remind {
            message,
            timing,
            file_path,
        } => done(hive.remind(me, message, timing, file_path).await),
        Request::GetLooseEnds { agent } => answer(
            hive.loose_ends(caller, agent.as_deref()).await,
            |loose_ends| Response::LooseEnds { loose_ends },
        ),
        Request::CountPendingReminders { agent } => answer(
            hive.count_pending_reminders(caller, agent.as_deref()).await,
            |count| Response::PendingRemindersCount { count },
        ),
        Request::ReminderRollup { since_secs, agent } => answer(
            hive.reminder_rollup(caller, since_secs, agent.as_deref())
                .await,
            Response::ReminderRollup,
        ),
        Request::CancelLooseEnd { kind, id } => done(hive.cancel_loose_end(caller, kind, id).await),
        Request::RequestEgress { host, reason } => {
            manager::queued(hive.request_egress(me, host, &reason).await)
        }
        Request::RequestSchedulePrompt(payload) => {
            manager::queued(hive.request_schedule_prompt(payload).await)
        }
        Request::CancelSchedule { id, targets } => done(hive.cancel_schedule(id, targets).await),
        Request::ListSchedules => answer(hive.list_schedules().await, |schedules| {
            Response::Schedules { schedules }
        }),
        Request::FireScheduleNow { id } => done(hive.fire_schedule_now(id).await),
        Request::EditSchedule { id, edit } => done(hive.edit_schedule(id, edit).await),
        Request::GetLogs { agent, lines } => {
            answer(hive.agent_logs(&agent, lines, None).await, |entries| {
                Response::Logs {
                    content: capped(render_short(&entries), hive),
                }
            })
        }
        Request::GetHostJournal(filters) => {
            let request = (&filters).into();
            answer(hive.host_journal(&request).await, |entries| {
                Response::HostJournal {
                    content: capped(render_short(&entries), hive),
                }
            })
        }
    }
}

/// Journal text cut to the agent's answer budget (`agent_max_answer_bytes`)
/// at a line boundary, with a last line saying so: the newest lines go
/// (the reader asks again with fewer lines or a narrower filter).
fn capped(content: String, hive: &Hive) -> String {
    cap_text(content, hive.config().agent_max_answer_bytes)
}

fn cap_text(mut content: String, budget: usize) -> String {
    if content.len() <= budget {
        return content;
    }
    let total = content.len();
    let mut cut = budget.min(total);
    while !content.is_char_boundary(cut) {
        cut -= 1;
    }
    if let Some(nl) = content[..cut].rfind('\n') {
        cut = nl + 1;
    }
    content.truncate(cut);
    content.push_str(&format!(
        "[truncated: {} of {total} bytes left out (agent_max_answer_bytes); ask for fewer lines]\n",
        total - cut
    ));
    content
}

#[cfg(test)]
#[path = "agenda_tests.rs"]
mod agenda_tests;

#[cfg(test)]
#[path = "agent_dispatch_tests.rs"]
mod cap_tests;
