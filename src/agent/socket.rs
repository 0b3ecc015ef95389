//! The harness's client of its agent socket (`/run/hive/mcp.sock` inside
//! the container): one JSON line out, one JSON line back, on a fresh
//! connection per request.
//!
//! Decision: a connection per request, not one long-lived connection. The
//! daemon may restart at any moment (the socket file is re-created in the
//! bind-mounted directory); a fresh connect per call notices that at the
//! next call and needs no reconnect state. The cost is one `connect(2)` per
//! tool call, nothing next to a model's turn.
//!
//! While the daemon restarts (socket missing, connection refused) a call
//! retries with backoff until its budget runs out, then fails with
//! [`SocketError::Restarting`], which the MCP server turns into a tool
//! error saying so. Anything else (a malformed answer) is not retried.

use std::io::ErrorKind;
use std::path::{Path, PathBuf};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio::time::Instant;

use crate::wire::agent::{IDEMPOTENCY_KEY, Request, Response};

/// Where the daemon's agent socket is inside a container.
pub const DEFAULT_SOCKET: &str = "/run/hive/mcp.sock";
/// The environment variable naming another socket.
pub const ENV_SOCKET: &str = "HIVE_AGENT_SOCKET";

/// The longest answer line read back (the daemon caps its own answers
/// well below this; a longer line means a broken peer).
const MAX_ANSWER: usize = 8 << 20;
/// The first and the longest pause between connection attempts.
const FIRST_BACKOFF: Duration = Duration::from_millis(100);
const MAX_BACKOFF: Duration = Duration::from_secs(2);

/// Why a request got no answer. Each variant is a different reaction.
#[derive(Debug, thiserror::Error)]
pub enum SocketError {
    /// Nobody listened for the whole budget: the hive is (re)starting;
    /// try again later. Nothing was sent.
    #[error(
        "the hive is restarting: {socket} did not accept a connection for {waited_secs} s ({last}); try again in a minute"
    )]
    Restarting {
        socket: PathBuf,
        waited_secs: u64,
        last: String,
    },
    /// The connection broke or the answer did not arrive in the budget;
    /// the request may or may not have been served.
    #[error("no answer from {socket}: {reason}")]
    NoAnswer { socket: PathBuf, reason: String },
    /// The daemon answered something that is not a `Response` line.
    #[error("malformed answer from {socket}: {reason}")]
    Malformed { socket: PathBuf, reason: String },
}

/// A client of one agent socket.
#[derive(Debug, Clone)]
pub struct AgentSocket {
    path: PathBuf,
}

impl AgentSocket {
    pub fn new(path: impl Into<PathBuf>) -> Self {
        Self { path: path.into() }
    }

    pub fn path(&self) -> &Path {
        &self.path
    }

    /// Send `request` and read its answer, retrying the connection while
    /// the daemon restarts; the whole call (connect + answer) takes at
    /// most `budget`.
    pub async fn call(&self, request: &Request, budget: Duration) -> Result<Response, SocketError> {
        self.call_keyed(request, None, budget).await
    }

    /// [`AgentSocket::call`] with an idempotency key beside the request
    /// (`"idempotency_key"` on the line, see [`crate::wire::agent::IDEMPOTENCY_KEY`]).
    pub async fn call_keyed(
        &self,
        request: &Request,
        key: Option<&str>,
        budget: Duration,
    ) -> Result<Response, SocketError> {
        let deadline = Instant::now() + budget;
        let stream = self.connect(deadline).await?;
        match tokio::time::timeout_at(deadline, self.exchange(stream, request, key)).await {
            Ok(result) => result,
            Err(_) => Err(SocketError::NoAnswer {
                socket: self.path.clone(),
                reason: format!("no answer within {} s", budget.as_secs()),
            }),
        }
    }

    async fn connect(&self, deadline: Instant) -> Result<UnixStream, SocketError> {
        let started = Instant::now();
        let mut pause = FIRST_BACKOFF;
        loop {
            let err = match UnixStream::connect(&self.path).await {
                Ok(stream) => return Ok(stream),
                Err(err) => err,
            };
            let transient = matches!(
                err.kind(),
                ErrorKind::NotFound | ErrorKind::ConnectionRefused | ErrorKind::WouldBlock
            );
            let now = Instant::now();
            if !transient || now + pause >= deadline {
                return Err(SocketError::Restarting {
                    socket: self.path.clone(),
                    waited_secs: now.duration_since(started).as_secs(),
                    last: err.to_string(),
                });
            }
            tokio::time::sleep(pause).await;
            pause = (pause * 2).min(MAX_BACKOFF);
        }
    }

    async fn exchange(
        &self,
        stream: UnixStream,
        request: &Request,
        key: Option<&str>,
    ) -> Result<Response, SocketError> {
        let no_answer = |e: std::io::Error| SocketError::NoAnswer {
            socket: self.path.clone(),
            reason: e.to_string(),
        };
        let (read, mut write) = stream.into_split();
        let malformed = |e: serde_json::Error| SocketError::Malformed {
            socket: self.path.clone(),
            reason: e.to_string(),
        };
        let mut line = match key {
            None => serde_json::to_vec(request).map_err(malformed)?,
            Some(key) => {
                let mut value = serde_json::to_value(request).map_err(malformed)?;
                if let Some(object) = value.as_object_mut() {
                    object.insert(IDEMPOTENCY_KEY.into(), key.into());
                }
                serde_json::to_vec(&value).map_err(malformed)?
            }
        };
        line.push(b'\n');
        write.write_all(&line).await.map_err(no_answer)?;
        let mut answer = Vec::new();
        let mut reader = BufReader::new(read.take(MAX_ANSWER as u64));
        reader
            .read_until(b'\n', &mut answer)
            .await
            .map_err(no_answer)?;
        if answer.last() != Some(&b'\n') {
            return Err(SocketError::NoAnswer {
                socket: self.path.clone(),
                reason: "the connection closed before a whole answer line".into(),
            });
        }
        serde_json::from_slice(&answer).map_err(|e| SocketError::Malformed {
            socket: self.path.clone(),
            reason: e.to_string(),
        })
    }
}

#[cfg(test)]
#[path = "socket_tests.rs"]
mod tests;
