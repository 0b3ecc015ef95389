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
use tokio::net::{UnixListener, UnixStream};
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

/// How long a client has to send a request's whole head (and an idle
/// kept-alive connection to start its next one) before web.sock closes the
/// connection: host.sock's deadline for its request line, so that no door
/// of the daemon can be held open by a client that dribbles or says
/// nothing. A browser sends a head in one write, through `ssh -L` or a
/// reverse proxy too; one that reuses a connection the dashboard closed
/// opens a new one.
pub const HEAD_TIMEOUT: std::time::Duration = crate::config::HEAD_DEADLINE;

/// Serve the dashboard on `listener` until the web's shutdown token fires;
/// live streams end at once, other requests finish.
///
/// Each connection is served by hyper's HTTP/1 server with a head deadline
/// ([`HEAD_TIMEOUT`]): `axum::serve` (used before) sets none, so a client
/// that never finished its head held its connection, a task and a file
/// descriptor for good.
pub async fn serve(listener: UnixListener, web: Web) {
    let shutdown = web.shutdown.clone();
    let app = router(web);
    let mut connections = tokio::task::JoinSet::new();
    loop {
        let accepted = tokio::select! {
            () = shutdown.cancelled() => break,
            accepted = listener.accept() => accepted,
        };
        let stream = match accepted {
            Ok((stream, _)) => stream,
            Err(err) => {
                // Out of descriptors and the like: the listener stays.
                tracing::warn!("web.sock: accept failed: {err}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        while connections.try_join_next().is_some() {}
        connections.spawn(connection(stream, app.clone(), shutdown.clone()));
    }
    while connections.join_next().await.is_some() {}
}

/// Serve one connection until it ends; at shutdown, the request in
/// progress finishes and the connection closes.
async fn connection(stream: UnixStream, app: Router, shutdown: CancellationToken) {
    let service = hyper_util::service::TowerToHyperService::new(app);
    let mut builder = hyper::server::conn::http1::Builder::new();
    builder
        .timer(hyper_util::rt::TokioTimer::new())
        .header_read_timeout(HEAD_TIMEOUT);
    let conn = builder.serve_connection(hyper_util::rt::TokioIo::new(stream), service);
    tokio::pin!(conn);
    let ended = tokio::select! {
        ended = conn.as_mut() => ended,
        () = shutdown.cancelled() => {
            conn.as_mut().graceful_shutdown();
            conn.await
        }
    };
    if let Err(err) = ended {
        tracing::debug!("web.sock: a connection ended: {err}");
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
