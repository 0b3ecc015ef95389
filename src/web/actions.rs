//! The dashboard's POST handlers. Each turns a form into one call of the
//! service — the very call host.sock's dispatcher makes for the same verb —
//! and answers with a redirect (303, back to the page the form was on) or
//! the refusal in the hive's words. The forgery checks ran before
//! ([`super::guard`]).

use axum::Form;
use axum::extract::{Path, State};
use axum::http::StatusCode;
use axum::response::{IntoResponse, Redirect, Response};
use serde::Deserialize;

use super::pages::failed;
use super::{Web, views};
use crate::service::{Answerer, HiveError};
use crate::wire::host::LifecycleScope;
use crate::wire::ident::{AgentAt, Ident};

/// The fields every action form may carry besides its own.
#[derive(Debug, Deserialize)]
pub struct Common {
    /// Where to go when done: a path on this dashboard.
    #[serde(default)]
    pub back: Option<String>,
}

/// Where a successful action returns: the form's `back` when it is a local
/// path (never another host: `//x` and `/\x` are refused), else `default`.
pub fn back_to(back: Option<&str>, default: &str) -> String {
    match back {
        Some(b) if b.starts_with('/') && !b.starts_with("//") && !b.contains('\\') => b.to_owned(),
        _ => default.to_owned(),
    }
}

fn outcome<T>(result: Result<T, HiveError>, back: Option<&str>, default: &str) -> Response {
    match result {
        Ok(_) => Redirect::to(&back_to(back, default)).into_response(),
        Err(err) => failed(&err),
    }
}

fn bad(message: impl std::fmt::Display) -> Response {
    (
        StatusCode::BAD_REQUEST,
        views::refusal(&message.to_string()),
    )
        .into_response()
}

/// `POST /agent/{name}/{start|stop|restart|pause|resume}`.
pub async fn lifecycle(
    State(web): State<Web>,
    Path((name, verb)): Path<(String, String)>,
    Form(form): Form<Common>,
) -> Response {
    let name = match Ident::new(name) {
        Ok(n) => n,
        Err(err) => return bad(err),
    };
    let default = format!("/agent/{name}");
    // The host verb each button is, for the access policy.
    let cmd = match verb.as_str() {
        "start" | "stop" | "restart" => verb.as_str(),
        "pause" | "resume" => "set_paused",
        other => {
            return bad(format!(
                "unknown action {:?}: use start, stop, restart, pause or resume",
                other.chars().take(40).collect::<String>()
            ));
        }
    };
    let result = async {
        // As host.sock describes them: start/stop name a scope, not a target.
        let target = (!matches!(cmd, "start" | "stop")).then_some(&name);
        let hive = web.operator(cmd, target).await?;
        let one = LifecycleScope::agents(vec![name.clone()]);
        match verb.as_str() {
            "start" => hive.start(&one).await,
            // hivectl's `stop` default: graceful, the hive's deadline.
            "stop" => hive.stop(&one, true, None).await,
            "restart" => hive.restart(&name).await,
            paused => hive.set_paused(&name, paused == "pause").await.map(drop),
        }
    };
    outcome(result.await, form.back.as_deref(), &default)
}

/// The interrupt form: the agent's next message, if any.
#[derive(Debug, Deserialize)]
pub struct InterruptForm {
    #[serde(default)]
    pub note: Option<String>,
}

/// `POST /agent/{name}/interrupt`: end the agent's turn in progress.
pub async fn interrupt(
    State(web): State<Web>,
    Path(name): Path<String>,
    Form(form): Form<InterruptForm>,
) -> Response {
    let name = match Ident::new(name) {
        Ok(n) => n,
        Err(err) => return bad(err),
    };
    let note = form.note.filter(|n| !n.trim().is_empty());
    let done = async {
        let hive = web.operator("interrupt", Some(&name)).await?;
        hive.usage().interrupt(&name, note).await
    };
    let back = format!("/agent/{name}");
    outcome(done.await, None, &back)
}

/// The spawn form: a name and which of the two verbs.
#[derive(Debug, Deserialize)]
pub struct SpawnForm {
    pub name: String,
    /// `spawn` (now) or `request` (queue an approval).
    pub how: String,
}

/// `POST /spawn`: `spawn` or `request_spawn`, as chosen.
pub async fn spawn(State(web): State<Web>, Form(form): Form<SpawnForm>) -> Response {
    let name = match Ident::new(form.name) {
        Ok(n) => n,
        Err(err) => return bad(err),
    };
    match form.how.as_str() {
        "spawn" => {
            let done = async { web.operator("spawn", Some(&name)).await?.spawn(&name).await };
            outcome(done.await, None, "/")
        }
        "request" => {
            let hive = web.operator("request_spawn", Some(&name));
            let done = async { hive.await?.request_spawn(&name).await };
            outcome(done.await, None, "/approvals")
        }
        _ => bad("choose \"spawn\" or \"request spawn\""),
    }
}

/// An approval's form: [`Common`], and for an egress request how long its
/// grant lasts (`for_secs`; empty or absent: until revoked).
#[derive(Debug, Deserialize)]
pub struct DecideForm {
    #[serde(default)]
    pub back: Option<String>,
    #[serde(default)]
    pub for_secs: Option<String>,
}

/// `POST /approvals/{id}/{approve|deny}`.
pub async fn decide(
    State(web): State<Web>,
    Path((id, decision)): Path<(i64, String)>,
    Form(form): Form<DecideForm>,
) -> Response {
    let back = form.back.as_deref();
    let lasting = match form.for_secs.as_deref().map(str::trim) {
        None | Some("") => None,
        Some(secs) => match secs.parse::<u64>() {
            Ok(secs) => Some(std::time::Duration::from_secs(secs)),
            Err(_) => return bad(format!("for_secs {secs:?}: give whole seconds")),
        },
    };
    match decision.as_str() {
        "approve" => {
            let done = async {
                let hive = web.operator("approve", None).await?;
                hive.approve(id, lasting).await
            };
            outcome(done.await, back, "/approvals")
        }
        "deny" => {
            let done = async { web.operator("deny", None).await?.deny(id, None).await };
            outcome(done.await, back, "/approvals")
        }
        _ => bad("use approve or deny"),
    }
}

/// The send form.
#[derive(Debug, Deserialize)]
pub struct SendForm {
    pub to: String,
    pub body: String,
}

/// `POST /inbox/send`: a message from `operator` to an agent.
pub async fn send(State(web): State<Web>, Form(form): Form<SendForm>) -> Response {
    let to: AgentAt = match form.to.parse() {
        Ok(n) => n,
        Err(err) => return bad(err),
    };
    let done = async {
        let hive = web.operator("send", Some(&to.agent)).await?;
        hive.messaging()
            .send_from_operator(&to.agent, to.hive.as_ref(), form.body)
            .await
    };
    outcome(done.await, None, "/inbox")
}

/// The answer form.
#[derive(Debug, Deserialize)]
pub struct AnswerForm {
    pub answer: String,
}

/// `POST /questions/{id}/answer`: answer as the operator.
pub async fn answer(
    State(web): State<Web>,
    Path(id): Path<i64>,
    Form(form): Form<AnswerForm>,
) -> Response {
    let done = async {
        let hive = web.operator("answer", None).await?;
        hive.answer(Answerer::Operator, id, form.answer).await
    };
    outcome(done.await, None, "/questions")
}

#[cfg(test)]
#[path = "actions_tests.rs"]
mod tests;
