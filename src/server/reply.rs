//! The one path from a service answer to a socket's reply: every front door
//! (host.sock, the agent and manager sockets, and the ones to come) turns a
//! [`HiveError`] into a wire error here: its message (the error's
//! `Display`, which names what the caller passed and what to do) and its
//! code (`HiveError::code`, the one exhaustive match). Replies are built with
//! [`answer`] and [`done`].

use crate::errors::chain;
use crate::service::HiveError;
use crate::wire::agent::Response;
use crate::wire::codes::ErrorCode;
use crate::wire::host::HostResponse;

/// A socket's reply type: a success without data, or an error.
pub trait Reply {
    fn success() -> Self;
    fn error(code: ErrorCode, message: String) -> Self;
}

impl Reply for HostResponse {
    fn success() -> Self {
        HostResponse::success()
    }
    fn error(code: ErrorCode, message: String) -> Self {
        HostResponse::error(code, message)
    }
}

impl Reply for Response {
    fn success() -> Self {
        Response::ok()
    }
    fn error(code: ErrorCode, message: String) -> Self {
        Response::err(code, message)
    }
}

/// The wire error of a hive error: its code and message. The daemon's log
/// gets the whole chain of the hive's own failures; a refusal of the
/// request is the caller's business, except that a full inbox names its
/// sender (an agent may be flooding another).
pub fn wire_error(err: &HiveError) -> (ErrorCode, String) {
    let code = err.code();
    if code.is_hive_failure() {
        tracing::error!("request failed: {}", chain(err));
    } else if let HiveError::InboxFull(full) = err {
        tracing::warn!(agent = %full.sender, "send refused: {full}");
    }
    (code, err.to_string())
}

/// `ok(value)` on success, the wire error otherwise.
pub fn answer<R: Reply, T>(result: Result<T, HiveError>, ok: impl FnOnce(T) -> R) -> R {
    match result {
        Ok(value) => ok(value),
        Err(err) => refusal(&err),
    }
}

/// A success without data, or the wire error.
pub fn done<R: Reply, T>(result: Result<T, HiveError>) -> R {
    answer(result, |_| R::success())
}

/// The wire error alone, for a front door that answers an error it holds.
pub fn refusal<R: Reply>(err: &HiveError) -> R {
    let (code, message) = wire_error(err);
    R::error(code, message)
}
