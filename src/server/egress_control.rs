//! The daemon's control connection to the egress service (issue 46,
//! budgets enforced at the request): one connection of its own to the
//! service's socket, whose first line is the whole set of agents a reached
//! budget holds ([`crate::wire::egress::HoldsLine`]) instead of a dial line,
//! and which carries the whole set again each time it changes. The model
//! gateway reads the last set per request, so no request waits on a round
//! trip to the daemon, and a held request is let go within the push's
//! latency of the budget being raised.
//!
//! Connected at start and again whenever the connection is lost (the
//! service restarted): at once after a connection that lived, else after a
//! back-off from [`FIRST_RETRY`] doubling to [`LAST_RETRY`] (a service
//! not there, or one that closes at once: an older one, which takes the
//! holds line for a bad dial line), said once per outage; each (re)connect
//! sends the whole set first. Meanwhile
//! each agent connection's dial line carries its agent's hold
//! ([`super::egress_socket`]), which the service goes by until this
//! connection speaks. The service never writes on it: anything read, or
//! its end, means the connection is gone.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt, AsyncWrite, AsyncWriteExt};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use crate::service::Hive;
use crate::service::usage::GatewayHolds;

/// The first wait before connecting again.
pub const FIRST_RETRY: Duration = Duration::from_millis(500);

/// The longest wait between two tries.
pub const LAST_RETRY: Duration = Duration::from_secs(10);

/// How a control connection ended.
#[derive(Debug, PartialEq, Eq)]
pub enum Ended {
    /// The daemon is stopping, or its hive is gone: no reconnect.
    Stopping,
    /// The service closed it or a write failed: connect again.
    Lost,
}

/// Keep the control connection to the egress service (at the config's
/// `egress_dialer_socket`) until `shutdown`.
pub async fn run(hive: Hive, shutdown: CancellationToken) {
    let path = hive.config().egress_dialer_socket();
    let mut holds = hive.usage().gateway_holds();
    let mut retry = FIRST_RETRY;
    let mut said_down = false;
    loop {
        let connect = tokio::select! {
            () = shutdown.cancelled() => return,
            connect = UnixStream::connect(&path) => connect,
        };
        match connect {
            Ok(stream) => {
                let since = tokio::time::Instant::now();
                if push(&mut holds, stream, &shutdown).await == Ended::Stopping {
                    return;
                }
                if since.elapsed() >= LAST_RETRY {
                    if said_down {
                        tracing::info!("the egress service was told the budgets' holds again");
                    }
                    tracing::info!(
                        "the egress service closed the holds connection; connecting again"
                    );
                    (retry, said_down) = (FIRST_RETRY, false);
                    continue;
                }
                // Closed at once (an older service takes the holds line for
                // a bad dial line): retried as a service not there is,
                // backing off, said once.
                if !said_down {
                    said_down = true;
                    tracing::warn!(
                        "the egress service at {} closed the holds connection at once (older \
                         than the daemon?): the model gateway goes by each connection's dial \
                         line for budgets' holds; retrying",
                        path.display()
                    );
                }
            }
            Err(err) if !said_down => {
                said_down = true;
                tracing::warn!(
                    "the egress service at {} is not there ({err}): the model gateway goes by \
                     each connection's dial line for budgets' holds until it is; retrying",
                    path.display()
                );
            }
            Err(_) => {}
        }
        tokio::select! {
            () = shutdown.cancelled() => return,
            () = tokio::time::sleep(retry) => {}
        }
        retry = (retry * 2).min(LAST_RETRY);
    }
}

/// Write the whole set of holds on `stream` now and after each change,
/// until the connection is lost or `shutdown`.
pub async fn push<S>(holds: &mut GatewayHolds, stream: S, shutdown: &CancellationToken) -> Ended
where
    S: AsyncRead + AsyncWrite + Unpin,
{
    let (mut from, mut to) = tokio::io::split(stream);
    let mut byte = [0u8; 1];
    loop {
        let mut line = serde_json::to_vec(&holds.line()).unwrap_or_default();
        line.push(b'\n');
        if to.write_all(&line).await.is_err() {
            return Ended::Lost;
        }
        tokio::select! {
            () = shutdown.cancelled() => return Ended::Stopping,
            changed = holds.changed() => if !changed {
                return Ended::Stopping;
            },
            _ = from.read(&mut byte) => return Ended::Lost,
        }
    }
}

#[cfg(test)]
#[path = "egress_control_tests.rs"]
mod tests;
