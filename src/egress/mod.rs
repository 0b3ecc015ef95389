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
//! - **Egress is by address** ([`address`], issue 44): the name is
//!   resolved here, every address of the answer checked, and only those
//!   dialled (no second resolution); loopback, private, link-local and the
//!   other non-global addresses are refused whatever the name, unless the
//!   request is the IP literal the operator granted by an exact pattern.
//! - **Per-agent limits** ([`audit`]): connections past an agent's rate
//!   are answered 429, and its journal lines past its budget are counted
//!   into one summary line instead, so one agent's flood cannot push
//!   another's lines out of the journal.
//! - The request head is read up to [`MAX_HEAD`] bytes within
//!   [`HEAD_TIMEOUT`]; a longer or malformed one is answered 400, a late
//!   one 408, and closed.
//! - Plain HTTP is forwarded once per connection (`Connection: close` to the
//!   origin), in origin form; `Proxy-*` headers are dropped.
//! - **The model gateway** ([`gateway`], issue 46) answers requests in
//!   origin form on the same connections (`ANTHROPIC_BASE_URL` is the
//!   forwarder): the host's credential put in, the answer metered
//!   ([`meter`]), each request's row framed to the daemon ([`model_conn`]),
//!   the upstream reached over verified TLS ([`upstream`]), its own
//!   refusals in the API's error shape ([`api_error`]); a model request
//!   of an agent a reached budget holds waits for its release or is
//!   refused after a while ([`holds`], pushed by the daemon).
//! - It runs in a process of its own ([`service`], `hive-c0re egress`), the
//!   hive's only one with a network.
//! - **Its verdict goes to the daemon in-band** when asked ([`serve_telling`]):
//!   one line before any byte for the agent
//!   ([`crate::wire::egress_audit::VerdictLine`]), which the daemon strips and
//!   records in the hive's store with the agent, the bytes and the duration
//!   (issue 44: the journal alone, one unit for every agent, was the only
//!   audit).

use std::net::{IpAddr, SocketAddr};
use std::time::{Duration, Instant};

use tokio::io::{
    AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt, copy_bidirectional_with_sizes,
};
use tokio::net::TcpStream;

use crate::wire::egress_audit::{Verdict, VerdictLine};
use crate::wire::ident::Ident;

pub mod address;
pub mod api_error;
pub mod audit;
mod forward;
pub mod gateway;
pub mod holds;
pub mod meter;
pub mod model_conn;
pub mod service;
#[cfg(test)]
pub(crate) mod standin;
pub mod upstream;

pub use model_conn::ModelRoute;

use audit::{Audit, Line};

#[cfg(test)]
mod egress_tests;

/// Bytes each direction of a tunnel copies at once, on every hop of the
/// egress path (the forwarder, the daemon, this service): tokio's 8 KiB
/// default made one download through the three hops 0.13x a direct one
/// on loopback (`examples/bench_egress`).
pub const COPY_BUF: usize = 64 * 1024;

/// The longest request head read before refusing (400).
pub const MAX_HEAD: usize = 16 * 1024;

/// How long a client may take to send its whole request head before it is
/// answered 408 and closed (issue 44: an unfinished head held its task and
/// the agent's connection slots for ever). A real client sends its head in
/// one write; ten seconds covers a loaded host. Rejected: a per-read idle
/// timeout, which a client dripping one byte a second never trips.
pub const HEAD_TIMEOUT: Duration = Duration::from_secs(10);

/// How long resolving a name may take before the agent gets a 502
/// (glibc's resolver retries for up to 30 s by default; an agent waiting
/// that long is better told).
pub const DNS_TIMEOUT: Duration = Duration::from_secs(10);

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

    /// Whether `host` is an IP literal that an exact pattern (not a
    /// `*.domain` one) grants at `port`: the one case the proxy dials a
    /// loopback, private or link-local address ([`address`]).
    pub fn grants_literal(&self, host: &str, port: u16) -> bool {
        host.parse::<IpAddr>().is_ok()
            && self
                .0
                .iter()
                .any(|p| !p.host().starts_with("*.") && p.matches(host, port))
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
pub async fn unavailable<S: AsyncRead + AsyncWrite + Unpin>(s: S, body: &str) {
    answer_early(s, "503 Service Unavailable", body).await;
}

/// Answer `status` with `body` before reading the request, and close
/// after a [`linger`].
pub async fn answer_early<S: AsyncRead + AsyncWrite + Unpin>(mut s: S, status: &str, body: &str) {
    let _ = answer(&mut s, status, body).await;
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
    /// Not on the allow-list, or resolved to an address the proxy does
    /// not dial ([`address`]): answered 403.
    Refused { host: String },
    /// Over the agent's connection rate ([`audit::CONNECTIONS`]): 429.
    Limited,
    /// Not a request this proxy takes (400), a head not sent in time
    /// (408), or the target did not resolve or answer (502).
    Failed,
    /// Served by the model gateway: its requests, each metered.
    Model { requests: u64 },
    /// The daemon's control connection (the budgets' holds), now ended.
    Control,
}

/// Serve one connection of agent `agent` under `allow`; logs it within
/// the agent's budget of `audit`.
pub async fn serve<S>(client: S, agent: &Ident, allow: &AllowList, audit: &Audit) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    serve_within(client, agent, allow, audit, HEAD_TIMEOUT, false, None).await
}

/// [`serve`], first writing the verdict line ([`VerdictLine`]) to `client`
/// before any byte of the answer or the tunnel: the daemon's side of the
/// connection, which records it.
pub async fn serve_telling<S>(client: S, agent: &Ident, allow: &AllowList, audit: &Audit) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    serve_within(client, agent, allow, audit, HEAD_TIMEOUT, true, None).await
}

/// [`serve_telling`], a request in origin form going to the model gateway
/// of `model`.
pub async fn serve_model_or_proxy<S>(
    client: S,
    agent: &Ident,
    allow: &AllowList,
    audit: &Audit,
    telling: bool,
    model: model_conn::ModelRoute,
) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    serve_within(
        client,
        agent,
        allow,
        audit,
        HEAD_TIMEOUT,
        telling,
        Some(model),
    )
    .await
}

/// Write the verdict `line` to `client` if `tell`; `false` when the
/// connection is gone (nothing more is sent on it).
pub async fn tell<S: AsyncWrite + Unpin>(client: &mut S, tell: bool, line: VerdictLine) -> bool {
    !tell || client.write_all(&line.to_line()).await.is_ok()
}

/// [`serve`] with the head's deadline and the verdict line parameters (the
/// tests' deadline is short).
async fn serve_within<S>(
    mut client: S,
    agent: &Ident,
    allow: &AllowList,
    audit: &Audit,
    head_timeout: Duration,
    telling: bool,
    model: Option<model_conn::ModelRoute>,
) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let started = Instant::now();
    let (head, early) = match tokio::time::timeout(head_timeout, read_head(&mut client)).await {
        Ok(Ok(Some(read))) => read,
        Err(_) => {
            let secs = head_timeout.as_secs_f64();
            if audit.may_log(agent, &Line::Failed, Instant::now()) {
                tracing::warn!(agent = %agent, "{agent}: egress request head not complete after {secs} s; answered 408");
            }
            let body = format!("hive-c0re egress: no complete request head within {secs} s\n");
            let said = format!("no complete request head within {secs} s");
            if tell(
                &mut client,
                telling,
                VerdictLine::new(Verdict::Timeout).reason(&said),
            )
            .await
            {
                let _ = answer(&mut client, "408 Request Timeout", &body).await;
            }
            return Outcome::Failed;
        }
        Ok(_) => {
            let line = VerdictLine::new(Verdict::BadRequest).reason("no request head");
            if !tell(&mut client, telling, line).await {
                return Outcome::Failed;
            }
            let _ = answer(
                &mut client,
                "400 Bad Request",
                "hive-c0re egress: no request head\n",
            )
            .await;
            return Outcome::Failed;
        }
    };
    if model_conn::origin_form(&head) {
        return model_conn::serve_model(client, agent, head, early, telling, model).await;
    }
    let Some(request) = parse_head(&head) else {
        let why = "not CONNECT host:port or an absolute http:// request";
        if !tell(
            &mut client,
            telling,
            VerdictLine::new(Verdict::BadRequest).reason(why),
        )
        .await
        {
            return Outcome::Failed;
        }
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
    let target = format!("{host}:{port}");
    let said = |verdict| VerdictLine::new(verdict).target(&target);
    let refused = Line::Refused(target.clone());
    if !allow.allows(&host, port) {
        if audit.may_log(agent, &refused, Instant::now()) {
            tracing::warn!(agent = %agent, host = %host, port, "{agent}: egress to {host}:{port} refused (not on its allow-list)");
        }
        let line = said(Verdict::Refused).reason("not on its allow-list");
        if !tell(&mut client, telling, line).await {
            return Outcome::Refused { host };
        }
        let _ = answer(
            &mut client,
            "403 Forbidden",
            &refusal_body(agent, &host, port),
        )
        .await;
        return Outcome::Refused { host };
    }
    let answer_addrs = match resolve(&host, port).await {
        Ok(addrs) => addrs,
        Err(e) => {
            if audit.may_log(agent, &Line::Failed, Instant::now()) {
                tracing::warn!(agent = %agent, host = %host, port, error = %e, "{agent}: egress to {host}:{port} failed: {e}");
            }
            let body = format!("hive-c0re egress: {host}:{port} did not resolve: {e}\n");
            let line = said(Verdict::Unresolved).reason(&format!("did not resolve: {e}"));
            if !tell(&mut client, telling, line).await {
                return Outcome::Failed;
            }
            let _ = answer(&mut client, "502 Bad Gateway", &body).await;
            return Outcome::Failed;
        }
    };
    let literal = allow.grants_literal(&host, port);
    let addrs = match address::check(&host, port, answer_addrs, literal) {
        Ok(addrs) => addrs,
        Err(refusal) => {
            if audit.may_log(agent, &refused, Instant::now()) {
                let what = refusal.what();
                tracing::warn!(agent = %agent, host = %host, port, address = %refusal.address, "{agent}: egress to {host}:{port} refused ({what}; not dialled)");
            }
            let line = said(Verdict::Forbidden)
                .address(&refusal.address.to_string())
                .reason(&refusal.what());
            if !tell(&mut client, telling, line).await {
                return Outcome::Refused { host };
            }
            let _ = answer(&mut client, "403 Forbidden", &refusal.body()).await;
            return Outcome::Refused { host };
        }
    };
    // Exactly the addresses checked, in the resolver's order: no second
    // resolution between the check and the dial.
    let mut upstream = match TcpStream::connect(&addrs[..]).await {
        Ok(s) => s,
        Err(e) => {
            if audit.may_log(agent, &Line::Failed, Instant::now()) {
                tracing::warn!(agent = %agent, host = %host, port, error = %e, "{agent}: egress to {host}:{port} failed");
            }
            let body = format!("hive-c0re egress: {host}:{port} did not answer: {e}\n");
            let line = said(Verdict::Unreachable).reason(&format!("did not answer: {e}"));
            if !tell(&mut client, telling, line).await {
                return Outcome::Failed;
            }
            let _ = answer(&mut client, "502 Bad Gateway", &body).await;
            return Outcome::Failed;
        }
    };
    let dialled = upstream
        .peer_addr()
        .map_or_else(|_| "?".to_owned(), |a| a.to_string());
    if !tell(
        &mut client,
        telling,
        said(Verdict::Allowed).address(&dialled),
    )
    .await
    {
        return Outcome::Failed;
    }
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
    if audit.may_log(agent, &Line::Allowed, Instant::now()) {
        tracing::info!(agent = %agent, host = %host, port, address = %dialled, up, down, ms, "{agent}: egress to {host}:{port}: {up} bytes out, {down} in, {ms} ms (dialled {dialled})");
    }
    Outcome::Allowed { host, up, down }
}

/// The addresses `host` stands for: an IP literal itself, else the host's
/// resolver's answer (DNS only in this process), within [`DNS_TIMEOUT`];
/// an empty answer is an error.
async fn resolve(host: &str, port: u16) -> std::io::Result<Vec<SocketAddr>> {
    if let Ok(ip) = host.parse::<IpAddr>() {
        return Ok(vec![SocketAddr::new(ip, port)]);
    }
    let lookup = tokio::net::lookup_host((host, port));
    let addrs: Vec<SocketAddr> = match tokio::time::timeout(DNS_TIMEOUT, lookup).await {
        Ok(found) => found?.collect(),
        Err(_) => {
            return Err(std::io::Error::new(
                std::io::ErrorKind::TimedOut,
                format!("no answer within {} s", DNS_TIMEOUT.as_secs()),
            ));
        }
    };
    if addrs.is_empty() {
        return Err(std::io::Error::new(
            std::io::ErrorKind::NotFound,
            "no address",
        ));
    }
    Ok(addrs)
}
