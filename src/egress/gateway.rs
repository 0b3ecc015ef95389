//! The model gateway (issue 46): an agent's requests to the model, served
//! in the egress service so that the credential and the meter stay on the
//! host.
//!
//! Inside the container Claude Code's `ANTHROPIC_BASE_URL` is the harness's
//! egress forwarder on loopback (`http://127.0.0.1:PORT`); a request in
//! origin form (`POST /v1/messages HTTP/1.1`) reaches this service through
//! the agent's own `egress.sock`, so the agent is who its socket says,
//! never what the request says. Here:
//! - **Only the routes Claude Code uses** ([`ROUTES`]); anything else is a
//!   404 naming what is served.
//! - **The credential is the host's**: whatever credential header the agent
//!   sent (`x-api-key`, `Authorization`: the harness's sentinel, or a key
//!   of its own) is dropped and the host's put in
//!   ([`super::upstream::Credential`]); with no host credential chosen
//!   (`model_credential` unset) the agent's own header goes up as it came,
//!   so an agent logged in by itself keeps working — but never the
//!   sentinel, which is answered 401 here.
//! - **Streams pass through as they come**: the answer's body is hyper's
//!   chunks handed on one by one, read by the meter's tap on the way
//!   ([`super::meter::Tap`]); a client that goes away drops the answer,
//!   and with it the upstream's connection.
//! - **Bounded**: a request body over [`MAX_REQUEST`] is a 413; an
//!   upstream that does not answer within the head timeout is a 504, one
//!   that cannot be reached (or fails TLS) a 502 — each an Anthropic-shaped
//!   error (`{"type":"error","error":{...}}`), which Claude Code shows,
//!   retried only when the upstream is at fault ([`super::api_error`]).
//! - **Budgets hold at the request**: a `POST /v1/messages` of an agent
//!   a reached budget holds waits until the daemon lets it go, or is
//!   answered the budget's error after the hold's wait ([`super::holds`]).
//! - **Every request is a meter row** ([`MeterRow`]), sent when its answer
//!   ends (or is cut) on the connection's row channel, which the service
//!   frames to the daemon ([`super::service`]).
//!
//! HTTP/1.1 both ways (what Claude Code speaks to a base URL of `http://`,
//! and enough upstream); the upstream's connections are pooled.

use std::convert::Infallible;
use std::path::PathBuf;
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll, ready};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full, Limited};
use hyper::body::{Body, Frame, Incoming, SizeHint};
use hyper::header::{self, HeaderValue};
use hyper::{Method, Request, Response, StatusCode};
use hyper_util::client::legacy::Client;
use hyper_util::rt::TokioExecutor;
use tokio::sync::mpsc::UnboundedSender;

use super::api_error::{SHOULD_RETRY, error_body, retry_value};
pub use super::forward::{OAUTH_BETA, SENTINEL_PREFIX};
use super::forward::{carries_sentinel, strip_hop_by_hop, upstream_request};
use super::holds::{HoldView, held_message};
use super::meter::{Kind, Prices, Tap};
use super::upstream::{Connector, Credential, Upstream};
use crate::wire::ident::Ident;
use crate::wire::model_log::{CredentialName, MeterRow, Tokens};

/// The routes served: what Claude Code asks of the Messages API.
pub const ROUTES: &[(&str, &str)] = &[
    ("POST", "/v1/messages"),
    ("POST", "/v1/messages/count_tokens"),
    ("GET", "/v1/models"),
    ("GET", "/v1/models/{id}"),
];

/// The route a reached budget holds ([`super::holds`]): the one that spends.
pub const HELD_ROUTE: &str = "POST /v1/messages";

/// The largest request body taken (the Messages API's own limit is 32 MB).
pub const MAX_REQUEST: usize = 32 << 20;

/// How long the upstream may take to answer a request's head, by default:
/// Claude Code's own request timeout (`API_TIMEOUT_MS`, 10 minutes), so the
/// gateway never cuts what the client would still wait for.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(600);

/// The gateway's settings and its pooled client, shared by every
/// connection of the service.
#[derive(Debug)]
pub struct Gateway {
    upstream: Upstream,
    client: Client<Connector, Full<Bytes>>,
    credentials_dir: Option<PathBuf>,
    head_timeout: Duration,
    prices: Prices,
}

impl Gateway {
    /// A gateway to `upstream` over `tls`, reading credentials from
    /// `credentials_dir` (`$CREDENTIALS_DIRECTORY`).
    pub fn new(
        upstream: Upstream,
        tls: rustls::ClientConfig,
        credentials_dir: Option<PathBuf>,
        head_timeout: Duration,
    ) -> Self {
        let connector = Connector::new(upstream.clone(), tls);
        let client = Client::builder(TokioExecutor::new())
            .pool_idle_timeout(Duration::from_secs(60))
            .build(connector);
        Self {
            upstream,
            client,
            credentials_dir,
            head_timeout,
            prices: Prices::shipped(),
        }
    }

    pub fn upstream(&self) -> &Upstream {
        &self.upstream
    }
}

/// One agent connection's side of the gateway.
#[derive(Debug, Clone)]
pub struct Caller {
    pub agent: Ident,
    pub credential: Option<CredentialName>,
    pub rows: UnboundedSender<MeterRow>,
    /// Whether a budget holds the agent, read per request.
    pub holds: HoldView,
}

/// An Anthropic-shaped error answer the gateway makes itself, with the
/// `x-should-retry` its status calls for ([`super::api_error::should_retry`]).
pub fn error_response(status: StatusCode, kind: &str, message: &str) -> Response<Answer> {
    let mut resp = Response::new(Answer::full(Bytes::from(error_body(kind, message))));
    *resp.status_mut() = status;
    let headers = resp.headers_mut();
    headers.insert(
        header::CONTENT_TYPE,
        HeaderValue::from_static("application/json"),
    );
    headers.insert(SHOULD_RETRY, HeaderValue::from_static(retry_value(status)));
    resp
}

/// Which route `method path` is, if served.
pub fn route(method: &Method, path: &str) -> Option<&'static str> {
    let served = |m: &str, p: &str| method.as_str() == m && path == p;
    if served("POST", "/v1/messages") {
        Some(HELD_ROUTE)
    } else if served("POST", "/v1/messages/count_tokens") {
        Some("POST /v1/messages/count_tokens")
    } else if served("GET", "/v1/models") {
        Some("GET /v1/models")
    } else if method == Method::GET
        && path.strip_prefix("/v1/models/").is_some_and(|id| {
            !id.is_empty()
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b'_' | b'@'))
        })
    {
        Some("GET /v1/models/{id}")
    } else {
        None
    }
}

/// The 404's message: what was asked and what is served.
pub fn not_served(method: &Method, path: &str) -> String {
    let served: Vec<String> = ROUTES.iter().map(|(m, p)| format!("{m} {p}")).collect();
    format!(
        "hive-c0re model gateway: {method} {} is not served here; it serves {}",
        crate::wire::egress_audit::bounded(path, 100),
        served.join(", ")
    )
}

/// The row of one request, sent once: when its answer ends, or, if it is
/// dropped first (the client went away), then, as cut.
#[derive(Debug)]
struct Pending {
    row: MeterRow,
    started: Instant,
    rows: UnboundedSender<MeterRow>,
    sent: bool,
}

impl Pending {
    fn new(route: String, rows: UnboundedSender<MeterRow>) -> Self {
        Self {
            row: MeterRow {
                // The daemon's clock stamps it (the hive's time is a
                // parameter there; this process has none of its own).
                at_ms: 0,
                route,
                model: None,
                status: 0,
                tokens: Tokens::default(),
                cost_micro_usd: None,
                ms: 0,
                request_id: None,
                error: None,
            },
            started: Instant::now(),
            rows,
            sent: false,
        }
    }

    fn send(&mut self) {
        if !self.sent {
            self.sent = true;
            self.row.ms = u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX);
            let row = self.row.clone().bounded();
            let _ = self.rows.send(row);
        }
    }

    /// Answered by the gateway itself.
    fn answer(mut self, status: StatusCode, kind: &str, message: &str) -> Response<Answer> {
        self.row.status = status.as_u16();
        self.row.error = Some(message.to_owned());
        self.send();
        error_response(status, kind, message)
    }
}

impl Drop for Pending {
    fn drop(&mut self) {
        if !self.sent {
            if self.row.error.is_none() {
                self.row.error = Some("cut: the client went away before the answer ended".into());
            }
            self.send();
        }
    }
}

/// Serve one request of `caller`.
pub async fn handle(
    gateway: Arc<Gateway>,
    caller: Caller,
    req: Request<Incoming>,
) -> Result<Response<Answer>, Infallible> {
    let method = req.method().clone();
    let path = req.uri().path().to_owned();
    let Some(route_name) = route(&method, &path) else {
        let pending = Pending::new(format!("{method} {path}"), caller.rows.clone());
        let msg = not_served(&method, &path);
        return Ok(pending.answer(StatusCode::NOT_FOUND, "not_found_error", &msg));
    };
    let mut pending = Pending::new(route_name.to_owned(), caller.rows.clone());
    let (parts, body) = req.into_parts();
    let declared = parts
        .headers
        .get(header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    let too_large = format!(
        "hive-c0re model gateway: the request body is over {} MiB, the most it takes",
        MAX_REQUEST >> 20
    );
    if declared.is_some_and(|n| n > MAX_REQUEST as u64) {
        return Ok(pending.answer(
            StatusCode::PAYLOAD_TOO_LARGE,
            "request_too_large",
            &too_large,
        ));
    }
    let body = match Limited::new(body, MAX_REQUEST).collect().await {
        Ok(collected) => collected.to_bytes(),
        Err(err) if err.is::<http_body_util::LengthLimitError>() => {
            return Ok(pending.answer(
                StatusCode::PAYLOAD_TOO_LARGE,
                "request_too_large",
                &too_large,
            ));
        }
        Err(err) => {
            let msg = format!("hive-c0re model gateway: the request body could not be read: {err}");
            return Ok(pending.answer(StatusCode::BAD_REQUEST, "invalid_request_error", &msg));
        }
    };
    pending.row.model = requested_model(&body);
    if route_name == HELD_ROUTE {
        // Said if the client goes away while held (its row is sent then).
        pending.row.error = Some("cut: the client went away while a budget held it".into());
        if let Err(hold) = caller.holds.clone().wait(&caller.agent).await {
            let msg = held_message(&caller.agent, &hold);
            tracing::warn!(agent = %caller.agent, "{}: model request refused after {} ms held: budget {} reached", caller.agent, hold.wait_ms, hold.budget);
            // 400 invalid_request_error, as the API answers a credit
            // balance too low: a 400 is never retried by Claude Code or the
            // SDKs (`x-should-retry: false` says so too), so the message
            // reaches the agent at once instead of after minutes of
            // retries (a 429 or 529 is retried, each retry held again).
            return Ok(pending.answer(StatusCode::BAD_REQUEST, "invalid_request_error", &msg));
        }
        pending.row.error = None;
    }
    let credential = match &caller.credential {
        Some(name) => match Credential::load(gateway.credentials_dir.as_deref(), name) {
            Ok(c) => Some(c),
            Err(err) => {
                tracing::warn!(agent = %caller.agent, "{}: model request refused: {err}", caller.agent);
                let msg = format!(
                    "hive-c0re model gateway: the hive's {err}; ask your operator to load it"
                );
                return Ok(pending.answer(StatusCode::SERVICE_UNAVAILABLE, "api_error", &msg));
            }
        },
        None => {
            if carries_sentinel(&parts.headers) {
                let msg = "hive-c0re model gateway: the hive holds no model credential \
                           (model_credential is unset) and this agent has no login of its own; \
                           ask your operator to set model_credential, or log the agent in";
                return Ok(pending.answer(StatusCode::UNAUTHORIZED, "authentication_error", msg));
            }
            None
        }
    };
    let upstream_req = match upstream_request(
        &gateway.upstream.authority(),
        &parts,
        credential.as_ref(),
        body,
    ) {
        Some(r) => r,
        None => {
            let msg = "hive-c0re model gateway: the request's headers could not be forwarded";
            return Ok(pending.answer(StatusCode::BAD_REQUEST, "invalid_request_error", msg));
        }
    };
    let sent = tokio::time::timeout(gateway.head_timeout, gateway.client.request(upstream_req));
    let resp = match sent.await {
        Ok(Ok(resp)) => resp,
        Ok(Err(err)) => {
            let cause = causes(&err);
            let msg = format!(
                "hive-c0re model gateway: the model upstream {} could not be reached: {cause}",
                gateway.upstream.authority()
            );
            tracing::warn!(agent = %caller.agent, "{}: {msg}", caller.agent);
            return Ok(pending.answer(StatusCode::BAD_GATEWAY, "api_error", &msg));
        }
        Err(_) => {
            let msg = format!(
                "hive-c0re model gateway: the model upstream {} did not answer within {} s",
                gateway.upstream.authority(),
                gateway.head_timeout.as_secs()
            );
            tracing::warn!(agent = %caller.agent, "{}: {msg}", caller.agent);
            return Ok(pending.answer(StatusCode::GATEWAY_TIMEOUT, "api_error", &msg));
        }
    };
    let (mut parts, body) = resp.into_parts();
    pending.row.status = parts.status.as_u16();
    pending.row.request_id = parts
        .headers
        .get("request-id")
        .and_then(|v| v.to_str().ok())
        .map(str::to_owned);
    let stream = parts
        .headers
        .get(header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.starts_with("text/event-stream"));
    strip_hop_by_hop(&mut parts.headers);
    let tap = Tap::new(if stream { Kind::Stream } else { Kind::Json });
    let metered = Metered {
        inner: body,
        tap,
        pending,
        gateway,
    };
    Ok(Response::from_parts(
        parts,
        Answer::Metered(Box::new(metered)),
    ))
}

/// An error and its causes on one line (the chain walker of `errors` is
/// not this module's to use: `egress` imports only `wire`).
fn causes(err: &(dyn std::error::Error + 'static)) -> String {
    let mut text = err.to_string();
    let mut source = err.source();
    while let Some(cause) = source {
        let said = cause.to_string();
        if !text.contains(&said) {
            text.push_str(": ");
            text.push_str(&said);
        }
        source = cause.source();
    }
    text
}

/// The model a request body asks for (`model`), if it says.
fn requested_model(body: &[u8]) -> Option<String> {
    #[derive(serde::Deserialize)]
    struct Asked {
        model: Option<String>,
    }
    serde_json::from_slice::<Asked>(body).ok()?.model
}

/// An answer's body: the gateway's own, or the upstream's passing through
/// the meter.
#[derive(Debug)]
pub enum Answer {
    Full(Option<Bytes>),
    Metered(Box<Metered>),
}

impl Answer {
    pub(super) fn full(bytes: Bytes) -> Self {
        Self::Full(Some(bytes))
    }
}

/// The upstream's answer on its way to the agent, read by the tap.
#[derive(Debug)]
pub struct Metered {
    inner: Incoming,
    tap: Tap,
    pending: Pending,
    gateway: Arc<Gateway>,
}

impl Metered {
    /// The answer ended (`error`: how, if not well): its row goes.
    fn finish(&mut self, error: Option<String>) {
        if self.pending.sent {
            return;
        }
        self.tap.end();
        let row = &mut self.pending.row;
        if let Some(model) = self.tap.model.take() {
            row.model = Some(model);
        }
        row.tokens = self.tap.tokens;
        row.cost_micro_usd = self.gateway.prices.cost(row.model.as_deref(), &row.tokens);
        row.error = error.or_else(|| self.tap.error.take());
        self.pending.send();
    }
}

impl Drop for Metered {
    /// Dropped before its end was polled: whole if the upstream's body says
    /// it is at its end (hyper stops at a `Content-Length` without polling
    /// for the end), else cut.
    fn drop(&mut self) {
        if !self.pending.sent {
            let cut = (!self.inner.is_end_stream())
                .then(|| "cut: the client went away before the answer ended".to_owned());
            self.finish(cut);
        }
    }
}

impl Body for Answer {
    type Data = Bytes;
    type Error = hyper::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, hyper::Error>>> {
        match self.get_mut() {
            Self::Full(bytes) => Poll::Ready(bytes.take().map(|b| Ok(Frame::data(b)))),
            Self::Metered(m) => match ready!(Pin::new(&mut m.inner).poll_frame(cx)) {
                Some(Ok(frame)) => {
                    if let Some(data) = frame.data_ref() {
                        m.tap.feed(data);
                    }
                    Poll::Ready(Some(Ok(frame)))
                }
                Some(Err(err)) => {
                    m.finish(Some(format!("the upstream's answer broke off: {err}")));
                    Poll::Ready(Some(Err(err)))
                }
                None => {
                    m.finish(None);
                    Poll::Ready(None)
                }
            },
        }
    }

    fn is_end_stream(&self) -> bool {
        match self {
            Self::Full(bytes) => bytes.is_none(),
            // Never said ended before the inner body's end was polled:
            // that poll is what sends the row as a whole answer.
            Self::Metered(_) => false,
        }
    }

    fn size_hint(&self) -> SizeHint {
        match self {
            Self::Full(Some(b)) => SizeHint::with_exact(b.len() as u64),
            Self::Full(None) => SizeHint::with_exact(0),
            Self::Metered(m) => m.inner.size_hint(),
        }
    }
}

#[cfg(test)]
#[path = "gateway_tests.rs"]
mod tests;
