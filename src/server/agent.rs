//! The agent and manager sockets: a long-lived connection carrying many
//! JSON-line requests, answered in order.
//!
//! Identity is the socket: [`Caller`] is fixed when the listener is bound
//! (`agents/<n>/mcp.sock` is agent `n`, `manager/mcp.sock` is the manager)
//! and no request field can change it. Rejected alternative: a name or
//! token in each request, which an agent could forge or leak.
//!
//! Bad input (not UTF-8, not JSON, not an object, unknown `cmd`, wrong
//! fields) gets an `err` answer and the connection carries on; an over-long
//! line gets an `err` and the connection closes (the rest of that line
//! cannot be told from the next request). Budgets (one agent's worst must
//! not cost the hive): a connection silent for `agent_idle_timeout_secs`
//! between requests (or that long sending one line) gets an `err` and is
//! closed — a long-polling `recv` is an answer being waited for, not
//! silence; past `agent_max_connections` open connections a new one gets
//! an `err` and is closed at once ([`refuse_busy`]). A long-polling `recv` stops waiting
//! when the client hangs up or the daemon stops, so nothing is popped for a
//! reader that is gone; a popped answer that cannot be written is given
//! back to the inbox, marked redelivered.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Interest};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio_util::sync::CancellationToken;

use super::agent_dispatch::dispatch_keyed;
use super::framing::{self, FrameError, MAX_LINE, read_line_into};
use crate::service::{Caller, Hive};
use crate::wire::agent::{
    IDEMPOTENCY_KEY, MAX_IDEMPOTENCY_KEY, Request, Response, valid_idempotency_key,
};
use crate::wire::codes::ErrorCode;

fn to_line(response: &Response) -> String {
    serde_json::to_string(response).unwrap_or_else(|_| UNSERIALIZABLE.into())
}

const UNSERIALIZABLE: &str = r#"{"kind":"err","message":"internal: response did not serialize"}"#;

async fn write_line(w: &mut OwnedWriteHalf, response: &Response) -> std::io::Result<()> {
    framing::write_line(w, &to_line(response)).await
}

/// Write `response` and its `\n` through `out`, a connection's buffer kept
/// across its answers (serialized in place: no string per answer, no copy).
async fn answer_with(
    w: &mut OwnedWriteHalf,
    out: &mut Vec<u8>,
    response: &Response,
) -> std::io::Result<()> {
    out.clear();
    if serde_json::to_writer(&mut *out, response).is_err() {
        out.clear();
        out.extend_from_slice(UNSERIALIZABLE.as_bytes());
    }
    out.push(b'\n');
    framing::write_terminated(w, out).await
}

/// Resolves when the client is gone: its socket is closed for good (not
/// merely shut for writing — a client may send its last request, shut its
/// side and wait for the answer). A pipelined next request is not a
/// hang-up: it waits its turn.
async fn hung_up(reader: &mut BufReader<OwnedReadHalf>, write: &OwnedWriteHalf) {
    match reader.fill_buf().await {
        Ok(buf) if !buf.is_empty() => std::future::pending().await,
        Ok(_) => match write.ready(Interest::WRITABLE).await {
            Ok(ready) if ready.is_write_closed() => {}
            Ok(_) => std::future::pending().await,
            Err(_) => {}
        },
        Err(_) => {}
    }
}

/// The read buffer of one agent connection.
pub const AGENT_READ_BUFFER: usize = 4 * 1024;

/// Serve one connection of `caller` until it closes or `stop` fires.
pub async fn serve(hive: Hive, caller: Caller, stream: UnixStream, stop: CancellationToken) {
    let (read, mut write) = stream.into_split();
    // Held for the life of an agent's connection, one per agent: small
    // (1,000 agents x 64 KiB was 64 MiB of buffers); longer lines still
    // read whole, up to MAX_LINE.
    let mut reader = BufReader::with_capacity(AGENT_READ_BUFFER, read);
    let idle = hive.config().agent_idle_timeout();
    // One idle timer and one wait for the stop, made once per connection
    // and re-armed per request: a timer entry and a cancellation waiter made
    // anew for every request were a measurable part of the broker's
    // per-message cost (issue 31).
    let idle_timer = tokio::time::sleep(idle);
    tokio::pin!(idle_timer);
    let stopped = stop.cancelled();
    tokio::pin!(stopped);
    // A request line and an answer, each one buffer for the connection's
    // life (grown to what a request took, let go past KEPT_BUFFER).
    let (mut line, mut out) = (Vec::new(), Vec::new());
    loop {
        let got = {
            idle_timer
                .as_mut()
                .reset(tokio::time::Instant::now() + idle);
            let read = read_line_into(&mut reader, MAX_LINE, &mut line);
            tokio::pin!(read);
            tokio::select! {
                biased;
                got = &mut read => Ok(got),
                () = idle_timer.as_mut() => Err(()),
                // Draining (restart, destroy): a request already on its way
                // is still answered, so a client that connected just before
                // the stop is not cut off; a silent one is closed.
                // (Ready again at once when polled after the stop.)
                () = stopped.as_mut() => match tokio::time::timeout(DRAIN_GRACE, &mut read).await {
                    Ok(got) => Ok(got),
                    Err(_) => return,
                },
            }
        };
        let Ok(got) = got else {
            tracing::info!(agent = %caller.name(), "agent connection idle for {idle:?}; closed");
            let message = format!(
                "closing this connection: no complete request for {} s \
                 (agent_idle_timeout_secs); reconnect to go on",
                idle.as_secs()
            );
            let _ = write_line(&mut write, &Response::err(ErrorCode::IdleClosed, message)).await;
            let _ = write.shutdown().await;
            return;
        };
        match got {
            Ok(true) => {}
            Ok(false) | Err(FrameError::Io(_)) => return,
            Err(err @ FrameError::TooLong(_)) => {
                let _ = write_line(
                    &mut write,
                    &Response::err(ErrorCode::BadRequest, err.to_string()),
                )
                .await;
                let _ = write.shutdown().await;
                return;
            }
        }
        let parsed = framing::parse_request(&line, Request::COMMANDS)
            .and_then(|request| Ok((request, idempotency_key(&line)?)));
        let response = match parsed {
            Err(message) => Response::err(ErrorCode::BadRequest, message),
            Ok((request, key)) => {
                let gone = async {
                    tokio::select! {
                        () = stopped.as_mut() => {}
                        () = hung_up(&mut reader, &write) => {}
                    }
                };
                dispatch_keyed(&hive, &caller, request, key, gone).await
            }
        };
        if let Err(err) = answer_with(&mut write, &mut out, &response).await {
            tracing::debug!(agent = %caller.name(), "{}: agent socket client went away: {err}", caller.name());
            if let Response::Messages { messages } = response
                && !messages.is_empty()
            {
                hive.messaging().give_back(caller.name(), messages).await;
            }
            return;
        }
        // A rare long line or answer does not stay held by the connection.
        for buffer in [&mut line, &mut out] {
            if buffer.capacity() > KEPT_BUFFER {
                *buffer = Vec::new();
            }
        }
        if stop.is_cancelled() {
            return;
        }
    }
}

/// The request line's idempotency key ([`IDEMPOTENCY_KEY`]), if it has
/// one, or why it cannot be used. Read apart from the request (a second,
/// small parse that skips every other field), and only when the line names
/// the field: a line without it (every older client's) costs one scan.
/// The quoted name cannot occur inside a JSON string (its quotes would be
/// escaped there), so the scan finds only the field itself; a false find
/// would only cost the second parse.
fn idempotency_key(line: &[u8]) -> Result<Option<String>, String> {
    #[derive(serde::Deserialize)]
    struct Keyed {
        #[serde(default)]
        idempotency_key: Option<String>,
    }
    const NEEDLE: &[u8] = b"\"idempotency_key\"";
    if !line.windows(NEEDLE.len()).any(|w| w == NEEDLE) {
        return Ok(None);
    }
    let keyed: Keyed =
        serde_json::from_slice(line).map_err(|e| format!("invalid {IDEMPOTENCY_KEY}: {e}"))?;
    match keyed.idempotency_key {
        Some(key) if !valid_idempotency_key(&key) => Err(format!(
            "invalid {IDEMPOTENCY_KEY}: 1 to {MAX_IDEMPOTENCY_KEY} characters of A-Z a-z 0-9 _ -"
        )),
        key => Ok(key),
    }
}

/// The most a connection's line and answer buffers keep between requests.
const KEPT_BUFFER: usize = 16 * 1024;

/// How long a draining connection may take to deliver a request already
/// on its way.
const DRAIN_GRACE: std::time::Duration = std::time::Duration::from_millis(500);

/// Answer a connection past the socket's `agent_max_connections` with an
/// `err` naming the limit, and close it: its fd is freed at once, so one
/// agent cannot exhaust the daemon's. `refused` counts these per socket;
/// the log says so at the 1st, 2nd, 4th, 8th ... refusal, so a flood of
/// connects cannot flood the journal either.
pub async fn refuse_busy(caller: Caller, mut stream: UnixStream, max: usize, refused: u64) {
    if refused.is_power_of_two() {
        tracing::warn!(
            agent = %caller.name(),
            "agent socket at its {max} connections (agent_max_connections); \
             refused {refused} connection(s) so far"
        );
    }
    let message = format!(
        "too many connections to this socket: {max} are open (agent_max_connections); \
         close one and connect again"
    );
    let _ = framing::write_line(
        &mut stream,
        &to_line(&Response::err(ErrorCode::TooManyConnections, message)),
    )
    .await;
    let _ = stream.shutdown().await;
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
