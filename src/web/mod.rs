//! The operator's dashboard: the hive in a browser, served by the daemon on
//! its second listener (`web`, `<runtime-dir>/web.sock`).
//!
//! Decisions, and the alternatives they beat:
//! - **The socket is the login.** `web.sock` has host.sock's mode and group
//!   (0660 root:hive-admin), so who may open the dashboard is exactly who may
//!   run `hivectl`; a reverse proxy or `ssh -L` carries it to a browser. A
//!   password or session store of our own would be a second, weaker gate.
//! - **One service underneath.** Every page reads and every action calls the
//!   same [`Hive`] methods host.sock's dispatcher calls (the operator's door:
//!   the service applies the one access policy), and a refusal is shown in
//!   the words host.sock answers (the error's `Display`, see
//!   [`refusal_text`]), so no verb has a second implementation with
//!   rules of its own.
//! - **Server-rendered HTML, a little JavaScript.** Pages are
//!   [maud](https://maud.lambda.xyz) templates (checked by the compiler,
//!   every interpolation escaped). Live parts arrive as Server-Sent Events
//!   carrying rows rendered by the same templates, which `dashboard.js`
//!   swaps in: the roster is fed by the in-process stream behind
//!   `subscribe_agent_status`, logs by `journalctl -f` — nothing polls. A
//!   JSON API plus a client-side renderer would be a second renderer.
//! - **Cross-site requests are refused twice** ([`guard`]): every POST must
//!   come from this origin (`Origin`/`Sec-Fetch-Site`) *and* carry the
//!   per-daemon token embedded in the page; responses carry a strict
//!   Content-Security-Policy with no inline script.
//!
//! Files: [`guard`] (CSRF, security headers), [`views`] (the templates),
//! [`pages`] (GET handlers), [`actions`] (POST handlers), [`live`] (SSE),
//! [`lists`] (the live inbox and questions), [`turn`] (the agent page's
//! turn in progress and last turns, live), [`swarm`] (the swarm page and
//! its stream), [`usage`] (the usage page's charts) and [`budgets`] (its
//! budgets), [`metrics`]
//! (`/metrics`).

pub mod actions;
pub mod budgets;
pub mod guard;
pub mod lists;
pub mod live;
pub mod metrics;
pub mod pages;
pub mod swarm;
pub mod turn;
pub mod usage;
pub mod views;
#[cfg(test)]
mod web_tests;

use std::sync::Arc;

use axum::Router;
use axum::routing::{get, post};
use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;

use crate::errors::chain;
use crate::service::{Hive, HiveError, Who};
use crate::wire::ident::Ident;
use guard::Token;

/// What every handler shares: the hive, the CSRF token and the shutdown
/// signal (which ends the live streams, so a drain does not wait on them).
#[derive(Debug, Clone)]
pub struct Web {
    pub hive: Hive,
    pub token: Arc<Token>,
    pub shutdown: CancellationToken,
}

/// The dashboard's routes.
pub fn router(web: Web) -> Router {
    Router::new()
        .route("/", get(pages::roster))
        .route("/approvals", get(pages::approvals))
        .route("/inbox", get(pages::inbox))
        .route("/questions", get(pages::questions))
        .route("/swarm", get(swarm::page))
        .route("/metrics", get(metrics::page))
        .route("/usage", get(usage::page))
        .route("/budgets/set", post(budgets::set))
        .route("/budgets/unset", post(budgets::unset))
        .route("/events/swarm", get(swarm::events))
        .route("/agent/{name}", get(pages::agent))
        .route("/events/roster", get(live::roster))
        .route("/events/logs/{name}", get(live::logs))
        .route("/events/turn/{name}", get(turn::events))
        .route("/events/inbox", get(lists::inbox))
        .route("/events/questions", get(lists::questions))
        .route("/static/dashboard.js", get(pages::script))
        .route("/static/dashboard.css", get(pages::style))
        .route("/agent/{name}/interrupt", post(actions::interrupt))
        .route("/agent/{name}/{verb}", post(actions::lifecycle))
        .route("/spawn", post(actions::spawn))
        .route("/approvals/{id}/{decision}", post(actions::decide))
        .route("/inbox/send", post(actions::send))
        .route("/questions/{id}/answer", post(actions::answer))
        .layer(axum::middleware::from_fn_with_state(
            web.clone(),
            guard::check,
        ))
        .with_state(web)
}

impl Web {
    /// The hive, once the one access policy lets the operator (this door's
    /// caller) run host verb `verb` on `target`: the check host.sock makes
    /// before the same call.
    pub async fn operator(&self, verb: &str, target: Option<&Ident>) -> Result<&Hive, HiveError> {
        self.hive.authorize(Who::Operator, verb, target).await?;
        Ok(&self.hive)
    }

    /// The dashboard's state, with a fresh CSRF token.
    pub fn new(hive: Hive, shutdown: CancellationToken) -> std::io::Result<Self> {
        Ok(Self {
            hive,
            token: Arc::new(Token::generate()?),
            shutdown,
        })
    }
}

/// Serve the dashboard on `listener` until the web's shutdown token fires;
/// live streams end at once, other requests finish.
pub async fn serve(listener: UnixListener, web: Web) {
    let shutdown = web.shutdown.clone();
    if let Err(err) = axum::serve(listener, router(web))
        .with_graceful_shutdown(shutdown.cancelled_owned())
        .await
    {
        tracing::error!("web.sock stopped serving: {err}");
    }
}

/// The words a refusal is shown in: the error's `Display`, which is what
/// host.sock answers too. The hive's own failures go to the daemon's log
/// with their whole chain (at error); a refused request only at debug: it
/// is the operator's own, shown to them on the page. Here, at the door,
/// because pages and live streams both show refusals (and pages embed the
/// live lists).
pub fn refusal_text(err: &HiveError) -> String {
    if err.code().is_hive_failure() {
        tracing::error!("dashboard request failed: {}", chain(err));
    } else {
        tracing::debug!("dashboard request refused: {}", chain(err));
    }
    err.to_string()
}
