//! The agent page's turn view: the turn in progress as its harness reports
//! it (the prompt's senders and first lines, each tool call as it starts
//! and ends, Claude's latest text, tokens so far) above the agent's last
//! turns from the journal; and `GET /events/turn/{name}`, which sends the
//! view again, rendered here, each time that agent's live turn changes.
//!
//! Decision: the whole view per change, not a diff. It is bounded (the
//! daemon caps every field and the tool list), so one template renders it
//! for the page and the stream alike and `dashboard.js` swaps it in; a
//! browser that falls behind simply gets the view as it is now. Every
//! value an agent sent is escaped by maud. The journal is read again only
//! when a turn ends.

use axum::extract::{Path, State};
use axum::response::sse::Event;
use maud::{Markup, html};
use tokio::sync::broadcast::error::{RecvError, TryRecvError};

use super::live::{Events, failed_event, sse};
use super::{Web, views};
use crate::service::HiveError;
use crate::wire::ident::Ident;
use crate::wire::live::LiveTurn;
use crate::wire::spend::{dollars, tokens};
use crate::wire::turns::TurnRow;

/// How many of the agent's last turns the view shows.
pub const LAST_TURNS: u32 = 10;

fn ms_at(ms: i64) -> String {
    views::at(ms.div_euclid(1000))
}

fn seconds(ms: u64) -> String {
    format!("{:.1} s", ms as f64 / 1000.0)
}

/// The turn in progress, or a line saying there is none.
pub fn live_turn(turn: Option<&LiveTurn>) -> Markup {
    let Some(t) = turn else {
        return html! {
            h2 { "Current turn" }
            p #no-turn { "No turn in progress." }
        };
    };
    let listed = t.messages.len();
    html! {
        h2 { "Current turn" }
        p.meta #turn-live {
            "started " (ms_at(t.started_at_ms)) " · " (t.total_messages) " message(s)"
            @if let Some(u) = &t.usage { " · " (tokens(u.total())) " tokens so far" }
            @if let Some(c) = t.cost_micro_usd { " · " (dollars(c)) }
            @if t.dropped > 0 { " · " (t.dropped) " events not shown (the hive was slow)" }
        }
        ul.prompt {
            @for m in &t.messages { li { strong { (m.from) } ": " (m.first_line) } }
            @if (t.total_messages as usize) > listed { li { "… and " (t.total_messages as usize - listed) " more" } }
        }
        @if !t.tools.is_empty() {
            table.rows #turn-tools {
                thead { tr { th { "tool" } th { "state" } th { "took" } } }
                tbody {
                    @for tool in &t.tools {
                        tr {
                            td.mono { (tool.name) }
                            @match tool.ok {
                                None => td { span.state.ok { "running" } },
                                Some(true) => td { "ok" },
                                Some(false) => td { span.state.bad { "failed" } },
                            }
                            td.num { @if let Some(ms) = tool.duration_ms { (seconds(ms)) } }
                        }
                    }
                }
            }
            @if t.tools_left_out > 0 { p { small { (t.tools_left_out) " more tool calls not shown" } } }
        }
        @if let Some(reply) = &t.reply {
            h3 { "Says" }
            pre.reply #turn-reply { (reply) }
        }
    }
}

/// The agent's last turns, newest first.
pub fn last_turns(rows: &[TurnRow]) -> Markup {
    html! {
        h2 { "Last turns" }
        @if rows.is_empty() { p { "None yet." } }
        @else {
            table.rows #last-turns {
                thead { tr {
                    th { "id" } th { "ended" } th { "outcome" } th { "took" } th { "msgs" }
                    th { "model" } th { "tokens" } th { "cost" } th { "tools" } th { "error" }
                } }
                tbody {
                    @for t in rows {
                        @let r = &t.report;
                        tr {
                            td.num { (t.id) }
                            td { (ms_at(r.ended_at_ms)) }
                            td { (r.outcome.as_str()) }
                            td.num { (seconds(u64::try_from(r.ended_at_ms - r.started_at_ms).unwrap_or(0))) }
                            td.num { (r.message_ids.len()) }
                            td { @if let Some(m) = &r.model { (m) } }
                            td.num { @if let Some(u) = &r.usage { (tokens(u.total())) } }
                            td.num { @if let Some(c) = r.cost_micro_usd { (dollars(c)) } }
                            td.mono {
                                @for (i, c) in r.tools.iter().enumerate() {
                                    @if i > 0 { ", " }
                                    (c.name) @if !c.ok { "!" }
                                }
                            }
                            td { @if let Some(e) = &r.error { (e) } }
                        }
                    }
                }
            }
        }
    }
}

/// The whole view: the turn in progress, then the last turns.
pub fn view(turn: Option<&LiveTurn>, rows: &[TurnRow]) -> Markup {
    html! { (live_turn(turn)) (last_turns(rows)) }
}

/// The agent's last turns, read as the operator.
pub async fn read_last(web: &Web, name: &Ident) -> Result<Vec<TurnRow>, HiveError> {
    web.operator("turns", Some(name))
        .await?
        .usage()
        .turns(name, LAST_TURNS)
        .await
}

/// `GET /events/turn/{name}`: `ready`, the view (`html`) as it is, then
/// the view again after each change of the agent's live turn.
pub async fn events(State(web): State<Web>, Path(name): Path<String>) -> Events {
    let name = match Ident::new(name) {
        Ok(n) => n,
        Err(err) => {
            let event = Event::default().event("failed").data(err.to_string());
            return sse(futures_lite::stream::once(Ok(event)));
        }
    };
    // Subscribed before the journal is read: no change falls between.
    let changes = web.hive.usage().subscribe_live();
    let rows = match read_last(&web, &name).await {
        Ok(rows) => rows,
        Err(err) => return sse(futures_lite::stream::once(Ok(failed_event(&err)))),
    };
    let feed = Feed {
        web,
        name,
        changes,
        rows,
        ready: false,
        fresh: true,
    };
    sse(futures_lite::stream::unfold(feed, |mut feed| async move {
        let event = feed.next().await?;
        Some((Ok(event), feed))
    }))
}

struct Feed {
    web: Web,
    name: Ident,
    changes: tokio::sync::broadcast::Receiver<std::sync::Arc<crate::wire::live::LiveChange>>,
    rows: Vec<TurnRow>,
    ready: bool,
    /// The view is sent once right after `ready`: a change between the
    /// page's render and the subscription is not lost.
    fresh: bool,
}

impl Feed {
    async fn next(&mut self) -> Option<Event> {
        if !self.ready {
            self.ready = true;
            return Some(Event::default().event("ready").data("live"));
        }
        let shutdown = self.web.shutdown.clone();
        let mut ended = false;
        // Wait for a change of this agent, then take every change queued
        // behind it: one render for a burst (no wait right after `ready`).
        while !std::mem::take(&mut self.fresh) {
            let heard = tokio::select! {
                () = shutdown.cancelled() => return None,
                r = self.changes.recv() => r,
            };
            match heard {
                Ok(c) if c.agent == self.name => {
                    ended |= c.ended;
                    break;
                }
                Ok(_) => {}
                Err(RecvError::Lagged(_)) => {
                    ended = true;
                    break;
                }
                Err(RecvError::Closed) => return None,
            }
        }
        loop {
            match self.changes.try_recv() {
                Ok(c) => ended |= c.agent == self.name && c.ended,
                Err(TryRecvError::Lagged(_)) => ended = true,
                Err(TryRecvError::Empty | TryRecvError::Closed) => break,
            }
        }
        if ended {
            match read_last(&self.web, &self.name).await {
                Ok(rows) => self.rows = rows,
                Err(err) => return Some(failed_event(&err)),
            }
        }
        let turn = self.web.hive.usage().live_turn(&self.name);
        let html = view(turn.as_ref(), &self.rows).into_string();
        Some(Event::default().event("html").data(html))
    }
}

#[cfg(test)]
#[path = "turn_tests.rs"]
mod tests;
