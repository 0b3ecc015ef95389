//! Budgets enforced at the request (issue 46): which agents the model
//! gateway holds, as the daemon says, and a held request's wait.
//!
//! The daemon decides (its usage room evaluates every budget after each
//! metered request and each change of a budget) and pushes the whole held
//! set here on a control connection of its own ([`HoldsLine`], first line
//! instead of a dial line), again whenever it changes and on every
//! reconnect. The [`Board`] keeps the last set in a `watch`, so a request
//! reads it without a round trip and a held one waits on its changes
//! without polling. Each agent connection also carries the hold its agent
//! had when it was dialled ([`crate::wire::egress::DialRequest::hold`]):
//! what the gateway goes by while no control connection has spoken (a
//! service just restarted), so a restart never lets a held agent through.
//!
//! Decisions:
//! - **Checked per request, not per connection**: a keep-alive connection
//!   made before the budget was reached has its next request held.
//! - **Only `POST /v1/messages` is held**: it is what spends.
//!   `count_tokens` and the models list cost nothing, and holding them
//!   would stall Claude Code's start and its context meter for nothing.
//! - **Overshoot**: a request forwarded before the push arrives (or in
//!   flight when the budget is reached) runs to its end; a budget is
//!   overshot by at most the requests already in flight.
//! - A control connection that ends (the daemon stopped) puts the board
//!   back to "nothing said": each connection goes by its dial-time hold
//!   again until a new control connection speaks. Agent connections end
//!   with the daemon anyway (it copies their bytes).

use std::collections::BTreeMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::Duration;

use tokio::io::{AsyncBufRead, AsyncBufReadExt, AsyncReadExt};
use tokio::sync::watch;

use crate::wire::egress::{GatewayHold, HoldsLine, ServiceLine};
use crate::wire::ident::Ident;

/// The longest control line read (a hold is a few hundred bytes; a
/// thousand agents held fit).
pub const MAX_HOLDS_LINE: u64 = 4 << 20;

/// What the daemon said last, shared by every connection of the service.
#[derive(Debug, Clone, Default)]
pub struct Said {
    /// The control connection that said it; `None`: no control connection
    /// is open (connections go by their dial-time holds).
    from: Option<u64>,
    held: Arc<BTreeMap<Ident, GatewayHold>>,
}

/// The service's board of holds: written by the daemon's control
/// connections, read by every request.
#[derive(Debug)]
pub struct Board {
    said: watch::Sender<Said>,
    next: AtomicU64,
}

impl Default for Board {
    fn default() -> Self {
        Self {
            said: watch::Sender::new(Said::default()),
            next: AtomicU64::new(1),
        }
    }
}

impl Board {
    /// A connection's view of the board, with the hold its dial line
    /// carried.
    pub fn view(&self, at_dial: Option<GatewayHold>) -> HoldView {
        HoldView {
            said: self.said.subscribe(),
            at_dial,
        }
    }

    /// Serve one control connection: `first` (its first line, read by the
    /// caller), then each further line, each replacing the whole set, until
    /// it ends or sends a line that is not a well-formed [`HoldsLine`]
    /// (logged; the connection is dropped and the daemon reconnects).
    pub async fn serve_control<R: AsyncBufRead + Unpin>(&self, first: HoldsLine, mut from: R) {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let mut line = first;
        let mut text = String::new();
        loop {
            if !line.well_formed() {
                tracing::warn!("egress: the daemon's holds line is not well formed; closed");
                break;
            }
            let held = Arc::new(line.holds);
            self.said.send_replace(Said {
                from: Some(id),
                held,
            });
            text.clear();
            let read = (&mut from).take(MAX_HOLDS_LINE).read_line(&mut text).await;
            line = match read {
                Ok(n) if n > 0 && text.ends_with('\n') => match ServiceLine::parse(&text) {
                    Ok(ServiceLine::Holds(next)) => next,
                    _ => {
                        tracing::warn!(
                            "egress: the daemon's control connection sent a line that is not a holds line; closed"
                        );
                        break;
                    }
                },
                _ => break,
            };
        }
        // Nothing said any more, unless a newer control connection has
        // spoken since.
        self.said.send_if_modified(|said| {
            let ours = said.from == Some(id);
            if ours {
                *said = Said::default();
            }
            ours
        });
    }

    /// Whether a control connection has spoken and is still open.
    pub fn said(&self) -> bool {
        self.said.borrow().from.is_some()
    }
}

/// One connection's reading of the board.
#[derive(Debug, Clone)]
pub struct HoldView {
    said: watch::Receiver<Said>,
    at_dial: Option<GatewayHold>,
}

impl HoldView {
    /// The hold on `agent` now, marking the board's state seen.
    fn now(&mut self, agent: &Ident) -> Option<GatewayHold> {
        let said = self.said.borrow_and_update();
        match said.from {
            Some(_) => said.held.get(agent).cloned(),
            None => self.at_dial.clone(),
        }
    }

    /// Wait while `agent` is held: `Ok` at once when it is not, or as soon
    /// as a change of the board lets it go; `Err` with the hold when it is
    /// still held after the hold's `wait_ms` (counted from the first
    /// check). No polling: the wait sleeps on the board's changes.
    pub async fn wait(&mut self, agent: &Ident) -> Result<(), GatewayHold> {
        let Some(mut hold) = self.now(agent) else {
            return Ok(());
        };
        let deadline = tokio::time::Instant::now() + Duration::from_millis(hold.wait_ms);
        loop {
            match tokio::time::timeout_at(deadline, self.said.changed()).await {
                Err(_) => return Err(hold),
                // The board is gone (the service is stopping): held to the end.
                Ok(Err(_)) => {
                    tokio::time::sleep_until(deadline).await;
                    return Err(hold);
                }
                Ok(Ok(())) => match self.now(agent) {
                    None => return Ok(()),
                    Some(still) => hold = still,
                },
            }
        }
    }
}

/// The message of a request answered after its wait: which budget, how
/// long it waited, the command that raises the budget.
pub fn held_message(agent: &Ident, hold: &GatewayHold) -> String {
    let secs = hold.wait_ms.div_ceil(1000);
    format!(
        "hive-c0re model gateway: agent {agent} is paused: the budget {} is reached ({}). \
         This request waited {secs} s and was not sent to the model. Ask your operator \
         to raise the budget ({}) or unset it; requests go through again as soon as \
         it is raised or its window moves on.",
        hold.budget, hold.spent, hold.raise
    )
}

#[cfg(test)]
#[path = "holds_tests.rs"]
mod tests;
