//! What every dashboard request passes: the cross-site request checks on
//! state-changing requests, and the security headers on every answer.
//!
//! A state-changing request (anything but GET/HEAD) must
//! 1. come from this origin: `Sec-Fetch-Site`, when the browser sends it,
//!    is `same-origin`, and `Origin` is present and names the `Host` the
//!    request was sent to (a reverse proxy must pass `Host` through);
//! 2. carry the token: a form field `csrf` equal to this daemon's token,
//!    which only pages served from this origin contain.
//!
//! Either alone would do against today's browsers; both are asked because
//! the first depends on headers old browsers and odd proxies drop, the
//! second on the token never leaking. The token is per daemon start (the
//! dashboard has no sessions: the socket's group is the login), so a page
//! left open across a restart is told to reload.

use std::io::Read;

use axum::body::{Body, to_bytes};
use axum::extract::{Request, State};
use axum::http::header::{self, HeaderMap, HeaderValue};
use axum::http::{Method, StatusCode};
use axum::middleware::Next;
use axum::response::{IntoResponse, Response};

use super::{Web, views};

/// The largest request body accepted (forms only: a message body is capped
/// lower by the hive itself).
pub const MAX_BODY: usize = 256 * 1024;

/// The Content-Security-Policy of every answer: scripts and styles from
/// this origin only, no inline script or style, no framing, forms and
/// connections back to this origin only.
pub const CSP: &str = "default-src 'none'; script-src 'self'; style-src 'self'; \
     img-src 'self'; connect-src 'self'; form-action 'self'; \
     frame-ancestors 'none'; base-uri 'none'";

/// The anti-forgery token: 32 random bytes, hex.
#[derive(Clone)]
pub struct Token(String);

impl std::fmt::Debug for Token {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("Token(..)")
    }
}

impl Token {
    /// A fresh token from the kernel's random source.
    pub fn generate() -> std::io::Result<Self> {
        let mut bytes = [0u8; 32];
        std::fs::File::open("/dev/urandom")?.read_exact(&mut bytes)?;
        Ok(Self(bytes.iter().map(|b| format!("{b:02x}")).collect()))
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }

    /// Compare without an early exit, so timing tells nothing about how
    /// much of a guess was right.
    pub fn matches(&self, candidate: &str) -> bool {
        let (a, b) = (self.0.as_bytes(), candidate.as_bytes());
        a.len() == b.len() && a.iter().zip(b).fold(0u8, |acc, (x, y)| acc | (x ^ y)) == 0
    }
}

/// Why a state-changing request was refused before reaching the hive.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Forged {
    #[error(
        "refused: the browser says this request came from another site \
         (Sec-Fetch-Site: {0}); use the dashboard's own pages"
    )]
    CrossSite(String),
    #[error(
        "refused: a state-changing request without an Origin header; use the dashboard's own pages"
    )]
    NoOrigin,
    #[error(
        "refused: the request came from {origin}, not from this dashboard ({host}); \
         a reverse proxy must pass the Host header through unchanged"
    )]
    OtherOrigin { origin: String, host: String },
    #[error("refused: the form's token is missing or stale; reload the page and try again")]
    BadToken,
    #[error("refused: the request body is over {MAX_BODY} bytes")]
    TooLarge,
}

/// The same-origin half of the check, on headers alone.
pub fn same_origin(headers: &HeaderMap) -> Result<(), Forged> {
    let text = |name| {
        headers
            .get(name)
            .and_then(|v: &HeaderValue| v.to_str().ok())
    };
    if let Some(site) = text(header::HeaderName::from_static("sec-fetch-site"))
        && site != "same-origin"
    {
        return Err(Forged::CrossSite(site.chars().take(40).collect()));
    }
    let origin = text(header::ORIGIN).ok_or(Forged::NoOrigin)?;
    let host = text(header::HOST).unwrap_or_default();
    let authority = origin
        .strip_prefix("https://")
        .or_else(|| origin.strip_prefix("http://"));
    if host.is_empty() || authority != Some(host) {
        return Err(Forged::OtherOrigin {
            origin: origin.chars().take(100).collect(),
            host: host.chars().take(100).collect(),
        });
    }
    Ok(())
}

/// The `csrf` field of an `application/x-www-form-urlencoded` body (the
/// token is hex, so it is never percent-encoded by a browser).
pub fn form_token(body: &[u8]) -> Option<&str> {
    std::str::from_utf8(body)
        .ok()?
        .split('&')
        .find_map(|pair| pair.strip_prefix("csrf="))
}

/// The middleware: refuse forged requests, then add the headers.
pub async fn check(State(web): State<Web>, request: Request, next: Next) -> Response {
    let request = if matches!(*request.method(), Method::GET | Method::HEAD) {
        request
    } else {
        match verified(&web, request).await {
            Ok(request) => request,
            Err(forged) => {
                tracing::warn!("dashboard request refused: {forged}");
                let page = views::refusal(&forged.to_string());
                return secured((StatusCode::FORBIDDEN, page).into_response());
            }
        }
    };
    secured(next.run(request).await)
}

async fn verified(web: &Web, request: Request) -> Result<Request, Forged> {
    same_origin(request.headers())?;
    let (parts, body) = request.into_parts();
    let bytes = to_bytes(body, MAX_BODY)
        .await
        .map_err(|_| Forged::TooLarge)?;
    match form_token(&bytes) {
        Some(t) if web.token.matches(t) => Ok(Request::from_parts(parts, Body::from(bytes))),
        _ => Err(Forged::BadToken),
    }
}

fn secured(mut response: Response) -> Response {
    let h = response.headers_mut();
    h.insert(
        header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static(CSP),
    );
    h.insert(
        header::X_CONTENT_TYPE_OPTIONS,
        HeaderValue::from_static("nosniff"),
    );
    h.insert(header::X_FRAME_OPTIONS, HeaderValue::from_static("DENY"));
    h.insert(
        header::REFERRER_POLICY,
        HeaderValue::from_static("same-origin"),
    );
    if !h.contains_key(header::CACHE_CONTROL) {
        h.insert(header::CACHE_CONTROL, HeaderValue::from_static("no-store"));
    }
    response
}

#[cfg(test)]
#[path = "guard_tests.rs"]
mod tests;
