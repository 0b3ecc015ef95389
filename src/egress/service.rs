//! `hive-c0re egress`: the egress proxy as a service of its own
//! (`systemd/hive-c0re-egress.service`), the one process of the hive with a
//! network. The daemon keeps none (`PrivateNetwork=yes`): for each
//! connection to an agent's `egress.sock` it connects here, sends one
//! [`DialRequest`] line (the agent, as its socket says, and that agent's
//! allow-list now), then copies the agent's bytes both ways. This side
//! reads the line and serves the rest as that agent's proxy request
//! ([`super::serve`]).
//!
//! Why a second process: the daemon is root with seven capabilities;
//! giving it the network would put an internet-facing parser (an agent's
//! request head, an origin's bytes) beside `CAP_SYS_ADMIN`. This service
//! runs as a dynamic user with no capability, no writable path and only
//! its listening socket, which only root may connect to
//! (`hive-c0re-egress.socket`, `SocketMode=0600`). It trusts the line
//! because of that, and checks its shape anyway.
//!
//! One process serves every agent, so the per-agent limits live here
//! ([`super::audit::Audit`], shared by the connections' tasks), and so do
//! the budgets' holds ([`super::holds::Board`]): the daemon keeps one
//! connection of its own open here whose first line is a
//! [`crate::wire::egress::HoldsLine`] instead of a dial line, and writes the whole held set
//! on it whenever it changes.
//!
//! At start it probes whether the unit's `IPAddressDeny=` is enforced
//! ([`probe_address_filter`]): systemd drops the directive without a word
//! where cgroup BPF is missing, and an operator should know the proxy's own
//! address check ([`super::address`]) is then the only wall.

use std::io::ErrorKind;
use std::net::{Ipv4Addr, SocketAddr, SocketAddrV4};
use std::sync::Arc;
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::net::{TcpStream, UnixListener};

use super::audit::{self, Audit, Line};
use super::gateway::Gateway;
use super::holds::Board;
use super::{
    AllowList, ModelRoute, Outcome, answer_early, serve_model_or_proxy, tell, unavailable,
};
use crate::wire::egress::{DialRequest, GatewayHold, ServiceLine};
use crate::wire::egress_audit::{Verdict, VerdictLine};

/// The longest first line read: a [`DialRequest`], or the daemon's
/// [`crate::wire::egress::HoldsLine`] (every agent held, when a hive budget is reached).
pub const MAX_DIAL_LINE: u64 = super::holds::MAX_HOLDS_LINE;

/// How long the daemon may take to send its line.
const LINE_TIMEOUT: Duration = Duration::from_secs(5);

/// The address the unit's `IPAddressDeny=` names only to be probed
/// (`127.0.0.253/32`, in `systemd/hive-c0re-egress.service`): loopback, so
/// the probe's one SYN never leaves the host, and an address nothing
/// listens on. Port 9 (discard).
pub const FILTER_SENTINEL: SocketAddrV4 = SocketAddrV4::new(Ipv4Addr::new(127, 0, 0, 253), 9);

/// What the start-up probe of `IPAddressDeny=` found.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AddressFilter {
    /// The connect failed with EPERM/EACCES: the cgroup's BPF filter
    /// dropped it.
    Enforced,
    /// The connect reached the network stack (refused, or even answered):
    /// systemd did not install the filter.
    NotEnforced,
    /// Anything else (a time-out, another error): said as it was.
    Unknown(String),
}

/// Classify the sentinel connect's result.
pub fn address_filter(result: Result<(), (ErrorKind, String)>) -> AddressFilter {
    match result {
        Ok(()) => AddressFilter::NotEnforced,
        Err((ErrorKind::PermissionDenied, _)) => AddressFilter::Enforced,
        Err((ErrorKind::ConnectionRefused, _)) => AddressFilter::NotEnforced,
        Err((_, text)) => AddressFilter::Unknown(text),
    }
}

/// Try a TCP connect to `sentinel` (within a second) and say whether the
/// unit's `IPAddressDeny=` stopped it. Rejected: reading the cgroup's BPF
/// programs (needs privileges this service does not have) or trusting
/// systemd's version (it drops the directive on old kernels and in
/// containers without BPF).
pub async fn probe_address_filter(sentinel: SocketAddr) -> AddressFilter {
    let connect = tokio::time::timeout(Duration::from_secs(1), TcpStream::connect(sentinel));
    address_filter(match connect.await {
        Ok(Ok(_)) => Ok(()),
        Ok(Err(e)) => Err((e.kind(), e.to_string())),
        Err(_) => Err((ErrorKind::TimedOut, "no answer within 1 s".to_owned())),
    })
}

/// Say the probe's finding in the journal, once at start.
pub fn report_address_filter(found: &AddressFilter) {
    match found {
        AddressFilter::Enforced => tracing::info!(
            "IPAddressDeny= is enforced on this host: the unit's address filter backs the proxy's own address check"
        ),
        AddressFilter::NotEnforced => tracing::warn!(
            "IPAddressDeny= is not enforced on this host (no cgroup BPF): the proxy's own address check is the only wall"
        ),
        AddressFilter::Unknown(error) => tracing::warn!(
            "IPAddressDeny= may not be enforced on this host (the probe of {FILTER_SENTINEL} got: {error}): the proxy's own address check may be the only wall"
        ),
    }
}

/// The 429 body: the agent, its rate, when to retry.
pub fn limited_body(agent: &crate::wire::ident::Ident) -> String {
    format!(
        "hive-c0re egress: agent {agent} opened more than {} connections at once or {} a \
         second, so this one was refused (429 Too Many Requests); wait a second and retry.\n",
        audit::CONNECTIONS.burst,
        audit::CONNECTIONS.per_sec
    )
}

/// The model gateway as the service set it up at start, or why it has none.
pub type ModelGateway = Result<Arc<Gateway>, Arc<str>>;

/// Serve one connection from the daemon: its [`DialRequest`] line, then
/// the agent's request (or a 429 past the agent's connection rate); a
/// request in origin form goes to `gateway`, held while `holds` says a
/// budget holds the agent. A first line that is a [`crate::wire::egress::HoldsLine`] makes it
/// the daemon's control connection instead, which writes `holds`
/// ([`Board::serve_control`]).
pub async fn serve_dialled<S>(
    stream: S,
    audit: &Audit,
    gateway: &ModelGateway,
    holds: &Board,
) -> Outcome
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let mut reader = BufReader::new(stream);
    let mut line = String::new();
    let read = {
        use tokio::io::AsyncReadExt;
        let mut limited = (&mut reader).take(MAX_DIAL_LINE);
        tokio::time::timeout(LINE_TIMEOUT, limited.read_line(&mut line)).await
    };
    let request = match read {
        Ok(Ok(n)) if n > 0 && line.ends_with('\n') => ServiceLine::parse(&line),
        _ => {
            tracing::warn!("egress: a connection without a complete dial line; closed");
            unavailable(reader, "hive-c0re egress: no dial line\n").await;
            return Outcome::Failed;
        }
    };
    match request {
        Ok(ServiceLine::Holds(first)) => {
            holds.serve_control(first, reader).await;
            Outcome::Control
        }
        Ok(ServiceLine::Dial(DialRequest {
            agent,
            allow,
            verdict,
            meter,
            credential,
            hold,
        })) if hold.as_ref().is_none_or(GatewayHold::well_formed) => {
            // Any version asks for the line; this build speaks version 1,
            // and a daemon that wants another refuses it (strictly).
            let telling = verdict != 0;
            if !audit.admit(&agent, Instant::now()) {
                if audit.may_log(&agent, &Line::Limited, Instant::now()) {
                    tracing::warn!(agent = %agent, "{agent}: egress connection refused: over its connection rate (429)");
                }
                let line = VerdictLine::new(Verdict::Limited).reason("over its connection rate");
                if tell(&mut reader, telling, line).await {
                    answer_early(reader, "429 Too Many Requests", &limited_body(&agent)).await;
                }
                return Outcome::Limited;
            }
            let allow = AllowList::new(allow);
            let model = ModelRoute {
                gateway: gateway.clone(),
                credential,
                meter,
                holds: holds.view(hold),
            };
            serve_model_or_proxy(reader, &agent, &allow, audit, telling, model).await
        }
        Ok(ServiceLine::Dial(_)) => {
            tracing::warn!("egress: a dial line whose hold is not well formed; closed");
            unavailable(reader, "hive-c0re egress: a bad dial line\n").await;
            Outcome::Failed
        }
        Err(err) => {
            tracing::warn!("egress: a bad dial line: {err}");
            unavailable(reader, "hive-c0re egress: a bad dial line\n").await;
            Outcome::Failed
        }
    }
}

/// How often the summaries of floods that stopped are written and idle
/// agents' entries dropped ([`Audit::sweep`]).
const SWEEP_EVERY: Duration = Duration::from_secs(1);

/// Probe the address filter, then accept the daemon's connections on
/// `listener` for ever, each served in a task of its own (model requests by
/// `gateway`).
pub async fn run(listener: UnixListener, gateway: ModelGateway) {
    report_address_filter(&probe_address_filter(FILTER_SENTINEL.into()).await);
    let audit = Arc::new(Audit::default());
    let holds = Arc::new(Board::default());
    let sweeper = Arc::clone(&audit);
    tokio::spawn(async move {
        let mut every = tokio::time::interval(SWEEP_EVERY);
        loop {
            every.tick().await;
            sweeper.sweep(Instant::now());
        }
    });
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                let audit = Arc::clone(&audit);
                let (gateway, holds) = (gateway.clone(), Arc::clone(&holds));
                tokio::spawn(async move { serve_dialled(stream, &audit, &gateway, &holds).await });
            }
            Err(err) => {
                tracing::warn!("egress: accept failed: {err}");
                tokio::time::sleep(Duration::from_millis(100)).await;
            }
        }
    }
}

#[cfg(test)]
#[path = "service_tests.rs"]
mod tests;
