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
//! Identity is the socket, as on `mcp.sock`: the registry binds one per
//! agent, in the directory only that agent's container sees, and no byte of
//! the request names the agent.
//!
//! Budget: an egress connection holds two fds (the agent's end and the
//! target), so it takes two of the agent's `agent_max_connections` slots,
//! shared with its `mcp.sock`; past them it is answered 503 and closed.

use tokio::io::{AsyncWriteExt, copy_bidirectional_with_sizes};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use crate::egress::{self, COPY_BUF};
use crate::service::Hive;
use crate::wire::egress::DialRequest;
use crate::wire::ident::Ident;

/// The egress socket's file name inside an agent's directory.
pub const EGRESS_SOCKET_NAME: &str = "egress.sock";

/// Slots of `agent_max_connections` one egress connection takes.
pub const EGRESS_SLOTS: u32 = 2;

/// Serve one egress connection of agent `name` until it ends or `stop`
/// fires (the agent is destroyed or the daemon stops: the tunnel is cut,
/// the client sees a closed connection and may retry).
pub async fn serve(hive: Hive, name: Ident, mut stream: UnixStream, stop: CancellationToken) {
    let allow = match hive.egress_allow(&name).await {
        Ok(patterns) => patterns,
        Err(err) => {
            tracing::warn!(agent = %name, "{name}: egress allow-list unreadable: {err}");
            let body = format!("hive-c0re egress: the hive cannot read the allow-list: {err}\n");
            egress::unavailable(stream, &body).await;
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
            return;
        }
    };
    let line = DialRequest {
        agent: name.clone(),
        allow,
    };
    let mut line = serde_json::to_vec(&line).unwrap_or_default();
    line.push(b'\n');
    if dialer.write_all(&line).await.is_err() {
        egress::unavailable(stream, "hive-c0re egress: the egress service hung up\n").await;
        return;
    }
    tokio::select! {
        _ = copy_bidirectional_with_sizes(&mut stream, &mut dialer, COPY_BUF, COPY_BUF) => {}
        () = stop.cancelled() => {
            tracing::info!(agent = %name, "{name}: egress connection cut (socket closed)");
        }
    }
}

/// Answer an egress connection past the agent's connection slots with a
/// 503 naming the limit; logged at the 1st, 2nd, 4th ... refusal.
pub async fn refuse_busy(name: Ident, stream: UnixStream, max: usize, refused: u64) {
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
}
