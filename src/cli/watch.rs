//! `hivectl watch`: the roster now, then each change with its time, for as
//! long as the operator looks — across daemon restarts.
//!
//! - The subscription is opened before the roster is read, so no change
//!   between the two is lost; then every row is printed once.
//! - A row identical to the last one printed for that agent is not printed
//!   again (hive-c0re pushes a row per unit event, and several events can
//!   leave the row as it was).
//! - The stream only carries rows of agents that exist, so a destroyed
//!   agent is noticed by reconciling with the roster whenever the stream is
//!   quiet for [`RECONCILE`] (the protocol's own advice to a reader that may
//!   have missed updates): `alice: removed`.
//! - When the stream ends or the socket stops answering, hivectl says so
//!   once and reconnects every second; with the socket unit, the connect
//!   itself starts hive-c0re again. Errors a retry cannot fix (permission,
//!   not a socket, a protocol error) end the command with exit 3.
//!
//! `--json` prints the lines hive-c0re sends (each ack and row) unchanged.

use std::collections::BTreeMap;
use std::time::Duration;

use super::{Io, roster};
use crate::client::{ClientError, Next};
use crate::clock::{Clock, SystemClock, rfc3339};
use crate::wire::host::{AgentStatusRow, HostRequest};
use crate::wire::ident::Ident;

/// How long the stream may be quiet before the roster is read again.
pub const RECONCILE: Duration = Duration::from_secs(2);

/// Pause between reconnection attempts.
const RETRY: Duration = Duration::from_secs(1);

/// Whether a failed connection may work on the next try (the daemon is
/// restarting) rather than needing the operator.
pub(super) fn retryable(e: &ClientError) -> bool {
    match e {
        ClientError::NotRunning { .. }
        | ClientError::Refused { .. }
        | ClientError::Timeout { .. }
        | ClientError::Closed { .. }
        | ClientError::Io { .. } => true,
        ClientError::NotASocket { .. }
        | ClientError::PermissionDenied { .. }
        | ClientError::Protocol { .. }
        | ClientError::BadLine { .. } => false,
    }
}

/// What has been printed per agent, and how lines are stamped.
struct Screen<'c> {
    last: BTreeMap<Ident, AgentStatusRow>,
    clock: &'c dyn Clock,
    /// The first roster is printed without times: it is the state, not a
    /// change.
    stamped: bool,
}

impl Screen<'_> {
    fn line(&self, text: &str) -> String {
        if self.stamped {
            format!("{} {text}", rfc3339(self.clock.now_unix()))
        } else {
            text.to_owned()
        }
    }

    /// The text for a row: its line when it differs from the last one shown.
    fn row(&mut self, row: AgentStatusRow) -> String {
        if self.last.get(&row.name) == Some(&row) {
            return String::new();
        }
        let text = self.line(&roster::status_line(&row));
        self.last.insert(row.name.clone(), row);
        text
    }

    /// The text for a whole roster: changed rows, then removed agents.
    fn roster(&mut self, mut rows: Vec<AgentStatusRow>) -> String {
        rows.sort_by(|a, b| roster::natural_cmp(a.name.as_str(), b.name.as_str()));
        let gone: Vec<Ident> = self
            .last
            .keys()
            .filter(|n| !rows.iter().any(|r| &r.name == *n))
            .cloned()
            .collect();
        let mut text: String = rows.into_iter().map(|r| self.row(r)).collect();
        for name in gone {
            self.last.remove(&name);
            text.push_str(&self.line(&format!("{name}: removed\n")));
        }
        text
    }
}

/// Run `watch` until interrupted, stdout closes, or an error a retry cannot
/// fix.
pub(crate) fn run(mut io: Io<'_>) -> u8 {
    let clock = SystemClock;
    let mut screen = Screen {
        last: BTreeMap::new(),
        clock: &clock,
        stamped: false,
    };
    // `connected` is set once a subscription worked: before that, a failure
    // is the operator's to fix (a wrong path, a stopped socket unit), not
    // something to wait for.
    follow(&mut io, |io, connected| session(io, &mut screen, connected))
}

/// Run `session` again after every lost connection, once one worked
/// (`session` sets its flag when subscribed), until it ends the command.
pub(super) fn follow(
    io: &mut Io<'_>,
    mut session: impl FnMut(&mut Io<'_>, &mut bool) -> Result<(), Stop>,
) -> u8 {
    let mut connected = false;
    loop {
        match session(io, &mut connected) {
            Ok(()) => {}
            Err(Stop::Status(status)) => return status,
            Err(Stop::Lost(e)) if connected && retryable(&e) => {}
            Err(Stop::Lost(e)) => return super::unreachable(io.err, &e),
        }
        let _ = writeln!(
            io.err,
            "hivectl: lost hive-c0re on {}; reconnecting…",
            io.client.path().display()
        );
        if let Err(status) = reconnect(io) {
            return status;
        }
    }
}

/// Why a session ended.
pub(super) enum Stop {
    /// End the command with this status.
    Status(u8),
    /// The connection failed or ended.
    Lost(ClientError),
}

/// Wait until hive-c0re answers again.
pub(super) fn reconnect(io: &mut Io<'_>) -> Result<(), u8> {
    loop {
        std::thread::sleep(RETRY);
        match io.client.call(&HostRequest::List) {
            Ok(_) => {
                let _ = writeln!(io.err, "hivectl: reconnected");
                return Ok(());
            }
            Err(e) if retryable(&e) => {}
            Err(e) => return Err(super::unreachable(io.err, &e)),
        }
    }
}

/// One connection: subscribe, print the roster, then the changes. `Ok`
/// when the stream ended cleanly.
fn session(io: &mut Io<'_>, screen: &mut Screen<'_>, connected: &mut bool) -> Result<(), Stop> {
    let mut sub = io
        .client
        .stream(&HostRequest::SubscribeAgentStatus)
        .map_err(Stop::Lost)?;
    *connected = true;
    let mut reconcile = true;
    loop {
        if reconcile && !io.json {
            let reply = io
                .client
                .call(&HostRequest::AgentStatus)
                .map_err(Stop::Lost)?;
            if !reply.response.ok {
                return Err(Stop::Status(super::refused(io.err, &reply)));
            }
            let text = screen.roster(reply.response.agent_statuses.unwrap_or_default());
            io.emit(&text).map_err(Stop::Status)?;
            screen.stamped = true;
        }
        reconcile = false;
        match sub.next_within(RECONCILE).map_err(Stop::Lost)? {
            Next::Line(reply) => {
                let text = if io.json {
                    format!("{}\n", reply.line)
                } else {
                    let rows = reply.response.agent_statuses.clone().unwrap_or_default();
                    rows.into_iter().map(|r| screen.row(r)).collect()
                };
                io.emit(&text).map_err(Stop::Status)?;
                if !reply.response.ok {
                    return Err(Stop::Status(super::refused(io.err, &reply)));
                }
            }
            Next::Quiet => reconcile = true,
            Next::End => return Ok(()),
        }
    }
}

#[cfg(test)]
#[path = "watch_tests.rs"]
mod tests;
