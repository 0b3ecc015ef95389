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
//! cannot be told from the next request). No read timeout: a harness keeps
//! its connection open between turns. A long-polling `recv` stops waiting
//! when the client hangs up or the daemon stops, so nothing is popped for a
//! reader that is gone; a popped answer that cannot be written is given
//! back to the inbox, marked redelivered.

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader, Interest};
use tokio::net::UnixStream;
use tokio::net::unix::{OwnedReadHalf, OwnedWriteHalf};
use tokio_util::sync::CancellationToken;

use super::agent_dispatch::dispatch;
use super::framing::{self, FrameError, MAX_LINE, read_line};
use crate::service::{Caller, Hive};
use crate::wire::agent::{Request, Response};

fn to_line(response: &Response) -> String {
    serde_json::to_string(response).unwrap_or_else(|_| {
        r#"{"kind":"err","message":"internal: response did not serialize"}"#.into()
    })
}

async fn write_line(w: &mut OwnedWriteHalf, response: &Response) -> std::io::Result<()> {
    framing::write_line(w, &to_line(response)).await
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
    loop {
        let line = tokio::select! {
            () = stop.cancelled() => return,
            line = read_line(&mut reader, MAX_LINE) => line,
        };
        let line = match line {
            Ok(Some(line)) => line,
            Ok(None) | Err(FrameError::Io(_)) => return,
            Err(err @ FrameError::TooLong(_)) => {
                let _ = write_line(&mut write, &Response::err(err.to_string())).await;
                let _ = write.shutdown().await;
                return;
            }
        };
        let response = match framing::parse_request(&line, Request::COMMANDS) {
            Err(message) => Response::err(message),
            Ok(request) => {
                let gone = async {
                    tokio::select! {
                        () = stop.cancelled() => {}
                        () = hung_up(&mut reader, &write) => {}
                    }
                };
                dispatch(&hive, &caller, request, gone).await
            }
        };
        if let Err(err) = write_line(&mut write, &response).await {
            tracing::debug!(agent = %caller.name(), "{}: agent socket client went away: {err}", caller.name());
            if let Response::Messages { messages } = response
                && !messages.is_empty()
            {
                hive.give_back(caller.name(), messages).await;
            }
            return;
        }
    }
}

#[cfg(test)]
#[path = "agent_tests.rs"]
mod tests;
