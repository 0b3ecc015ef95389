//! The errors the model gateway answers itself, in the Messages API's own
//! shape (`{"type":"error","error":{"type":…,"message":…}}`), which Claude
//! Code shows the agent (and its transcript) as it would the API's, with
//! the `x-should-retry` header its status calls for ([`should_retry`]).

use hyper::StatusCode;

/// The body of an Anthropic-shaped error: `{"type":"error","error":{…}}`.
pub fn error_body(kind: &str, message: &str) -> String {
    serde_json::json!({
        "type": "error",
        "error": { "type": kind, "message": message },
    })
    .to_string()
}

/// Whether the client should try again an answer of `status` the gateway
/// made itself: only when the upstream could not be reached or did not
/// answer in time (502, 504), which may pass. Everything else the gateway
/// refuses stays refused until the operator acts (no credential, a route
/// it does not serve, a body too large), and Claude Code retries even a 401
/// ten times over minutes unless told not to: its retry wrapper, like the
/// Anthropic SDKs', obeys `x-should-retry` before the status.
pub fn should_retry(status: StatusCode) -> bool {
    matches!(
        status,
        StatusCode::BAD_GATEWAY | StatusCode::GATEWAY_TIMEOUT
    )
}

/// The `x-should-retry` value for `status`.
pub fn retry_value(status: StatusCode) -> &'static str {
    if should_retry(status) {
        "true"
    } else {
        "false"
    }
}

/// The header by which an Anthropic API tells its clients whether to
/// retry (its SDKs and Claude Code read it before the status).
pub const SHOULD_RETRY: &str = "x-should-retry";

/// A refusal written by hand on a raw connection (before any HTTP server
/// runs on it): `status_line` (e.g. `502 Bad Gateway`) with the error
/// body and headers of the gateway's answers; the connection closes after
/// it.
pub fn raw(status: StatusCode, kind: &str, message: &str) -> String {
    let body = error_body(kind, message);
    let retry = retry_value(status);
    format!(
        "HTTP/1.1 {status}\r\nContent-Type: application/json\r\n{SHOULD_RETRY}: {retry}\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    )
}

#[cfg(test)]
#[path = "api_error_tests.rs"]
mod tests;
