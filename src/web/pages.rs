//! The dashboard's GET handlers: each reads through the service and renders
//! a template. A read that fails shows the hive's error text.

use axum::extract::{Path, State};
use axum::http::{StatusCode, header};
use axum::response::{IntoResponse, Response};

use super::{Web, lists, refusal_text, views};
use crate::service::HiveError;
use crate::wire::ident::Ident;

const SCRIPT: &str = include_str!("static/dashboard.js");
const STYLE: &str = include_str!("static/dashboard.css");

/// A hive error as a page, in host.sock's words, with its code's HTTP
/// status (`ErrorCode::http_status`: 404 for an unknown agent, 409 for a
/// state that moved on, 500 for the hive's own failure, ...).
pub fn failed(err: &HiveError) -> Response {
    let status =
        StatusCode::from_u16(err.code().http_status()).unwrap_or(StatusCode::INTERNAL_SERVER_ERROR);
    (status, views::refusal(&refusal_text(err))).into_response()
}

/// `GET /`: the roster.
pub async fn roster(State(web): State<Web>) -> Response {
    // The roster as the service holds it: shared, not copied per request.
    match web.operator("agent_status", None).await.map(|h| h.roster()) {
        Ok(roster) => views::roster_page(roster.rows(), web.token.as_str()).into_response(),
        Err(err) => failed(&err),
    }
}

/// `GET /approvals`: each pending config proposal with its diff (as
/// `hivectl show` prints it) for review before the decision.
pub async fn approvals(State(web): State<Web>) -> Response {
    let read = async {
        let rows = web.operator("pending", None).await?.approvals().await?;
        let mut reviews = Vec::new();
        for row in rows.iter().filter(|a| views::reviewable(a)) {
            reviews.push(web.operator("show", None).await?.review(row.id).await?);
        }
        Ok::<_, HiveError>((rows, reviews))
    };
    match read.await {
        Ok((rows, reviews)) => {
            views::approvals_page(&rows, &reviews, web.token.as_str()).into_response()
        }
        Err(err) => failed(&err),
    }
}

/// `GET /inbox`: the operator's inbox, newest first.
pub async fn inbox(State(web): State<Web>) -> Response {
    let read = async {
        let agents = web.operator("list", None).await?.list().await?;
        Ok::<_, HiveError>((agents, lists::inbox_items(&web).await?))
    };
    match read.await {
        Ok((agents, items)) => {
            let agents: Vec<String> = agents.into_iter().map(|a| a.to_string()).collect();
            views::inbox_page(&agents, items, web.token.as_str()).into_response()
        }
        Err(err) => failed(&err),
    }
}

/// `GET /questions`: the open ones.
pub async fn questions(State(web): State<Web>) -> Response {
    match lists::question_items(&web).await {
        Ok(items) => views::questions_page(items).into_response(),
        Err(err) => failed(&err),
    }
}

/// `GET /agent/{name}`.
pub async fn agent(State(web): State<Web>, Path(name): Path<String>) -> Response {
    let name = match Ident::new(name) {
        Ok(n) => n,
        Err(err) => {
            return (StatusCode::BAD_REQUEST, views::refusal(&err.to_string())).into_response();
        }
    };
    let read = async {
        let row = web
            .operator("agent_status", None)
            .await?
            .row(&name)
            .await?
            .ok_or_else(|| HiveError::UnknownAgent(name.clone()))?;
        let grants = web
            .operator("grants", Some(&name))
            .await?
            .grants(Some(&name))
            .await?;
        let schedules = web
            .operator("schedules", None)
            .await?
            .list_schedules()
            .await?;
        let turns = super::turn::read_last(&web, &name).await?;
        Ok::<_, HiveError>((row, grants, schedules, turns))
    };
    match read.await {
        Ok((row, grants, schedules, turns)) => {
            let live = web.hive.usage().live_turn(&name);
            let mine = |s: &&crate::wire::agenda::WireSchedule| {
                s.owner == name.as_str() || s.targets.iter().any(|t| t.target == name.as_str())
            };
            let details = views::AgentDetails {
                row: &row,
                grants: grants.first(),
                schedules: schedules.iter().filter(mine).collect(),
                turn_view: super::turn::view(live.as_ref(), &turns),
            };
            views::agent_page(&details, web.token.as_str()).into_response()
        }
        Err(err) => failed(&err),
    }
}

/// `GET /static/dashboard.js`: the page's only script.
pub async fn script() -> Response {
    static_file("text/javascript; charset=utf-8", SCRIPT)
}

/// `GET /static/dashboard.css`.
pub async fn style() -> Response {
    static_file("text/css; charset=utf-8", STYLE)
}

fn static_file(kind: &'static str, body: &'static str) -> Response {
    (
        [
            (header::CONTENT_TYPE, kind),
            (header::CACHE_CONTROL, "max-age=300"),
        ],
        body,
    )
        .into_response()
}
