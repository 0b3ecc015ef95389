//! `hive-agent run`: the turn loop.
//!
//! At start, `requeue_inflight` (a previous harness may have died
//! mid-turn: its popped, unacked messages go back, marked redelivered),
//! then READY=1. Then, until SIGTERM: `recv` (long poll) → the prompt →
//! the Claude command → on success `ack_turn`; on failure `requeue_inflight`,
//! `set_status` saying why, and a backoff (doubled per failure, reset by a
//! good turn). Between turns the login is checked and changes are reported
//! (`report_session`), as is the model a turn ran. Every turn, however it
//! ended, is reported to the turn journal (`report_turn`) before its ack.
//!
//! A turn that did not finish (Claude died, the deadline, the harness
//! stopped or died) is *cut*: its next attempt resumes its own session
//! with a note saying what happened ([`super::resume`]), at most
//! `max_resumes` times; an interrupted one is never resumed.
//!
//! Nothing acked is lost, nothing unacked is dropped: `ack_turn` is sent
//! only after the command succeeded; every other way out of a turn (failure,
//! deadline, stop, a crash of the harness itself) leaves the messages in
//! flight, and they are requeued — here, or by the next start.

use std::time::{Duration, Instant};

use tokio::sync::watch;

use super::claude::{Ends, Failure, Launch, Stop, TurnEnd, run_turn_watched};
use super::idempotency;
use super::login;
use super::progress::{self, Progress, Tracker};
use super::prompt::{resumed_turn_prompt, turn_prompt};
use super::resume::{self, Cut, CutBy, Next, Seen};
use super::socket::{AgentSocket, SocketError};
use crate::clock::{Clock, SystemClock};
use crate::systemd::notify;
use crate::wire::agent::{DeliveredMessage, Request, Response};
use crate::wire::codes::ErrorCode;
use crate::wire::turns::{TurnOutcome, TurnReport};

/// The longest error text a turn report carries (the daemon's cap).
const MAX_TURN_ERROR: usize = 1000;

/// Budget of the short requests (ack, requeue, status, report).
const SHORT: Duration = Duration::from_secs(30);

/// The turn loop of one agent.
#[derive(Debug)]
pub struct TurnLoop {
    launch: Launch,
    socket: AgentSocket,
    /// The agent's name, for the journal's `AGENT=` field.
    agent: String,
    logged_in: Option<bool>,
    model: Option<String>,
    /// The live view's feed (started with the loop).
    progress: Progress,
}

/// Why the loop stopped early.
#[derive(Debug, thiserror::Error)]
pub enum TurnLoopError {
    #[error("cannot recover in-flight messages at start: {0}")]
    Recover(String),
}

impl TurnLoop {
    pub fn new(launch: Launch, socket: AgentSocket) -> Self {
        Self {
            launch,
            socket,
            agent: String::from("?"),
            logged_in: None,
            model: None,
            progress: Progress::disabled(),
        }
    }

    /// Run until `stop` turns true; the current turn gets the configured
    /// grace.
    pub async fn run(mut self, mut stop: watch::Receiver<bool>) -> Result<(), TurnLoopError> {
        notify::status("recovering in-flight messages");
        self.progress = Progress::start(self.socket.clone());
        self.agent = self.whoami(&mut stop).await;
        if *stop.borrow() {
            return Ok(());
        }
        self.requeue_at_start(&mut stop).await?;
        if let Err(e) = self.launch.write_mcp_config() {
            tracing::warn!(agent = %self.agent, "cannot write {}: {e}", self.launch.mcp_config_path().display());
        }
        self.check_login().await;
        notify::ready("waiting for messages");
        tracing::info!(agent = %self.agent, "turn loop ready");
        let mut backoff = self.first_backoff();
        while !*stop.borrow() {
            let messages = tokio::select! {
                m = self.recv() => m,
                _ = stop.changed() => break,
            };
            let messages = match messages {
                Ok(m) if m.is_empty() => {
                    self.check_login().await;
                    continue;
                }
                Ok(m) => m,
                Err(err) => {
                    tracing::warn!(agent = %self.agent, "recv: {err}");
                    pause(&mut stop, Duration::from_secs(1)).await;
                    continue;
                }
            };
            self.check_login().await;
            match self.turn(&messages, stop.clone()).await {
                Ok(()) => backoff = self.first_backoff(),
                Err(why) => {
                    self.requeue(&why).await;
                    if *stop.borrow() {
                        break;
                    }
                    self.set_status(format!(
                        "turn failed: {why}; retrying in {} s",
                        backoff.as_secs()
                    ))
                    .await;
                    pause(&mut stop, backoff).await;
                    backoff = (backoff * 2).min(Duration::from_secs(
                        self.launch.config.max_backoff_seconds.max(1),
                    ));
                }
            }
        }
        notify::stopping("stopped");
        tracing::info!(agent = %self.agent, "turn loop stopped");
        Ok(())
    }

    fn first_backoff(&self) -> Duration {
        Duration::from_secs(self.launch.config.retry_backoff_seconds)
    }

    async fn whoami(&self, stop: &mut watch::Receiver<bool>) -> String {
        loop {
            match self
                .socket
                .call(&Request::GetAgentMeta { name: None }, SHORT)
                .await
            {
                Ok(Response::AgentMeta { name, .. }) => return name,
                Ok(other) => {
                    tracing::warn!("get_agent_meta answered {other:?}");
                    return "?".into();
                }
                Err(err) => {
                    tracing::warn!("waiting for the hive: {err}");
                    notify::status("waiting for the hive's socket");
                    if pause(stop, Duration::from_secs(2)).await {
                        return "?".into();
                    }
                }
            }
        }
    }

    async fn requeue_at_start(
        &self,
        stop: &mut watch::Receiver<bool>,
    ) -> Result<(), TurnLoopError> {
        loop {
            match self.socket.call(&Request::RequeueInflight, SHORT).await {
                Ok(Response::Ok { .. }) => return Ok(()),
                Ok(Response::Err { message, .. }) => return Err(TurnLoopError::Recover(message)),
                Ok(other) => return Err(TurnLoopError::Recover(format!("{other:?}"))),
                Err(err) => {
                    tracing::warn!(agent = %self.agent, "requeue_inflight: {err}");
                    if pause(stop, Duration::from_secs(2)).await {
                        return Ok(());
                    }
                }
            }
        }
    }

    async fn recv(&self) -> Result<Vec<DeliveredMessage>, SocketError> {
        let wait = self.launch.config.recv_wait_seconds;
        let request = Request::Recv {
            wait_seconds: Some(wait),
            max: Some(self.launch.config.max_messages),
        };
        match self
            .socket
            .call(&request, SHORT + Duration::from_secs(wait))
            .await?
        {
            Response::Messages { messages } => Ok(messages),
            Response::Err { message, .. } => {
                tracing::warn!(agent = %self.agent, "recv refused: {message}");
                Ok(Vec::new())
            }
            _ => Ok(Vec::new()),
        }
    }

    /// One turn: run the command; ack on success. `Err` = the words why.
    ///
    /// A cut turn (see [`resume`]) keeps its record and its session: the
    /// next attempt at the same messages resumes it, with a note saying
    /// what happened, until `max_resumes`.
    async fn turn(
        &mut self,
        messages: &[DeliveredMessage],
        stop: watch::Receiver<bool>,
    ) -> Result<(), String> {
        let started = Instant::now();
        let started_at_ms = SystemClock.now_unix().saturating_mul(1000);
        let ids: Vec<i64> = messages.iter().map(|m| m.id).collect();
        notify::status(&format!("turn: {} message(s)", messages.len()));
        let state = self.launch.config.state_dir.clone();
        // A stand-in command gets no `--resume`: nothing to resume there.
        let resumable = self.launch.config.claude_command.is_none();
        let max_resumes = self.launch.config.max_resumes;
        let plan = resume::plan(
            resume::load(&state),
            &ids,
            self.launch.saved_session(),
            max_resumes,
            started_at_ms,
        );
        if plan.forget_saved {
            self.launch.remember_session(None);
        }
        if let Some(why) = &plan.fresh_why {
            tracing::warn!(agent = %self.agent, "the cut turn is not resumed: {why}");
            self.set_status(format!(
                "a cut turn is retried in a new conversation: {why}"
            ))
            .await;
        }
        let prompt = match &plan.continues {
            Some(cut) => {
                tracing::info!(agent = %self.agent, session = ?plan.session, resumes = plan.record.resumes, "continuing a cut turn");
                resumed_turn_prompt(messages, &resume::note(cut, &ids))
            }
            None => turn_prompt(messages),
        };
        let session = plan.session.clone();
        let mut record = plan.record;
        resume::store(&state, &record);
        // The attempt's calls counted from zero: a repeat of the cut
        // attempt's n-th call is the n-th again, its key the same.
        idempotency::begin_attempt(&state, &record.turn);
        let deadline = self.launch.config.turn_timeout();
        let ends = Ends {
            deadline,
            stop,
            grace: self.launch.config.stop_grace(),
            interrupted: interrupted(&self.socket, deadline + SHORT),
        };
        self.progress
            .send(progress::started(messages, started_at_ms));
        let mut tracker = Tracker::new(self.progress.clone());
        let mut follow = resume::Follow::default();
        let launch = &self.launch;
        let end = run_turn_watched(
            &launch.argv(session.as_deref()),
            &launch.env(),
            &launch.config.workdir(),
            &prompt,
            ends,
            &mut |event| {
                tracker.observe(event);
                match follow.observe(&mut record, event) {
                    Seen::Nothing => return,
                    // Saved at once: a harness killed in the agent's first
                    // turn resumes this session at its next start.
                    Seen::Session(id) if resumable => launch.remember_session(Some(&id)),
                    Seen::Session(_) => record.session = None,
                    Seen::Tool => {}
                }
                record.updated_at_ms = SystemClock.now_unix().saturating_mul(1000);
                resume::store(&state, &record);
            },
        )
        .await;
        // No event of this turn after its report.
        let dropped = self.progress.finish().await;
        if dropped > 0 {
            tracing::info!(agent = %self.agent, dropped, "the live view missed {dropped} event(s) of this turn (the hive was slow)");
        }
        self.report_model(end.facts().model.clone()).await;
        let after = self.after_cut(&end, record, plan.continues, resumable);
        let took_ms = i64::try_from(started.elapsed().as_millis()).unwrap_or(i64::MAX);
        let report = turn_report(&end, ids.clone(), started_at_ms, took_ms, after.as_deref());
        let report_outcome = report.outcome.as_str();
        self.report_turn(report).await;
        let secs = started.elapsed().as_secs_f64();
        match end {
            // An interrupted turn's messages were read; the operator ended
            // the work on them: acked, not redelivered, never resumed. Its
            // session goes on (the note, if any, is the next prompt in it).
            TurnEnd::Done(facts) | TurnEnd::Interrupted { facts } => {
                resume::clear(&state);
                idempotency::end_turn(&state);
                match self.socket.call(&Request::AckTurn, SHORT).await {
                    Ok(Response::Ok { .. }) => {}
                    Ok(other) => return Err(format!("ack_turn answered {other:?}")),
                    Err(err) => return Err(format!("ack_turn: {err}")),
                }
                if session.is_some() || facts.session_id.is_some() {
                    self.launch.remember_session(facts.session_id.as_deref());
                }
                notify::status("waiting for messages");
                tracing::info!(agent = %self.agent, outcome = report_outcome, seconds = secs, messages = ?ids, "turn acked");
                Ok(())
            }
            TurnEnd::Failed { why, .. } | TurnEnd::Killed { why, .. } => {
                let why = match after {
                    Some(next) => format!("{why}; {next}"),
                    None => why,
                };
                tracing::warn!(agent = %self.agent, outcome = "failed", seconds = secs, messages = ?ids, "turn failed: {why}");
                Err(why)
            }
        }
    }

    /// After a turn that did not finish: the record for the next attempt
    /// (written), the saved session kept or forgotten, and the words
    /// saying what the next attempt does. `None` for a turn that finished
    /// or was interrupted (nothing to add).
    fn after_cut(
        &self,
        end: &TurnEnd,
        record: resume::TurnRecord,
        before: Option<resume::TurnRecord>,
        resumable: bool,
    ) -> Option<String> {
        let state = &self.launch.config.state_dir;
        let by = match end {
            TurnEnd::Done(_) | TurnEnd::Interrupted { .. } => return None,
            // Nothing ran: the record is as it was before this attempt.
            TurnEnd::Failed {
                how: Failure::NotStarted,
                ..
            } => {
                match before {
                    Some(before) => resume::store(state, &before),
                    None => resume::clear(state),
                }
                return None;
            }
            TurnEnd::Failed {
                how: Failure::Exited(how),
                ..
            } => CutBy::ClaudeExited {
                how: resume::clean_how(how),
            },
            TurnEnd::Failed {
                how: Failure::Reported,
                ..
            } => CutBy::ClaudeError,
            TurnEnd::Killed {
                by: Stop::Deadline, ..
            } => CutBy::Deadline {
                seconds: self.launch.config.turn_timeout_seconds,
            },
            TurnEnd::Killed {
                by: Stop::HarnessStopping,
                ..
            } => CutBy::HarnessStopped,
        };
        let cut = Cut {
            at_ms: SystemClock.now_unix().saturating_mul(1000),
            by,
        };
        let unresumable = resumable && end.facts().no_conversation;
        let max = self.launch.config.max_resumes;
        let (record, next) = resume::after_cut(record, cut, max, unresumable);
        resume::store(state, &record);
        Some(match next {
            Next::Resume { session } => format!(
                "the next attempt resumes session {session} (resume {} of at most {max})",
                record.resumes + 1
            ),
            Next::Fresh { why } => {
                self.launch.remember_session(None);
                why.unwrap_or_else(|| {
                    "the next attempt starts a new conversation (no session to resume)".into()
                })
            }
        })
    }

    async fn set_status(&self, text: String) {
        let _ = self.socket.call(&Request::SetStatus { text }, SHORT).await;
    }

    async fn requeue(&self, why: &str) {
        match self.socket.call(&Request::RequeueInflight, SHORT).await {
            Ok(Response::Ok { .. }) => {}
            other => tracing::warn!(
                agent = %self.agent,
                "requeue after a failed turn ({why}): {other:?}; the next start requeues them"
            ),
        }
    }

    async fn check_login(&mut self) {
        let now = login::logged_in(&self.launch.config.claude_config_dir(), |v| {
            self.launch.var(v)
        });
        if self.logged_in == Some(now) {
            return;
        }
        let request = Request::ReportSession {
            needs_login: Some(!now),
            active_model: None,
        };
        match self.socket.call(&request, SHORT).await {
            Ok(Response::Ok { .. }) => {
                self.logged_in = Some(now);
                tracing::info!(agent = %self.agent, logged_in = now, "reported the login state");
            }
            other => tracing::warn!(agent = %self.agent, "report_session: {other:?}"),
        }
    }

    /// Send the turn journal its report, before the turn is acked, so the
    /// next message already sees the spend. A refusal or a broken socket
    /// costs the journal a row, never the turn its messages.
    async fn report_turn(&self, turn: TurnReport) {
        match self.socket.call(&Request::ReportTurn { turn }, SHORT).await {
            Ok(Response::Ok { .. }) => {}
            other => tracing::warn!(agent = %self.agent, "report_turn: {other:?}"),
        }
    }

    async fn report_model(&mut self, model: Option<String>) {
        if model.is_none() || model == self.model {
            return;
        }
        let request = Request::ReportSession {
            needs_login: None,
            active_model: model.clone(),
        };
        if let Ok(Response::Ok { .. }) = self.socket.call(&request, SHORT).await {
            self.model = model;
        }
    }
}

/// What the journal keeps of a turn that ended as `end`.
fn turn_report(
    end: &TurnEnd,
    message_ids: Vec<i64>,
    started_at_ms: i64,
    took_ms: i64,
    next: Option<&str>,
) -> TurnReport {
    let (outcome, facts, why) = match end {
        TurnEnd::Done(f) => (TurnOutcome::Ok, f, None),
        TurnEnd::Failed { why, facts, .. } => (TurnOutcome::Failed, facts, Some(why)),
        TurnEnd::Killed { why, facts, .. } => (TurnOutcome::Killed, facts, Some(why)),
        TurnEnd::Interrupted { facts } => (TurnOutcome::Interrupted, facts, None),
    };
    // What the next attempt does (resume, or a new conversation and why)
    // rides on the error, first cut to leave it room.
    let why = why.map(|w| match next {
        Some(next) => format!("{}; {next}", cut(w, MAX_TURN_ERROR / 2)),
        None => w.clone(),
    });
    let mut account = facts.account.clone();
    account.finish();
    let error = why.map(|w| cut(&w, MAX_TURN_ERROR).to_owned());
    TurnReport {
        started_at_ms,
        ended_at_ms: started_at_ms.saturating_add(took_ms),
        message_ids,
        session_id: facts.session_id.clone(),
        model: facts.model.clone(),
        outcome,
        error,
        tools: account.tools,
        usage: account.usage,
        cost_micro_usd: account.cost_micro_usd,
        num_turns: account.num_turns,
        duration_ms: account.duration_ms,
        duration_api_ms: account.duration_api_ms,
    }
}

/// At most `max` bytes of `w`, cut at a character boundary.
fn cut(w: &str, max: usize) -> &str {
    let mut end = w.len().min(max);
    while !w.is_char_boundary(end) {
        end -= 1;
    }
    &w[..end]
}

/// Resolves when the operator interrupts the turn: `await_interrupt` held
/// for the turn's length (`budget`), asked again when the daemon ends the
/// wait (it restarted) or the socket failed; never against a daemon that
/// does not know the verb.
async fn interrupted(socket: &AgentSocket, budget: Duration) {
    loop {
        match socket.call(&Request::AwaitInterrupt, budget).await {
            Ok(Response::Interrupted) => return,
            Ok(Response::Ok { .. }) => {}
            Ok(Response::Err {
                code: Some(ErrorCode::BadRequest),
                message,
            }) => {
                tracing::info!("await_interrupt refused ({message}); turns cannot be interrupted");
                return std::future::pending().await;
            }
            _ => tokio::time::sleep(Duration::from_secs(1)).await,
        }
    }
}

/// Sleep `for_`, or less if `stop` turns true; `true` when stopping.
async fn pause(stop: &mut watch::Receiver<bool>, for_: Duration) -> bool {
    if *stop.borrow() {
        return true;
    }
    tokio::select! {
        () = tokio::time::sleep(for_) => false,
        _ = stop.changed() => true,
    }
}
