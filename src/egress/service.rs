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

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncWrite, BufReader};
use tokio::net::UnixListener;

use super::{AllowList, Outcome, serve, unavailable};
use crate::wire::egress::DialRequest;

/// The longest [`DialRequest`] line read.
pub const MAX_DIAL_LINE: u64 = 256 * 1024;

/// How long the daemon may take to send its line.
const LINE_TIMEOUT: Duration = Duration::from_secs(5);

/// Serve one connection from the daemon: its [`DialRequest`] line, then
/// the agent's request.
pub async fn serve_dialled<S>(stream: S) -> Outcome
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
        Ok(Ok(n)) if n > 0 && line.ends_with('\n') => serde_json::from_str::<DialRequest>(&line),
        _ => {
            tracing::warn!("egress: a connection without a complete dial line; closed");
            unavailable(reader, "hive-c0re egress: no dial line\n").await;
            return Outcome::Failed;
        }
    };
    match request {
        Ok(DialRequest { agent, allow }) => serve(reader, &agent, &AllowList::new(allow)).await,
        Err(err) => {
            tracing::warn!("egress: a bad dial line: {err}");
            unavailable(reader, "hive-c0re egress: a bad dial line\n").await;
            Outcome::Failed
        }
    }
}

/// Accept the daemon's connections on `listener` for ever, each served in
/// a task of its own.
pub async fn run(listener: UnixListener) {
    loop {
        match listener.accept().await {
            Ok((stream, _)) => {
                tokio::spawn(serve_dialled(stream));
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
