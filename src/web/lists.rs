//! The operator's inbox and open questions, live.
//!
//! `GET /events/inbox` and `GET /events/questions` send `ready` and the
//! list as it is, then one `list` event (the list's items, rendered by the
//! page's own template) each time the service says the operator's view changed
//! ([`crate::service::Hive::watch_operator_view`]: a message to `operator`
//! committed, a question asked, answered, withdrawn or expired). Changes
//! that come while a list is being rendered coalesce into one more render.
//! `dashboard.js` merges the items by id, so a half-typed answer in a
//! question that is still open is left alone.

use std::future::Future;

use axum::extract::State;
use axum::response::sse::Event;
use maud::Markup;

use super::live::{Events, failed_event, sse};
use super::{Web, views};
use crate::service::{HiveError, Recipient};
use crate::wire::host::DEFAULT_INBOX_LIMIT;

/// The inbox's items as the page shows them.
pub async fn inbox_items(web: &Web) -> Result<Markup, HiveError> {
    let messages = web
        .operator("inbox", None)
        .await?
        .messaging()
        .recent(Recipient::Operator, DEFAULT_INBOX_LIMIT)
        .await?;
    Ok(views::inbox_items(&messages))
}

/// The open questions as the page shows them.
pub async fn question_items(web: &Web) -> Result<Markup, HiveError> {
    let questions = web
        .operator("questions", None)
        .await?
        .open_questions()
        .await?;
    Ok(views::question_items(&questions, web.token.as_str()))
}

/// `GET /events/inbox`.
pub async fn inbox(State(web): State<Web>) -> Events {
    feed(web, "inbox", |web| async move { inbox_items(&web).await }).await
}

/// `GET /events/questions`.
pub async fn questions(State(web): State<Web>) -> Events {
    feed(
        web,
        "questions",
        |web| async move { question_items(&web).await },
    )
    .await
}

/// `ready`, then the list rendered by `render` after each change.
async fn feed<F, Fut>(web: Web, verb: &'static str, render: F) -> Events
where
    F: Fn(Web) -> Fut + Send + Sync + 'static,
    Fut: Future<Output = Result<Markup, HiveError>> + Send + 'static,
{
    if let Err(err) = web.operator(verb, None).await {
        return sse(futures_lite::stream::once(Ok(failed_event(&err))));
    }
    let mut changes = web.hive.messaging().watch_operator_view();
    changes.mark_unchanged();
    // After `ready`, the list once as it is now: a change between the
    // page's render and this subscription is not lost.
    let state = (web, changes, render, Some(true));
    sse(futures_lite::stream::unfold(
        state,
        |(web, mut changes, render, start)| async move {
            if start == Some(true) {
                let ready = Event::default().event("ready").data("live");
                return Some((Ok(ready), (web, changes, render, Some(false))));
            }
            if start.is_none() {
                let shutdown = web.shutdown.clone();
                tokio::select! {
                    () = shutdown.cancelled() => return None,
                    changed = changes.changed() => changed.ok()?,
                }
            }
            changes.mark_unchanged();
            let event = match render(web.clone()).await {
                Ok(items) => Event::default().event("list").data(items.into_string()),
                Err(err) => failed_event(&err),
            };
            Some((Ok(event), (web, changes, render, None)))
        },
    ))
}
