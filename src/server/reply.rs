//! The one path from a service answer to a socket's reply: every front door
//! (host.sock, the agent and manager sockets, and the ones to come) turns a
//! [`HiveError`] into wire text here, with one exhaustive match, and builds
//! its reply with [`answer`] and [`done`].

use crate::errors::chain;
use crate::service::HiveError;
use crate::wire::agent::Response;
use crate::wire::host::HostResponse;

/// A socket's reply type: a success without data, or an error message.
pub trait Reply {
    fn success() -> Self;
    fn error(message: String) -> Self;
}

impl Reply for HostResponse {
    fn success() -> Self {
        HostResponse::success()
    }
    fn error(message: String) -> Self {
        HostResponse::error(message)
    }
}

impl Reply for Response {
    fn success() -> Self {
        Response::Ok
    }
    fn error(message: String) -> Self {
        Response::err(message)
    }
}

/// The wire text of a hive error, grouped by what the caller does about it.
/// One exhaustive match: a new variant must decide here which group it is
/// in. The message itself always comes from the error's `Display`, which
/// names what the caller passed and what to do.
pub fn wire_error(err: &HiveError) -> String {
    match err {
        // The daemon or its host failed: the caller can only retry later; the
        // operator reads the daemon's log, which gets the whole chain.
        HiveError::Store(_)
        | HiveError::Internal(_)
        | HiveError::Io { .. }
        | HiveError::AgentSocket { .. } => {
            tracing::error!("request failed: {}", chain(err));
        }
        // The request names something that is not there, or asks a move the
        // rules refuse: the caller fixes the request.
        HiveError::UnknownAgent(_)
        | HiveError::AlreadyManaged(_)
        | HiveError::HiveFull { .. }
        | HiveError::ReservedName(_)
        | HiveError::Topology(_)
        | HiveError::UnknownApproval(_)
        | HiveError::BadFilter(_)
        | HiveError::NoContainerJournal(_)
        | HiveError::UnknownRecipient(_)
        | HiveError::BodyTooLarge { .. }
        | HiveError::BadHook(_)
        | HiveError::Agenda(_) => {}
        // The caller may not do this: it asks for a grant, or asks the
        // manager or the operator to do it.
        HiveError::Denied(_) => {}
        // The state moved on or the work continues: the caller looks again
        // (status, pending) before acting.
        HiveError::ApprovalResolved { .. }
        | HiveError::ApprovalInProgress(_)
        | HiveError::NotRunning(_)
        | HiveError::StillRunning { .. } => {}
        // A budget of the recipient is spent: the caller retries later; the
        // log names who was refused, since an agent may be flooding it.
        HiveError::InboxFull(full) => {
            tracing::warn!(agent = %full.sender, "send refused: {full}");
        }
        // The action ran and failed outside the daemon (systemd, journalctl,
        // an approval's command): the caller reads the reason and decides.
        HiveError::ApprovalFailed { .. }
        | HiveError::Driver { .. }
        | HiveError::Partial(_)
        | HiveError::Journal(_) => {}
    }
    err.to_string()
}

/// `ok(value)` on success, the wire error otherwise.
pub fn answer<R: Reply, T>(result: Result<T, HiveError>, ok: impl FnOnce(T) -> R) -> R {
    match result {
        Ok(value) => ok(value),
        Err(err) => R::error(wire_error(&err)),
    }
}

/// A success without data, or the wire error.
pub fn done<R: Reply, T>(result: Result<T, HiveError>) -> R {
    answer(result, |_| R::success())
}

/// The wire error alone, for a front door that answers an error it holds.
pub fn refusal<R: Reply>(err: &HiveError) -> R {
    R::error(wire_error(err))
}
