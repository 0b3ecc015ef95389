//! The swarm page: every hive's agents in one table, live.
//!
//! `GET /swarm` renders what `hivectl status --swarm` lists (this hive's rows
//! as they are, other hives' as last heard on the bus). `GET /events/swarm`
//! then keeps it current: this hive's rows from the same in-process stream
//! as the roster, other hives' rows as the bus brings changes
//! ([`crate::service::SwarmChange`]), each rendered by [`swarm_row`]. Rows
//! are `row-<agent>@<hive>`: an agent name and a hive name cannot make the
//! same id twice, since neither may contain `@`.
//!
//! Other hives' agents are shown, not driven: lifecycle and approvals stay
//! with their own hive (its dashboard).

use std::collections::VecDeque;

use axum::extract::State;
use axum::response::sse::Event;
use axum::response::{IntoResponse, Response};
use maud::{Markup, html};
use tokio::sync::broadcast::{self, error::RecvError};

use super::Web;
use super::live::{Events, failed_event, sse};
use super::pages::failed;
use super::views::{self, Nav, attention_cell, counts, layout, state_cell, status_cell};
use crate::service::{RosterChange, SwarmChange};
use crate::wire::host::{AgentStatusRow, BusError, SwarmAgentRow};
use crate::wire::ident::Ident;

/// The element id of an agent's row: `row-<agent>@<hive>`.
fn row_id(hive: &str, agent: &str) -> String {
    format!("row-{agent}@{hive}")
}

/// One agent of some hive; only this hive's agents link to their page.
pub fn swarm_row(row: &SwarmAgentRow, own: &Ident) -> Markup {
    let name = row.row.name.as_str();
    html! {
        tr id=(row_id(row.hive.as_str(), name)) {
            td { (row.hive) }
            td.name {
                @if row.hive == *own { a href={ "/agent/" (name) } { (name) } } @else { (name) }
            }
            (state_cell(&row.row))
            (attention_cell(&row.row))
            (status_cell(&row.row))
            td { @if let Some(m) = &row.row.active_model { (m) } }
            td { (views::at(row.published_at)) @if row.stale { " (stale)" } }
        }
    }
}

/// The swarm page; `bus_error` is the bus's last refusal or error (when,
/// what), shown above the table as `hivectl status --swarm` prints it.
pub fn swarm_page(rows: &[SwarmAgentRow], own: &Ident, bus_error: Option<&BusError>) -> Markup {
    let hives: std::collections::BTreeSet<&str> = rows.iter().map(|r| r.hive.as_str()).collect();
    let agents: Vec<&AgentStatusRow> = rows.iter().map(|r| &r.row).collect();
    layout(
        "Swarm",
        Nav::Swarm,
        html! {
            p.summary {
                "This hive: " strong { (own) } ". " (hives.len()) " hives, "
                (counts(&agents))
                span #live role="status" { "not live (needs JavaScript)" }
            }
            @if let Some(e) = bus_error {
                p.error role="alert" {
                    "The bus's last error, at " (views::at(e.at)) ": " (e.error)
                    ". Other hives' rows may be stale; the daemon's log says more."
                }
            }
            table #swarm.rows data-live="/events/swarm" data-append {
                thead { tr {
                    th scope="col" { "hive" } th scope="col" { "agent" } th scope="col" { "state" }
                    th scope="col" { "attention" } th scope="col" { "status" } th scope="col" { "model" }
                    th scope="col" title="when its hive last published the row" { "heard" }
                } }
                tbody { @for row in rows { (swarm_row(row, own)) } }
            }
        },
    )
}

/// `GET /swarm`.
pub async fn page(State(web): State<Web>) -> Response {
    match async {
        web.operator("swarm_status", None)
            .await?
            .swarm_roster()
            .await
    }
    .await
    {
        Ok(rows) => {
            let bus_error = web
                .hive
                .swarm_last_bus_error()
                .map(|(at, error)| BusError { at, error });
            swarm_page(&rows, &web.hive.own_hive(), bus_error.as_ref()).into_response()
        }
        Err(err) => failed(&err),
    }
}

/// The feed behind `/events/swarm`.
struct SwarmFeed {
    web: Web,
    own: Ident,
    /// This hive's own roster, in its order.
    local: broadcast::Receiver<RosterChange>,
    remote: broadcast::Receiver<SwarmChange>,
    queued: VecDeque<Event>,
}

/// What the feed heard next.
enum Heard {
    Change(SwarmChange),
    Lagged,
    Closed,
}

fn heard<T>(r: Result<T, RecvError>, f: impl FnOnce(T) -> SwarmChange) -> Heard {
    match r {
        Ok(v) => Heard::Change(f(v)),
        Err(RecvError::Lagged(_)) => Heard::Lagged,
        Err(RecvError::Closed) => Heard::Closed,
    }
}

impl SwarmFeed {
    fn row_event(&self, row: &SwarmAgentRow) -> Event {
        Event::default()
            .event("row")
            .data(swarm_row(row, &self.own).into_string())
    }

    async fn next(&mut self) -> Option<Event> {
        if let Some(event) = self.queued.pop_front() {
            return Some(event);
        }
        let shutdown = self.web.shutdown.clone();
        let own = self.own.clone();
        let now = self.web.hive.now();
        let local = |change| match change {
            RosterChange::Row(row) => SwarmChange::Row(Box::new(SwarmAgentRow {
                hive: own.clone(),
                published_at: now,
                stale: false,
                row: *row,
            })),
            RosterChange::Removed(agent) => SwarmChange::Gone {
                hive: own.clone(),
                agent,
            },
        };
        let heard = tokio::select! {
            () = shutdown.cancelled() => return None,
            r = self.local.recv() => heard(r, local),
            r = self.remote.recv() => heard(r, |change| change),
        };
        match heard {
            Heard::Change(SwarmChange::Row(row)) => Some(self.row_event(&row)),
            Heard::Change(SwarmChange::Gone { hive, agent }) => Some(
                Event::default()
                    .event("removed")
                    .data(format!("{agent}@{hive}")),
            ),
            Heard::Closed => None,
            Heard::Lagged => {
                // The names first, so the page drops rows gone meanwhile.
                let rows = self.web.hive.swarm_roster().await.ok()?;
                let names: Vec<String> = rows
                    .iter()
                    .map(|r| format!("{}@{}", r.row.name, r.hive))
                    .collect();
                self.queued =
                    std::iter::once(Event::default().event("names").data(names.join(" ")))
                        .chain(rows.iter().map(|r| self.row_event(r)))
                        .collect();
                self.queued.pop_front()
            }
        }
    }
}

/// `GET /events/swarm`.
pub async fn events(State(web): State<Web>) -> Events {
    let hive = match web.operator("swarm_status", None).await {
        Ok(hive) => hive.clone(),
        Err(err) => return sse(futures_lite::stream::once(Ok(failed_event(&err)))),
    };
    let feed = SwarmFeed {
        own: hive.own_hive(),
        local: hive.subscribe_roster(),
        remote: hive.subscribe_swarm(),
        queued: VecDeque::from([Event::default().event("ready").data("live")]),
        web,
    };
    sse(futures_lite::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    }))
}
