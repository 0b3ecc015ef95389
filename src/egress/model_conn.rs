//! One agent connection to the model gateway, inside the egress service.
//! A request in origin form (`POST /v1/messages HTTP/1.1`, as Claude Code
//! sends it to a base URL) is the gateway's ([`origin_form`]); the proxy
//! takes only `CONNECT` and absolute `http://` requests. The service says
//! `model` in its verdict line, then hyper serves the agent's requests ([`super::gateway::handle`]) on one
//! end of an in-memory pipe, and this side copies the daemon's bytes into
//! it and its bytes back to the daemon as data frames, with each request's
//! meter row as a meter frame between them ([`crate::wire::model_log`]).
//!
//! Rejected: framing inside hyper's writer (an `AsyncWrite` that must emit
//! a head and a payload as one write, and take rows from other tasks), for
//! a pipe whose cost is one copy in memory per chunk.

use std::sync::Arc;

use hyper::StatusCode;
use hyper::server::conn::http1;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, ReadBuf};
use tokio::sync::mpsc;

use super::api_error;
use super::gateway::{self, Caller, Gateway, handle};
use super::holds::HoldView;
use super::{COPY_BUF, Outcome, tell};
use crate::wire::egress_audit::{Verdict, VerdictLine};
use crate::wire::ident::Ident;
use crate::wire::model_log::{CredentialName, MAX_DATA_FRAME, data_head};

/// What a connection needs for the model gateway: the gateway, and from
/// the daemon's dial line the credential chosen for the agent and whether
/// the daemon reads the meter's frames.
#[derive(Debug, Clone)]
pub struct ModelRoute {
    /// The gateway, or why the service has none (its upstream or CA could
    /// not be set up at start: said in the journal then, and to each
    /// model request).
    pub gateway: Result<Arc<gateway::Gateway>, Arc<str>>,
    pub credential: Option<CredentialName>,
    pub meter: u32,
    /// The budgets' holds as the daemon says them, read per request.
    pub holds: HoldView,
}

/// Whether a request head is in origin form (`METHOD /path HTTP/1.x`): a
/// request for the model gateway, not for the proxy.
pub(super) fn origin_form(head: &[u8]) -> bool {
    let first = head.split(|&b| b == b'\r').next().unwrap_or_default();
    let mut parts = first.split(|&b| b == b' ');
    let method = parts.next().unwrap_or_default();
    let target = parts.next().unwrap_or_default();
    !method.is_empty()
        && method.iter().all(u8::is_ascii_uppercase)
        && method != b"CONNECT"
        && target.starts_with(b"/")
}

/// A request in origin form: the model gateway's, when this connection
/// can be metered (the daemon reads the frames), else a 503 saying why.
pub(super) async fn serve_model<S>(
    mut client: S,
    agent: &Ident,
    mut head: Vec<u8>,
    early: Vec<u8>,
    telling: bool,
    model: Option<ModelRoute>,
) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let metered = telling
        && model
            .as_ref()
            .is_some_and(|m| m.meter == crate::wire::model_log::METER_VERSION);
    let route = model.filter(|_| metered);
    let (gateway, credential, holds) = match route.map(|m| (m.gateway, m.credential, m.holds)) {
        Some((Ok(gateway), credential, holds)) => (gateway, credential, holds),
        other => {
            let why = match other {
                Some((Err(why), ..)) => {
                    format!("a model request, but the model gateway is not set up: {why}")
                }
                _ => "a model request, but the daemon does not read the model gateway's meter \
                      (an older daemon beside a newer egress service)"
                    .to_owned(),
            };
            return refuse_model(&mut client, telling, &why).await;
        }
    };
    let target = gateway.upstream().authority();
    let line = VerdictLine::new(Verdict::Model).target(&target);
    if !tell(&mut client, true, line).await {
        return Outcome::Failed;
    }
    head.extend_from_slice(&early);
    let caller = gateway::Caller {
        agent: agent.clone(),
        credential,
        rows: tokio::sync::mpsc::unbounded_channel().0,
        holds,
    };
    let served = serve(client, head, caller, gateway).await;
    Outcome::Model {
        requests: served.requests,
    }
}

/// A model request this service cannot serve: its verdict and a 503
/// saying `why`.
async fn refuse_model<S>(client: &mut S, telling: bool, why: &str) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let line = VerdictLine::new(Verdict::Unavailable).reason(why);
    if tell(client, telling, line).await {
        let msg = format!("hive-c0re egress: {why}; ask your operator");
        // Not retried (a 503): the gateway stays unset until the operator
        // acts.
        let text = api_error::raw(StatusCode::SERVICE_UNAVAILABLE, "api_error", &msg);
        if client.write_all(text.as_bytes()).await.is_ok() {
            let _ = client.shutdown().await;
        }
    }
    Outcome::Failed
}

/// What one model connection carried.
#[derive(Debug, Default, PartialEq, Eq)]
pub struct Served {
    /// Requests metered (rows sent to the daemon).
    pub requests: u64,
}

/// Serve `client` (the daemon's connection, after the verdict line) as
/// `caller`'s model connection; `prefix` is what was read of it already
/// (the first request's head and what came with it).
pub async fn serve<S>(client: S, prefix: Vec<u8>, caller: Caller, gateway: Arc<Gateway>) -> Served
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (rows_tx, mut rows) = mpsc::unbounded_channel();
    let caller = Caller {
        rows: rows_tx,
        ..caller
    };
    let (pipe, server_end) = tokio::io::duplex(COPY_BUF);
    let server = tokio::spawn(async move {
        let service = service_fn(move |req| handle(Arc::clone(&gateway), caller.clone(), req));
        let io = TokioIo::new(Rewind::new(prefix, server_end));
        let _ = http1::Builder::new()
            .keep_alive(true)
            .serve_connection(io, service)
            .await;
    });
    let (mut from_daemon, mut to_daemon) = tokio::io::split(client);
    let (mut from_server, mut to_server) = tokio::io::split(pipe);
    let up = async {
        let _ = tokio::io::copy_buf(
            &mut tokio::io::BufReader::with_capacity(COPY_BUF, &mut from_daemon),
            &mut to_server,
        )
        .await;
        let _ = to_server.shutdown().await;
    };
    let down = async {
        let mut served = Served::default();
        let mut buf = vec![0u8; MAX_DATA_FRAME.min(COPY_BUF)];
        let (mut open, mut metering) = (true, true);
        while open || metering {
            tokio::select! {
                read = from_server.read(&mut buf), if open => match read {
                    Ok(0) | Err(_) => open = false,
                    Ok(n) => {
                        let mut frame = data_head(n);
                        frame.extend_from_slice(&buf[..n]);
                        if to_daemon.write_all(&frame).await.is_err() {
                            break;
                        }
                    }
                },
                row = rows.recv(), if metering => match row {
                    Some(row) => {
                        served.requests += 1;
                        if to_daemon.write_all(&row.to_frame()).await.is_err() {
                            break;
                        }
                    }
                    None => metering = false,
                },
            }
        }
        let _ = to_daemon.shutdown().await;
        served
    };
    // The daemon's side ending (the agent gone) ends the pipe's write side
    // and so hyper's connection (no half-close), which drops an answer in
    // flight and, with it, the upstream's connection; the rows of what was
    // cut still come, until every sender is gone.
    let ((), served) = tokio::join!(up, down);
    server.abort();
    served
}

/// A stream whose first bytes are `prefix`, then `inner`'s.
#[derive(Debug)]
struct Rewind<T> {
    prefix: Vec<u8>,
    at: usize,
    inner: T,
}

impl<T> Rewind<T> {
    fn new(prefix: Vec<u8>, inner: T) -> Self {
        Self {
            prefix,
            at: 0,
            inner,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for Rewind<T> {
    fn poll_read(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        if self.at < self.prefix.len() {
            let n = (self.prefix.len() - self.at).min(buf.remaining());
            let at = self.at;
            buf.put_slice(&self.prefix[at..at + n]);
            self.at += n;
            return std::task::Poll::Ready(Ok(()));
        }
        std::pin::Pin::new(&mut self.inner).poll_read(cx, buf)
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for Rewind<T> {
    fn poll_write(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
        buf: &[u8],
    ) -> std::task::Poll<std::io::Result<usize>> {
        std::pin::Pin::new(&mut self.inner).poll_write(cx, buf)
    }
    fn poll_flush(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_flush(cx)
    }
    fn poll_shutdown(
        mut self: std::pin::Pin<&mut Self>,
        cx: &mut std::task::Context<'_>,
    ) -> std::task::Poll<std::io::Result<()>> {
        std::pin::Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

#[cfg(test)]
#[path = "model_conn_tests.rs"]
mod tests;
