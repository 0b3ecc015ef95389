//! An agent's egress socket, `<runtime>/agents/<n>/egress.sock` (the
//! container's `/run/hive/egress.sock`): each connection is one proxy
//! request of agent `n`, under that agent's allow-list as it is when the
//! connection comes (the config's `egress_allow` plus the operator's
//! grants), so a grant or a revoke applies to the next connection.
//!
//! The daemon has no network (`PrivateNetwork=yes`): it hands each
//! connection to the egress service (`hive-c0re egress`, at
//! `<runtime>/egress-dialer.sock`) with one line saying the agent and its
//! list ([`DialRequest`]), then copies bytes both ways; the service checks,
//! resolves, dials and logs ([`crate::egress::service`]).
//!
//! The egress audit (issue 44): the dial line asks for the service's
//! verdict, which comes back as the first line of the service's bytes,
//! before any byte for the agent ([`VerdictLine`]). The daemon reads that
//! one line, strictly, and takes it off; everything after it is copied
//! untouched and never parsed, so nothing the agent sends (or an origin it
//! controls answers) can be read as a verdict. When the connection ends the
//! daemon records it with what only it knows — the agent, the bytes each
//! way, the duration ([`Hive::record_egress`]). A service that says no
//! verdict (an older one, after an upgrade of the daemon alone) gets the
//! agent a 502 and the record `unavailable`: a connection the audit cannot
//! describe is not served.
//!
//! Budgets at the request (issue 46): the dial line carries the agent's
//! hold, if a reached budget holds it, which the service's model gateway
//! goes by until the daemon's control connection speaks
//! ([`super::egress_control`]).
//!
//! Identity is the socket, as on `mcp.sock`: the registry binds one per
//! agent, in the directory only that agent's container sees, and no byte of
//! the request names the agent.
//!
//! Budget: an egress connection holds two fds (the agent's end and the
//! target), so it takes two of the agent's `agent_max_connections` slots,
//! shared with its `mcp.sock`; past them it is answered 503 and closed.

use std::sync::OnceLock;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Instant;

use tokio::io::{
    AsyncBufRead, AsyncBufReadExt, AsyncReadExt, AsyncWrite, AsyncWriteExt, BufReader,
};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use crate::egress::{self, COPY_BUF};
use crate::service::Hive;
use crate::wire::egress::DialRequest;
use crate::wire::egress_audit::{
    BadVerdict, EgressRecord, MAX_VERDICT_LINE, VERDICT_VERSION, Verdict, VerdictLine,
};
use crate::wire::ident::Ident;
use crate::wire::model_log::{FrameHead, MAX_FRAME_HEAD, METER_VERSION};

/// The egress socket's file name inside an agent's directory.
pub const EGRESS_SOCKET_NAME: &str = "egress.sock";

/// Slots of `agent_max_connections` one egress connection takes.
pub const EGRESS_SLOTS: u32 = 2;

/// What the daemon learns of one connection while it serves it, recorded
/// when it ends ([`Hive::record_egress`]).
struct Audit {
    agent: Ident,
    at_ms: i64,
    started: Instant,
    verdict: OnceLock<VerdictLine>,
    up: AtomicU64,
    down: AtomicU64,
}

impl Audit {
    /// A connection of `agent` coming now (the hive's clock: seconds, as
    /// every row the hive stamps; the duration is measured apart).
    fn new(hive: &Hive, agent: &Ident) -> Self {
        Self {
            agent: agent.clone(),
            at_ms: hive.now().saturating_mul(1000),
            started: Instant::now(),
            verdict: OnceLock::new(),
            up: AtomicU64::new(0),
            down: AtomicU64::new(0),
        }
    }

    /// The record of the connection as it ended; `fallback` when the
    /// service said no verdict.
    fn record(&self, fallback: VerdictLine) -> EgressRecord {
        let said = self.verdict.get().cloned().unwrap_or(fallback);
        EgressRecord {
            agent: self.agent.clone(),
            at_ms: self.at_ms,
            verdict: said.verdict,
            target: said.target,
            address: said.address,
            reason: said.reason,
            up: self.up.load(Ordering::Relaxed),
            down: self.down.load(Ordering::Relaxed),
            ms: u64::try_from(self.started.elapsed().as_millis()).unwrap_or(u64::MAX),
            count: 1,
        }
    }
}

/// Serve one egress connection of agent `name` until it ends or `stop`
/// fires (the agent is destroyed or the daemon stops: the tunnel is cut,
/// the client sees a closed connection and may retry); its record goes to
/// the egress audit when it ends.
pub async fn serve(hive: Hive, name: Ident, mut stream: UnixStream, stop: CancellationToken) {
    let audit = Audit::new(&hive, &name);
    let unavailable = |reason: &str| VerdictLine::new(Verdict::Unavailable).reason(reason);
    let allow = match hive.egress_allow(&name).await {
        Ok(patterns) => patterns,
        Err(err) => {
            tracing::warn!(agent = %name, "{name}: egress allow-list unreadable: {err}");
            let body = format!("hive-c0re egress: the hive cannot read the allow-list: {err}\n");
            egress::unavailable(stream, &body).await;
            hive.record_egress(audit.record(unavailable("the allow-list could not be read")));
            return;
        }
    };
    let path = hive.config().egress_dialer_socket();
    let mut dialer = match UnixStream::connect(&path).await {
        Ok(s) => s,
        Err(err) => {
            tracing::warn!(agent = %name, "{name}: egress refused: the egress service at {} is not there: {err}", path.display());
            let body = "hive-c0re egress: the hive's egress service (hive-c0re-egress) \
                        is not running; ask your operator to start it\n";
            egress::unavailable(stream, body).await;
            hive.record_egress(audit.record(unavailable("the egress service is not running")));
            return;
        }
    };
    let line = DialRequest {
        agent: name.clone(),
        allow,
        verdict: VERDICT_VERSION,
        meter: METER_VERSION,
        credential: hive.config().model_credential.clone(),
        hold: hive.usage().gateway_hold(&name),
    };
    let mut line = serde_json::to_vec(&line).unwrap_or_default();
    line.push(b'\n');
    if dialer.write_all(&line).await.is_err() {
        egress::unavailable(stream, "hive-c0re egress: the egress service hung up\n").await;
        hive.record_egress(audit.record(unavailable("the egress service hung up")));
        return;
    }
    let cut = tokio::select! {
        () = tunnel(&hive, &mut stream, &mut dialer, &audit) => None,
        () = stop.cancelled() => {
            tracing::info!(agent = %name, "{name}: egress connection cut (socket closed)");
            Some("cut: the agent's socket closed")
        }
    };
    let mut record = audit.record(unavailable(
        cut.unwrap_or("the egress service said no verdict"),
    ));
    if let (Some(cut), Verdict::Allowed) = (cut, record.verdict) {
        record.reason = Some(cut.to_owned());
    }
    hive.record_egress(record);
}

/// Copy the agent's bytes to the service and the service's back, after
/// taking its verdict line off the front of them (into `audit`), until
/// both directions end or either fails; a model connection's bytes come
/// framed, with its meter rows between them ([`unframe`]). Rejected:
/// tokio's `copy_bidirectional`, which cannot stop at the verdict and
/// counts nothing until it returns (a cut connection would be recorded
/// with no bytes).
async fn tunnel(hive: &Hive, agent: &mut UnixStream, service: &mut UnixStream, audit: &Audit) {
    let (agent_r, mut agent_w) = agent.split();
    let (service_r, mut service_w) = service.split();
    let mut agent_r = BufReader::with_capacity(COPY_BUF, agent_r);
    let mut service_r = BufReader::with_capacity(COPY_BUF, service_r);
    let up = pump(&mut agent_r, &mut service_w, &audit.up);
    let down = async {
        match read_verdict(&mut service_r).await {
            Ok(said) => {
                let model = said.verdict == Verdict::Model;
                let _ = audit.verdict.set(said);
                if model {
                    unframe(
                        hive,
                        &audit.agent,
                        &mut service_r,
                        &mut agent_w,
                        &audit.down,
                    )
                    .await
                } else {
                    pump(&mut service_r, &mut agent_w, &audit.down).await
                }
            }
            Err(err) => {
                tracing::warn!(agent = %audit.agent, "{}: the egress service said no verdict ({err}); answered 502", audit.agent);
                let body = "hive-c0re egress: the hive's egress service did not say what it did \
                            with this connection, so it was closed; ask your operator to restart \
                            hive-c0re-egress (it may be older than the daemon)\n";
                let answer = format!(
                    "HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\n\
                     Content-Length: {}\r\nConnection: close\r\n\r\n{body}",
                    body.len()
                );
                let _ = agent_w.write_all(answer.as_bytes()).await;
                let _ = agent_w.shutdown().await;
                audit.down.fetch_add(answer.len() as u64, Ordering::Relaxed);
                Err(std::io::ErrorKind::InvalidData.into())
            }
        }
    };
    // Either direction failing ends both, as copy_bidirectional does.
    let _ = tokio::try_join!(up, down);
}

/// The service's verdict line, the first bytes it sends: one line of at
/// most [`MAX_VERDICT_LINE`] bytes, parsed strictly
/// ([`VerdictLine::parse`]). Nothing after it is read here.
async fn read_verdict<R: AsyncBufRead + Unpin>(r: &mut R) -> Result<VerdictLine, BadVerdict> {
    let mut line = Vec::with_capacity(256);
    let limit = MAX_VERDICT_LINE as u64;
    let read = r.take(limit).read_until(b'\n', &mut line).await;
    match read {
        Ok(_) => VerdictLine::parse(&line),
        Err(_) => VerdictLine::parse(b""),
    }
}

/// Copy `from` into `to` until `from` ends (then shut `to`'s write side),
/// adding each chunk to `count` as it goes.
async fn pump<R, W>(from: &mut R, to: &mut W, count: &AtomicU64) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    loop {
        let chunk = from.fill_buf().await?;
        if chunk.is_empty() {
            return to.shutdown().await;
        }
        let n = chunk.len();
        to.write_all(chunk).await?;
        from.consume(n);
        count.fetch_add(n as u64, Ordering::Relaxed);
    }
}

/// A model connection's bytes from the service: data frames copied to
/// the agent (counted into `count`), meter frames recorded as `agent`'s
/// model requests ([`Hive::record_model_request`]), until the service's
/// side ends. Read strictly ([`FrameHead::parse`]): a head that is neither
/// ends the connection, logged — the service is this binary's, so a bad
/// frame is a bug, never something to guess at. An agent that went away
/// (its side no longer takes data) is no reason to stop reading: the
/// service still sends the row of the request it cut, last.
async fn unframe<R, W>(
    hive: &Hive,
    agent: &Ident,
    from: &mut R,
    to: &mut W,
    count: &AtomicU64,
) -> std::io::Result<()>
where
    R: AsyncBufRead + Unpin,
    W: AsyncWrite + Unpin,
{
    let mut head = Vec::with_capacity(256);
    let mut agent_gone = false;
    loop {
        head.clear();
        let n = (&mut *from)
            .take(MAX_FRAME_HEAD as u64)
            .read_until(b'\n', &mut head)
            .await?;
        if n == 0 {
            return if agent_gone {
                Ok(())
            } else {
                to.shutdown().await
            };
        }
        match FrameHead::parse(&head) {
            Ok(FrameHead::Data(mut left)) => {
                while left > 0 {
                    let chunk = from.fill_buf().await?;
                    if chunk.is_empty() {
                        return Err(std::io::ErrorKind::UnexpectedEof.into());
                    }
                    let n = chunk.len().min(left);
                    if !agent_gone {
                        agent_gone = to.write_all(&chunk[..n]).await.is_err();
                        if !agent_gone {
                            count.fetch_add(n as u64, Ordering::Relaxed);
                        }
                    }
                    from.consume(n);
                    left -= n;
                }
            }
            Ok(FrameHead::Meter(mut row)) => {
                let ms = i64::try_from(row.ms).unwrap_or(i64::MAX);
                row.at_ms = hive.now().saturating_mul(1000).saturating_sub(ms);
                hive.record_model_request(agent, row);
            }
            Err(err) => {
                tracing::warn!(agent = %agent, "{agent}: the egress service sent a bad model frame ({err}); connection closed");
                return Err(std::io::ErrorKind::InvalidData.into());
            }
        }
    }
}

/// Answer an egress connection past the agent's connection slots with a
/// 503 naming the limit; logged at the 1st, 2nd, 4th ... refusal, and
/// recorded in the egress audit (counted, as every refusal is).
pub async fn refuse_busy(hive: Hive, name: Ident, stream: UnixStream, max: usize, refused: u64) {
    let audit = Audit::new(&hive, &name);
    if refused.is_power_of_two() {
        tracing::warn!(
            agent = %name,
            "{name}: egress refused, its sockets are at {max} connections \
             (agent_max_connections); refused {refused} so far"
        );
    }
    let body = format!(
        "hive-c0re egress: too many open connections for this agent ({max}, \
         agent_max_connections, an egress connection counting twice); close one and retry\n"
    );
    egress::unavailable(stream, &body).await;
    let reason = format!("over its {max} open connections (agent_max_connections)");
    hive.record_egress(audit.record(VerdictLine::new(Verdict::Busy).reason(&reason)));
}

#[cfg(test)]
#[path = "egress_socket_tests.rs"]
mod tests;
