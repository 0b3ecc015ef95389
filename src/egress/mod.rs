//! The hive's egress proxy (issue 27, step 2): one agent's connection in,
//! CONNECT or plain HTTP, checked against that agent's allow-list, the
//! target resolved and dialled here (never inside the container), bytes
//! copied both ways, one journal line per connection with `AGENT=`.
//!
//! Identity is the caller's: [`serve`] takes the agent's name from whoever
//! accepted the connection (the daemon, on the agent's own `egress.sock`,
//! says it in its [`service`] line), never from the request.
//!
//! Decisions:
//! - **Patterns are `host[:port]`**, `host` exact or `*.domain` (any name
//!   under `domain`, not `domain` itself), compared without case; no port
//!   means any port. Rejected: URL or regex patterns, which an operator
//!   gets wrong in the direction of too open.
//! - **A refusal is a 403 whose body names the host and says how to ask for
//!   it**, so Claude (which sees the body) can tell its operator what to
//!   grant.
//! - The request head is read up to [`MAX_HEAD`] bytes; a longer or
//!   malformed one is answered 400 and closed.
//! - Plain HTTP is forwarded once per connection (`Connection: close` to the
//!   origin), in origin form; `Proxy-*` headers are dropped.
//! - It runs in a process of its own ([`service`], `hive-c0re egress`), the
//!   hive's only one with a network.

use std::time::Instant;

use tokio::io::{
    AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, copy_bidirectional_with_sizes,
};
use tokio::net::TcpStream;

use crate::wire::ident::Ident;

pub mod service;

#[cfg(test)]
mod egress_tests;

/// Bytes each direction of a tunnel copies at once, on every hop of the
/// egress path (the forwarder, the daemon, this service): tokio's 8 KiB
/// default made one download through the three hops 0.13x a direct one
/// on loopback (`examples/bench_egress`).
pub const COPY_BUF: usize = 64 * 1024;

/// The longest request head read before refusing (400).
pub const MAX_HEAD: usize = 16 * 1024;

pub use crate::wire::egress::{BadPattern, EgressPattern};

/// An agent's allow-list of `host[:port]` patterns.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct AllowList(Vec<EgressPattern>);

impl AllowList {
    /// Parse each `host[:port]` pattern; the first bad one is the error.
    pub fn parse<S: AsRef<str>>(patterns: &[S]) -> Result<Self, BadPattern> {
        patterns
            .iter()
            .map(|p| EgressPattern::new(p.as_ref()))
            .collect::<Result<_, _>>()
            .map(Self)
    }

    /// The list of these (already validated) patterns.
    pub fn new(patterns: Vec<EgressPattern>) -> Self {
        Self(patterns)
    }

    /// Whether `host:port` is allowed.
    pub fn allows(&self, host: &str, port: u16) -> bool {
        self.0.iter().any(|p| p.matches(host, port))
    }
}

/// What one request asked for.
#[derive(Debug, PartialEq, Eq)]
enum Request {
    /// `CONNECT host:port`: a tunnel.
    Connect { host: String, port: u16 },
    /// `METHOD http://host[:port]/path`: one forwarded request, its head
    /// rewritten to origin form.
    Http {
        host: String,
        port: u16,
        head: Vec<u8>,
    },
}

/// Split `host[:port]` (a bracketed IPv6 literal allowed).
fn host_port(s: &str, default: u16) -> Option<(String, u16)> {
    let (host, port) = if let Some(rest) = s.strip_prefix('[') {
        let (h, after) = rest.split_once(']')?;
        let port = match after.strip_prefix(':') {
            Some(p) => p.parse().ok()?,
            None if after.is_empty() => default,
            None => return None,
        };
        (h, port)
    } else {
        match s.rsplit_once(':') {
            Some((h, p)) => (h, p.parse().ok()?),
            None => (s, default),
        }
    };
    let ok = !host.is_empty()
        && host
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'-' | b'.' | b':'));
    ok.then(|| (host.to_ascii_lowercase(), port))
}

/// Parse a complete request head (through the blank line).
fn parse_head(head: &[u8]) -> Option<Request> {
    let text = std::str::from_utf8(head).ok()?;
    let mut lines = text.split("\r\n");
    let first = lines.next()?;
    let mut parts = first.split(' ');
    let (method, target, version) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() || !version.starts_with("HTTP/1.") {
        return None;
    }
    if method == "CONNECT" {
        let (host, port) = host_port(target, 443)?;
        return Some(Request::Connect { host, port });
    }
    let rest = target.strip_prefix("http://")?;
    let (authority, path) = match rest.find('/') {
        Some(i) => (&rest[..i], &rest[i..]),
        None => (rest, "/"),
    };
    let (host, port) = host_port(authority, 80)?;
    let mut out = format!("{method} {path} {version}\r\n");
    for line in lines.take_while(|l| !l.is_empty()) {
        let name = line
            .split(':')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        if name.starts_with("proxy-") || name == "connection" {
            continue;
        }
        out.push_str(line);
        out.push_str("\r\n");
    }
    out.push_str("Connection: close\r\n\r\n");
    Some(Request::Http {
        host,
        port,
        head: out.into_bytes(),
    })
}

/// Read the request head; what came after it in the same reads is
/// returned too (a request body's first bytes).
async fn read_head<S: AsyncRead + Unpin>(s: &mut S) -> std::io::Result<Option<(Vec<u8>, Vec<u8>)>> {
    let mut buf = Vec::with_capacity(1024);
    let mut chunk = [0u8; 4096];
    loop {
        if let Some(end) = buf.windows(4).position(|w| w == b"\r\n\r\n") {
            let rest = buf.split_off(end + 4);
            return Ok(Some((buf, rest)));
        }
        if buf.len() > MAX_HEAD {
            return Ok(None);
        }
        let n = s.read(&mut chunk).await?;
        if n == 0 {
            return Ok(None);
        }
        buf.extend_from_slice(&chunk[..n]);
    }
}

async fn answer<S: AsyncWrite + Unpin>(s: &mut S, status: &str, body: &str) -> std::io::Result<()> {
    let text = format!(
        "HTTP/1.1 {status}\r\nContent-Type: text/plain; charset=utf-8\r\n\
         Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
        body.len()
    );
    s.write_all(text.as_bytes()).await?;
    s.shutdown().await
}

/// Answer `503 Service Unavailable` with `body` and close: the hive
/// cannot serve this connection now (the agent is at its connection
/// budget, or its allow-list cannot be read).
pub async fn unavailable<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, body: &str) {
    let _ = answer(&mut s, "503 Service Unavailable", body).await;
    linger(&mut s).await;
}

/// After an answer sent before the request was read: take what the client
/// still sends (at most 64 KiB, for at most a second) before the socket
/// closes, so a client still writing its request reads the answer instead
/// of failing on a broken pipe (a lingering close, as HTTP servers do).
async fn linger<S: AsyncRead + Unpin>(s: &mut S) {
    let mut buf = [0u8; 4096];
    let mut left = 64usize << 10;
    let drain = async {
        while left > 0 {
            match s.read(&mut buf).await {
                Ok(0) | Err(_) => break,
                Ok(n) => left = left.saturating_sub(n),
            }
        }
    };
    let _ = tokio::time::timeout(std::time::Duration::from_secs(1), drain).await;
}

/// The 403 body: the host refused and how to ask for it.
pub fn refusal_body(agent: &Ident, host: &str, port: u16) -> String {
    format!(
        "hive-c0re egress: {host}:{port} is not on agent {agent}'s allow-list, so this \
         connection was refused. Ask your operator to allow it: the hive's \
         request_egress tool (host \"{host}:{port}\", and why you need it) queues the \
         request for their approval.\n"
    )
}

/// What happened to one connection.
#[derive(Debug, PartialEq, Eq)]
pub enum Outcome {
    /// Tunnelled or forwarded: bytes from the agent, bytes to it.
    Allowed { host: String, up: u64, down: u64 },
    /// Not on the allow-list: answered 403.
    Refused { host: String },
    /// Not a request this proxy takes (400), or the target did not answer
    /// (502).
    Failed,
}

/// Serve one connection of agent `agent` under `allow`; logs it.
pub async fn serve<S>(mut client: S, agent: &Ident, allow: &AllowList) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let started = Instant::now();
    let Ok(Some((head, early))) = read_head(&mut client).await else {
        let _ = answer(
            &mut client,
            "400 Bad Request",
            "hive-c0re egress: no request head\n",
        )
        .await;
        return Outcome::Failed;
    };
    let Some(request) = parse_head(&head) else {
        let _ = answer(
            &mut client,
            "400 Bad Request",
            "hive-c0re egress: only CONNECT host:port and absolute http:// requests\n",
        )
        .await;
        return Outcome::Failed;
    };
    let (host, port) = match &request {
        Request::Connect { host, port } | Request::Http { host, port, .. } => (host.clone(), *port),
    };
    if !allow.allows(&host, port) {
        tracing::warn!(agent = %agent, host = %host, port, "{agent}: egress to {host}:{port} refused (not on its allow-list)");
        let _ = answer(
            &mut client,
            "403 Forbidden",
            &refusal_body(agent, &host, port),
        )
        .await;
        return Outcome::Refused { host };
    }
    // DNS here, never in the container: tokio resolves with the host's
    // resolver.
    let mut upstream = match TcpStream::connect((host.as_str(), port)).await {
        Ok(s) => s,
        Err(e) => {
            tracing::warn!(agent = %agent, host = %host, port, error = %e, "{agent}: egress to {host}:{port} failed");
            let body = format!("hive-c0re egress: {host}:{port} did not answer: {e}\n");
            let _ = answer(&mut client, "502 Bad Gateway", &body).await;
            return Outcome::Failed;
        }
    };
    let sent = match &request {
        Request::Connect { .. } => {
            if client
                .write_all(b"HTTP/1.1 200 Connection established\r\n\r\n")
                .await
                .is_err()
            {
                return Outcome::Failed;
            }
            0
        }
        Request::Http { head, .. } => {
            if upstream.write_all(head).await.is_err() {
                return Outcome::Failed;
            }
            head.len() as u64
        }
    };
    if !early.is_empty() && upstream.write_all(&early).await.is_err() {
        return Outcome::Failed;
    }
    let (up, down) = copy_bidirectional_with_sizes(&mut client, &mut upstream, COPY_BUF, COPY_BUF)
        .await
        .unwrap_or((0, 0));
    let up = up + sent + early.len() as u64;
    let ms = started.elapsed().as_millis() as u64;
    tracing::info!(agent = %agent, host = %host, port, up, down, ms, "{agent}: egress to {host}:{port}: {up} bytes out, {down} in, {ms} ms");
    Outcome::Allowed { host, up, down }
}
