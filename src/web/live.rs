//! The dashboard's live streams, as Server-Sent Events.
//!
//! - `/events/roster`: first `ready` (the subscription is in place), then
//!   one event per roster change, in the roster's order: a `row` event
//!   carrying the row rendered by the page's own template, or a `removed`
//!   event (the name) for an agent no longer managed. It reads the
//!   in-process stream behind host.sock's `subscribe_agent_status`; a browser that falls behind gets the whole
//!   roster again (`names`, every current name, then every row) instead of
//!   what it missed.
//! - `/events/logs/{name}`: the agent's container journal, last lines then
//!   each new entry (`entry`, plain text), or one `failed` event with the
//!   hive's error text.
//!
//! Both end when the daemon shuts down, so a drain never waits on a
//! browser tab.

use std::collections::VecDeque;
use std::convert::Infallible;

use axum::extract::{Path, State};
use axum::response::sse::{Event, KeepAlive, Sse};
use futures_lite::Stream;
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;

use super::{Web, refusal_text, views};
use crate::service::{HiveError, RosterChange};
use crate::wire::host::AgentStatusRow;
use crate::wire::ident::Ident;
use crate::wire::journal::render_line;

/// How many past journal lines the logs stream starts with.
pub const LOG_LINES: u32 = 200;

pub(super) type Events = Sse<
    axum::response::sse::KeepAliveStream<
        std::pin::Pin<Box<dyn Stream<Item = Result<Event, Infallible>> + Send>>,
    >,
>;

pub(super) fn sse(
    stream: impl Stream<Item = Result<Event, Infallible>> + Send + 'static,
) -> Events {
    let boxed: std::pin::Pin<Box<dyn Stream<Item = Result<Event, Infallible>> + Send>> =
        Box::pin(stream);
    Sse::new(boxed).keep_alive(KeepAlive::default())
}

fn row_event(row: &AgentStatusRow) -> Event {
    Event::default()
        .event("row")
        .data(views::roster_row(row, 0).into_string())
}

struct RosterFeed {
    web: Web,
    changes: broadcast::Receiver<RosterChange>,
    queued: VecDeque<Event>,
}

impl RosterFeed {
    async fn next(&mut self) -> Option<Event> {
        if let Some(event) = self.queued.pop_front() {
            return Some(event);
        }
        let shutdown = self.web.shutdown.clone();
        let heard = tokio::select! {
            () = shutdown.cancelled() => return None,
            r = self.changes.recv() => r,
        };
        match heard {
            Ok(RosterChange::Row(row)) => Some(row_event(&row)),
            Ok(RosterChange::Removed(name)) => {
                Some(Event::default().event("removed").data(name.as_str()))
            }
            Err(RecvError::Closed) => None,
            Err(RecvError::Lagged(missed)) => {
                tracing::debug!(missed, "a dashboard fell behind; sending the whole roster");
                // The names first, so the page drops rows of agents
                // destroyed meanwhile; then every row.
                let roster = self.web.hive.roster();
                let names: Vec<&str> = roster.rows().iter().map(|r| r.name.as_str()).collect();
                self.queued =
                    std::iter::once(Event::default().event("names").data(names.join(" ")))
                        .chain(roster.rows().iter().map(row_event))
                        .collect();
                self.queued.pop_front()
            }
        }
    }
}

/// `GET /events/roster`.
pub async fn roster(State(web): State<Web>) -> Events {
    let changes = match web.operator("subscribe_agent_status", None).await {
        Ok(hive) => hive.subscribe_roster(),
        Err(err) => return sse(futures_lite::stream::once(Ok(failed_event(&err)))),
    };
    let feed = RosterFeed {
        web,
        changes,
        queued: VecDeque::from([Event::default().event("ready").data("live")]),
    };
    sse(futures_lite::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    }))
}

pub(super) fn failed_event(err: &HiveError) -> Event {
    Event::default().event("failed").data(refusal_text(err))
}

/// `GET /events/logs/{name}`.
pub async fn logs(State(web): State<Web>, Path(name): Path<String>) -> Events {
    let name = match Ident::new(name) {
        Ok(n) => n,
        Err(err) => {
            let event = Event::default().event("failed").data(err.to_string());
            return sse(futures_lite::stream::once(Ok(event)));
        }
    };
    let follow = async {
        let hive = web.operator("logs", Some(&name)).await?;
        hive.follow_agent_logs(&name, Some(LOG_LINES), None).await
    };
    let follow = match follow.await {
        Ok(follow) => follow,
        Err(err) => return sse(futures_lite::stream::once(Ok(failed_event(&err)))),
    };
    let shutdown: CancellationToken = web.shutdown.clone();
    // `Some(follow)` while it runs; `None` after a failure was sent.
    sse(futures_lite::stream::unfold(Some(follow), move |state| {
        let shutdown = shutdown.clone();
        async move {
            let mut follow = state?;
            let next = tokio::select! {
                () = shutdown.cancelled() => return None,
                next = follow.next() => next?,
            };
            match next {
                Ok(entry) => {
                    let line = render_line(&entry);
                    let event = Event::default().event("entry").data(line.trim_end());
                    Some((Ok(event), Some(follow)))
                }
                Err(err) => Some((Ok(failed_event(&HiveError::Journal(err))), None)),
            }
        }
    }))
}
