//! host.sock: one request per connection, answered with one line, except
//! `subscribe_agent_status` and `logs`/`journal`/`turns` with `follow`,
//! which stream until the client hangs up.
//!
//! Bad input of any kind (not UTF-8, not JSON, not an object, unknown `cmd`,
//! wrong field types, an over-long line) gets one `ok:false` line naming the
//! problem, then the connection closes. Each connection is its own task, so
//! nothing a client does reaches another connection or the listener.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::net::unix::OwnedWriteHalf;
use tokio::sync::broadcast::error::RecvError;
use tokio_util::sync::CancellationToken;

use super::framing::{self, FrameError, MAX_LINE, read_line};
use super::reply::{answer, done, refusal};
use crate::service::grants::Grant;
use crate::service::{Answerer, Hive, HiveError, Recipient, RosterChange, Who};
use crate::wire::agenda::{Capability, ToolGroup};
use crate::wire::codes::ErrorCode;
use crate::wire::egress::EgressPattern;
use crate::wire::egress_audit::DEFAULT_EGRESS_LOG_LIMIT;
use crate::wire::host::{
    BusError, DEFAULT_INBOX_LIMIT, DEFAULT_TURNS_LIMIT, HostRequest, HostResponse,
};
use crate::wire::ident::Ident;
use crate::wire::live::LiveChange;
use crate::wire::model_log::DEFAULT_MODEL_LOG_LIMIT;

/// How long a client may take to send its request line.
pub const READ_TIMEOUT: Duration = crate::config::HEAD_DEADLINE;

/// Answer one (non-streaming) request the access policy allowed
/// ([`serve`] asks it first, for every request).
async fn dispatch(hive: &Hive, request: HostRequest) -> HostResponse {
    match request {
        HostRequest::List => answer(hive.list().await, HostResponse::agents),
        HostRequest::AgentStatus => answer(hive.agent_status().await, HostResponse::agent_statuses),
        HostRequest::Urls => HostResponse::urls(hive.urls()),
        HostRequest::Version => HostResponse {
            daemon: Some(hive.daemon_version()),
            ..HostResponse::success()
        },
        HostRequest::SwarmStatus => answer(hive.swarm_roster().await, |rows| HostResponse {
            bus_error: hive
                .swarm_last_bus_error()
                .map(|(at, error)| BusError { at, error }),
            ..HostResponse::swarm_statuses(rows)
        }),
        HostRequest::SetPaused { name, paused } => done(hive.set_paused(&name, paused).await),
        HostRequest::Start { scope } => done(hive.start(&scope).await),
        HostRequest::Stop {
            scope,
            graceful,
            deadline_secs,
        } => done(hive.stop(&scope, graceful, deadline_secs).await),
        HostRequest::Restart { name } => done(hive.restart(&name).await),
        HostRequest::RestartAll => done(hive.restart_all().await),
        HostRequest::Spawn { name } => done(hive.spawn(&name).await),
        HostRequest::RequestSpawn { name } => answer(hive.request_spawn(&name).await, |row| {
            HostResponse::approvals(vec![row])
        }),
        HostRequest::Kill { name } => done(hive.kill(&name).await),
        HostRequest::Destroy { name, purge } => done(hive.destroy(&name, purge).await),
        HostRequest::Rebuild { name } => done(hive.rebuild(&name).await),
        HostRequest::Pending => answer(hive.approvals().await, HostResponse::approvals),
        HostRequest::Approve {
            id,
            expires_in_secs,
        } => done(
            hive.approve(id, expires_in_secs.map(Duration::from_secs))
                .await,
        ),
        HostRequest::Deny { id, note } => done(hive.deny(id, note).await),
        HostRequest::Show { id } => answer(hive.review(id).await, |review| HostResponse {
            review: Some(review),
            ..HostResponse::success()
        }),
        HostRequest::Rollback { name, id } => done(hive.rollback(&name, id).await),
        HostRequest::SetParent { child, new_parent } => {
            done(hive.set_parent(&child, new_parent.as_ref()).await)
        }
        HostRequest::Logs {
            name, lines, unit, ..
        } => answer(
            hive.agent_logs(&name, lines, unit.as_deref()).await,
            HostResponse::entries,
        ),
        HostRequest::Journal { filters, .. } => answer(
            hive.host_journal(&(&filters).into()).await,
            HostResponse::entries,
        ),
        HostRequest::Questions => answer(hive.open_questions().await, HostResponse::questions),
        HostRequest::Answer { id, answer: text } => {
            done(hive.answer(Answerer::Operator, id, text).await)
        }
        HostRequest::Schedules => answer(hive.list_schedules().await, HostResponse::schedules),
        HostRequest::CancelSchedule { id, targets } => {
            done(hive.cancel_schedule(id, targets).await)
        }
        HostRequest::Grants { name } => {
            answer(hive.grants(name.as_ref()).await, HostResponse::grants)
        }
        HostRequest::Grant {
            name,
            capability,
            tool_group,
            egress,
            expires_in_secs,
        } => match one_grant(capability, tool_group, egress, expires_in_secs)
            .and_then(|grant| grantable(&grant).map(|()| grant))
        {
            Ok(grant) => answer(
                hive.set_grant(&name, grant, true).await,
                HostResponse::noted,
            ),
            Err(msg) => HostResponse::error(ErrorCode::BadRequest, msg),
        },
        HostRequest::Revoke {
            name,
            capability,
            tool_group,
            egress,
        } => match one_grant(capability, tool_group, egress, None) {
            Ok(grant) => answer(
                hive.set_grant(&name, grant, false).await,
                HostResponse::noted,
            ),
            Err(msg) => HostResponse::error(ErrorCode::BadRequest, msg),
        },
        HostRequest::Inbox { id: Some(id), .. } => answer(
            hive.messaging()
                .one(Recipient::Operator, id)
                .await
                .map(|m| vec![m]),
            HostResponse::messages,
        ),
        HostRequest::Inbox { limit, id: None } => answer(
            hive.messaging()
                .recent(Recipient::Operator, limit.unwrap_or(DEFAULT_INBOX_LIMIT))
                .await,
            HostResponse::messages,
        ),
        HostRequest::Send { to, body, hive: at } => {
            let sent = hive
                .messaging()
                .send_from_operator(&to, at.as_ref(), body)
                .await;
            // Delivered to the inbox either way; a stopped agent reads it
            // only once started, which the operator should hear.
            let stopped = match (&sent, at) {
                (Ok(()), None) => matches!(hive.row(&to).await, Ok(Some(row)) if !row.running),
                _ => false,
            };
            let note = stopped.then(|| {
                let arg = to.as_argument();
                format!("sent to {to}, which is stopped: the message waits in its inbox until `hivectl start {arg}`")
            });
            answer(sent, |()| HostResponse::noted(note))
        }
        HostRequest::Signal { name, signal } => done(hive.signal(&name, signal).await),
        HostRequest::Interrupt { name, note } => done(hive.usage().interrupt(&name, note).await),
        HostRequest::Turns { name, limit, .. } => answer(
            hive.usage()
                .turns(&name, limit.unwrap_or(DEFAULT_TURNS_LIMIT))
                .await,
            HostResponse::turns,
        ),
        HostRequest::Usage { since_secs, by } => {
            answer(hive.usage().sums(since_secs, by).await, HostResponse::usage)
        }
        HostRequest::Budgets => answer(hive.usage().budgets().await, HostResponse::budgets),
        HostRequest::EgressLog { name, limit } => answer(
            hive.egress_log(&name, limit.unwrap_or(DEFAULT_EGRESS_LOG_LIMIT))
                .await,
            HostResponse::egress_log,
        ),
        HostRequest::ModelLog { name, limit } => answer(
            hive.model_log(&name, limit.unwrap_or(DEFAULT_MODEL_LOG_LIMIT))
                .await,
            HostResponse::model_log,
        ),
        HostRequest::SetBudget {
            name,
            hive: all,
            amount,
        } => match budget_scope(name, all) {
            Ok(name) => done(hive.usage().set_budget(name.as_ref(), amount).await),
            Err(msg) => HostResponse::error(ErrorCode::BadRequest, msg),
        },
        HostRequest::UnsetBudget { name, hive: all } => match budget_scope(name, all) {
            Ok(name) => done(hive.usage().unset_budget(name.as_ref()).await),
            Err(msg) => HostResponse::error(ErrorCode::BadRequest, msg),
        },
        HostRequest::Images => answer(hive.images().await, HostResponse::images),
        HostRequest::PruneImages { dry_run } => {
            answer(hive.prune_images(dry_run).await, HostResponse::pruned)
        }
        HostRequest::InspectAgent { name } => {
            answer(hive.inspect_agent(&name).await, HostResponse::inspect)
        }
        // Streaming; `serve` handles it before dispatching.
        HostRequest::SubscribeAgentStatus => HostResponse::error(
            ErrorCode::BadRequest,
            "subscribe_agent_status is a stream; connect to host.sock for it",
        ),
    }
}

/// `set_budget`/`unset_budget` name an agent or the hive, not both: the
/// agent (`None`: the hive).
fn budget_scope(name: Option<Ident>, hive: bool) -> Result<Option<Ident>, &'static str> {
    match (name, hive) {
        (Some(name), false) => Ok(Some(name)),
        (None, true) => Ok(None),
        _ => Err("give exactly one of \"name\" (an agent's subtree) and \"hive\": true"),
    }
}

/// `grant`/`revoke` name exactly one capability, tool group or egress
/// host; only an egress grant may last `expires_in_secs`.
fn one_grant(
    capability: Option<Capability>,
    tool_group: Option<ToolGroup>,
    egress: Option<EgressPattern>,
    expires_in_secs: Option<u64>,
) -> Result<Grant, String> {
    let lasting = match expires_in_secs {
        Some(0) => return Err("\"expires_in_secs\" must be at least 1".into()),
        Some(_) if egress.is_none() => {
            return Err("\"expires_in_secs\" applies to an \"egress\" grant only".into());
        }
        secs => secs.map(Duration::from_secs),
    };
    match (capability, tool_group, egress) {
        (Some(c), None, None) => Ok(Grant::Capability(c)),
        (None, Some(g), None) => Ok(Grant::ToolGroup(g)),
        (None, None, Some(e)) => Ok(Grant::Egress(e, lasting)),
        _ => Err("give exactly one of \"capability\", \"tool_group\" and \"egress\"".into()),
    }
}

/// Refuse an egress grant of an IP literal no grant may open (a metadata
/// service, an address of no one host): the dialler refuses it anyway
/// (`egress::address`), so accepting it would be a silent no.
fn grantable(grant: &Grant) -> Result<(), String> {
    let Grant::Egress(pattern, _) = grant else {
        return Ok(());
    };
    let Ok(ip) = pattern.host().parse::<std::net::IpAddr>() else {
        return Ok(());
    };
    match crate::egress::address::forbidden(ip) {
        Some(why) if !why.kind.grantable() => Err(format!(
            "egress {pattern}: {ip} is {why}, which no grant opens; grant a public, private or loopback address"
        )),
        _ => Ok(()),
    }
}

async fn write_line(w: &mut OwnedWriteHalf, response: &HostResponse) -> std::io::Result<()> {
    framing::write_line(w, &response.to_line()).await
}

/// Serve one host.sock connection.
pub async fn serve(hive: Hive, stream: UnixStream, shutdown: CancellationToken) {
    let (read, mut write) = stream.into_split();
    let mut reader = BufReader::with_capacity(64 * 1024, read);
    let line = match tokio::time::timeout(READ_TIMEOUT, read_line(&mut reader, MAX_LINE)).await {
        Ok(Ok(Some(line))) => line,
        // Connected and closed without a word: a liveness probe.
        Ok(Ok(None)) => return,
        Ok(Err(FrameError::Io(_))) => return,
        Ok(Err(err @ FrameError::TooLong(_))) => {
            let _ = write_line(
                &mut write,
                &HostResponse::error(ErrorCode::BadRequest, err.to_string()),
            )
            .await;
            return;
        }
        Err(_) => {
            let msg = format!("no request line within {} s", READ_TIMEOUT.as_secs());
            let _ = write_line(&mut write, &HostResponse::error(ErrorCode::IdleClosed, msg)).await;
            return;
        }
    };
    let request = match framing::parse_request::<HostRequest>(&line, HostRequest::COMMANDS) {
        Err(msg) => Err(HostResponse::error(ErrorCode::BadRequest, msg)),
        Ok(request) => {
            let (cmd, target) = request.describe();
            match hive.authorize(Who::Operator, cmd, target).await {
                Ok(()) => Ok(request),
                Err(err) => Err(refusal(&err)),
            }
        }
    };
    let response = match request {
        Err(response) => response,
        Ok(HostRequest::SubscribeAgentStatus) => {
            return subscribe(hive, reader, write, shutdown).await;
        }
        Ok(HostRequest::Logs {
            name,
            lines,
            unit,
            follow: true,
        }) => {
            let follow = hive.follow_agent_logs(&name, lines, unit.as_deref()).await;
            return follow_entries(follow, reader, write, shutdown).await;
        }
        Ok(HostRequest::Journal {
            filters,
            follow: true,
        }) => {
            let follow = hive.follow_host_journal(&(&filters).into()).await;
            return follow_entries(follow, reader, write, shutdown).await;
        }
        Ok(HostRequest::Turns {
            name, follow: true, ..
        }) => {
            return follow_turn(hive, name, reader, write, shutdown).await;
        }
        Ok(HostRequest::AgentStatus) => {
            // The roster's JSON, serialized once per change.
            let line = HostResponse::agent_statuses_line(hive.roster().json());
            if let Err(err) = framing::write_line(&mut write, &line).await {
                tracing::debug!("host.sock client went away before its answer: {err}");
            }
            let _ = write.shutdown().await;
            return;
        }
        Ok(request) => dispatch(&hive, request).await,
    };
    if let Err(err) = write_line(&mut write, &response).await {
        tracing::debug!("host.sock client went away before its answer: {err}");
    }
    let _ = write.shutdown().await;
}

/// A source of stream lines: roster rows, or journal entries.
trait Feed {
    /// The next line to send; `None` ends the stream (after sending the
    /// line, if the feed ends with an error line).
    async fn next_line(&mut self) -> Option<(HostResponse, bool)>;
}

/// Roster rows as they change (the stream carries rows only, as its spec
/// says: removals are not sent). A reader that falls behind skips rows (the
/// broadcast channel drops them); the daemon never waits for it.
struct Rows(tokio::sync::broadcast::Receiver<RosterChange>);

impl Feed for Rows {
    async fn next_line(&mut self) -> Option<(HostResponse, bool)> {
        loop {
            match self.0.recv().await {
                Ok(RosterChange::Row(row)) => {
                    return Some((HostResponse::agent_statuses(vec![*row]), false));
                }
                Ok(RosterChange::Removed(_)) => {}
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "a status subscriber fell behind");
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

/// New entries of a container journal; journalctl dies with the feed.
struct Entries(crate::service::Follow);

impl Feed for Entries {
    async fn next_line(&mut self) -> Option<(HostResponse, bool)> {
        match self.0.next().await? {
            Ok(entry) => Some((HostResponse::entries(vec![entry]), false)),
            Err(err) => {
                let err = HiveError::Journal(err);
                Some((refusal(&err), true))
            }
        }
    }
}

/// Stream a feed: an ack, then one line per item, until the client hangs
/// up, the feed ends or the daemon stops.
async fn pump(
    mut feed: impl Feed,
    mut reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    mut write: OwnedWriteHalf,
    shutdown: CancellationToken,
) {
    if write_line(&mut write, &HostResponse::success())
        .await
        .is_err()
    {
        return;
    }
    let mut scratch = [0u8; 256];
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            // The client sends nothing more; a read returning means it hung
            // up (or misbehaves, which ends its stream the same way).
            _ = reader.read(&mut scratch) => return,
            line = feed.next_line() => match line {
                Some((line, last)) => {
                    if write_line(&mut write, &line).await.is_err() || last {
                        return;
                    }
                }
                None => return,
            },
        }
    }
}

/// `subscribe_agent_status`: one single-row line per change.
async fn subscribe(
    hive: Hive,
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    write: OwnedWriteHalf,
    shutdown: CancellationToken,
) {
    pump(Rows(hive.subscribe_roster()), reader, write, shutdown).await;
}

/// One agent's live turn: the turn in progress first (if any), then each
/// change after it. A reader that lags is sent the turn as it is now.
struct LiveTurnFeed {
    hive: Hive,
    name: Ident,
    changes: tokio::sync::broadcast::Receiver<std::sync::Arc<LiveChange>>,
    /// Changes up to this one are in the snapshot sent.
    seen: u64,
    /// The snapshot still to send.
    first: Option<HostResponse>,
}

impl LiveTurnFeed {
    fn new(hive: Hive, name: Ident) -> Self {
        // Subscribed before the snapshot is read: no change falls between.
        let changes = hive.usage().subscribe_live();
        let mut feed = Self {
            hive,
            name,
            changes,
            seen: 0,
            first: None,
        };
        feed.first = feed.snapshot();
        feed
    }

    fn snapshot(&mut self) -> Option<HostResponse> {
        let turn = self.hive.usage().live_turn(&self.name)?;
        self.seen = self.seen.max(turn.seq);
        Some(HostResponse {
            live_turn: Some(turn),
            ..HostResponse::success()
        })
    }
}

impl Feed for LiveTurnFeed {
    async fn next_line(&mut self) -> Option<(HostResponse, bool)> {
        if let Some(first) = self.first.take() {
            return Some((first, false));
        }
        loop {
            match self.changes.recv().await {
                Ok(change) if change.agent == self.name && change.seq > self.seen => {
                    self.seen = change.seq;
                    let line = HostResponse {
                        live: Some(LiveChange::clone(&change)),
                        ..HostResponse::success()
                    };
                    return Some((line, false));
                }
                Ok(_) => {}
                Err(RecvError::Lagged(missed)) => {
                    tracing::debug!(missed, "a turns follower fell behind");
                    if let Some(line) = self.snapshot() {
                        return Some((line, false));
                    }
                }
                Err(RecvError::Closed) => return None,
            }
        }
    }
}

/// `turns` with `follow`: an ack, the turn in progress, then its changes.
async fn follow_turn(
    hive: Hive,
    name: Ident,
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    mut write: OwnedWriteHalf,
    shutdown: CancellationToken,
) {
    if let Err(err) = hive.require(&name).await {
        let _ = write_line(&mut write, &refusal(&err)).await;
        return;
    }
    pump(LiveTurnFeed::new(hive, name), reader, write, shutdown).await;
}

/// `logs` or `journal` with `follow`: an ack (or the error that stops
/// it), then one line per new entry.
async fn follow_entries(
    follow: Result<crate::service::Follow, HiveError>,
    reader: BufReader<tokio::net::unix::OwnedReadHalf>,
    mut write: OwnedWriteHalf,
    shutdown: CancellationToken,
) {
    match follow {
        Ok(follow) => pump(Entries(follow), reader, write, shutdown).await,
        Err(err) => {
            let _ = write_line(&mut write, &refusal(&err)).await;
        }
    }
}
