//! The lifecycle verbs as an operator expects them (podman, systemctl):
//! `--all` acts on the agents it applies to, the command waits for the
//! outcome, and the outcome is told per agent.
//!
//! - `--all` is resolved against the roster: `stop --all` stops the running
//!   agents and reports the others as already stopped, so a manager without
//!   a container on a fresh hive is not a failure.
//! - hive-c0re answers a lifecycle verb within its 5 s budget, saying "still
//!   in progress" when the systemd job outlives it. hivectl then waits by
//!   reading the roster until every target is where the verb takes it (or
//!   failed), showing progress on a terminal; `--no-block` returns at once
//!   with [`exit::IN_PROGRESS`]. Rejected alternative: a longer socket
//!   budget — the daemon's answer budget is part of the protocol, and the
//!   roster is the truth either way.
//! - The wire keeps `graceful` as the protocol defines it; only hivectl's
//!   defaults are the operator's (`stop` clean, `stop --force`/`kill` hard).

use std::collections::BTreeMap;
use std::time::{Duration, Instant};

use super::action::{Lifecycle, Verb};
use super::{Io, exit, roster};
use crate::wire::codes::ErrorCode;
use crate::wire::host::{AgentStatusRow, HostRequest, HostResponse};
use crate::wire::ident::Ident;

/// How often the roster is read while waiting.
const POLL: Duration = Duration::from_millis(200);

/// How long hivectl waits for an outcome before it leaves the work to
/// hive-c0re and exits [`exit::IN_PROGRESS`]: longer than a graceful stop's
/// deadline or a slow image clone.
pub const WAIT_LIMIT: Duration = Duration::from_secs(600);

/// True when hive-c0re accepted the request and the work goes on past its
/// answer budget (the answer's code `in_progress`).
pub fn still_in_progress(response: &HostResponse) -> bool {
    !response.ok && response.code == Some(ErrorCode::InProgress)
}

/// Where an agent stands with respect to the verb.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Progress {
    /// Not there yet.
    Pending,
    /// Where the verb takes it.
    Done,
    /// The unit ended failed (a start that did not come up).
    Failed,
    /// No longer managed (destroyed meanwhile).
    Gone,
}

/// Whether `--all` applies `verb` to an agent in this state.
pub fn applies(verb: Verb, row: &AgentStatusRow) -> bool {
    match verb {
        Verb::Start => !row.running,
        Verb::Stop { .. } => row.running,
        Verb::Restart | Verb::Spawn => true,
    }
}

/// Where `row` (`None`: not on the roster) stands for `verb`.
pub fn progress(verb: Verb, row: Option<&AgentStatusRow>) -> Progress {
    let Some(row) = row else {
        return Progress::Gone;
    };
    match verb {
        Verb::Start | Verb::Restart | Verb::Spawn if row.running => Progress::Done,
        Verb::Start | Verb::Restart | Verb::Spawn if row.failed => Progress::Failed,
        Verb::Start | Verb::Restart | Verb::Spawn => Progress::Pending,
        Verb::Stop { .. } if row.running => Progress::Pending,
        Verb::Stop { .. } => Progress::Done,
    }
}

/// What the verb is doing, for the progress line (`Stopping alice…`).
fn doing(verb: Verb) -> &'static str {
    match verb {
        Verb::Start => "Starting",
        Verb::Stop { graceful: true, .. } => "Stopping",
        Verb::Stop {
            graceful: false, ..
        } => "Killing",
        Verb::Restart => "Restarting",
        Verb::Spawn => "Creating",
    }
}

/// Run a lifecycle verb; returns the exit status.
pub(crate) fn run(mut io: Io<'_>, lc: &Lifecycle, progress_on: bool) -> u8 {
    let targets = if lc.all {
        let rows = match roster(&mut io) {
            Ok(rows) => rows,
            Err(status) => return status,
        };
        let (act, skip): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| applies(lc.verb, r));
        if !io.json {
            let skipped: String = skip
                .iter()
                .map(|r| roster::outcome_line(lc.verb, r, false))
                .collect();
            if let Err(status) = io.emit(&skipped) {
                return status;
            }
        }
        act.into_iter().map(|r| r.name).collect()
    } else {
        lc.names.clone()
    };
    let requests = lc.requests(&targets);
    let started = Instant::now();
    if progress_on && lc.block && !requests.is_empty() {
        let names: Vec<String> = targets.iter().map(Ident::machine_name).collect();
        let _ = write!(io.err, "{} {}…", doing(lc.verb), names.join(", "));
    }
    let mut in_progress = Vec::new();
    for request in &requests {
        let reply = match io.call(request) {
            Ok(reply) => reply,
            Err(status) => return end_progress(&mut io, progress_on, status),
        };
        if io.json
            && let Err(status) = io.emit(&format!("{}\n", reply.line))
        {
            return status;
        }
        if still_in_progress(&reply.response) {
            in_progress.push(reply);
        } else if !reply.response.ok {
            end_progress(&mut io, progress_on, 0);
            return super::refused(io.err, &reply);
        }
    }
    if !in_progress.is_empty() && !lc.block {
        for reply in &in_progress {
            super::refused(io.err, reply);
        }
        return exit::IN_PROGRESS;
    }
    // Done (or failed) as far as the answers tell; the roster says which.
    let rows = match wait(
        &mut io,
        lc.verb,
        &targets,
        !in_progress.is_empty() && lc.block,
    ) {
        Ok(rows) => rows,
        Err(status) => return end_progress(&mut io, progress_on, status),
    };
    if progress_on && lc.block && !requests.is_empty() {
        let _ = writeln!(io.err, " {} s", started.elapsed().as_secs());
    }
    report(&mut io, lc.verb, &targets, &rows)
}

/// Close the progress line before a message.
fn end_progress(io: &mut Io<'_>, progress_on: bool, status: u8) -> u8 {
    if progress_on {
        let _ = writeln!(io.err);
    }
    status
}

/// The roster now.
fn roster(io: &mut Io<'_>) -> Result<Vec<AgentStatusRow>, u8> {
    let reply = io.call(&HostRequest::AgentStatus)?;
    if !reply.response.ok {
        return Err(super::refused(io.err, &reply));
    }
    Ok(reply.response.agent_statuses.unwrap_or_default())
}

/// Read the roster until every target is done or failed (when `block`),
/// or once. Returns the last rows of the targets.
fn wait(
    io: &mut Io<'_>,
    verb: Verb,
    targets: &[Ident],
    block: bool,
) -> Result<BTreeMap<Ident, AgentStatusRow>, u8> {
    let deadline = Instant::now() + WAIT_LIMIT;
    loop {
        let rows: BTreeMap<Ident, AgentStatusRow> = roster(io)?
            .into_iter()
            .filter(|r| targets.contains(&r.name))
            .map(|r| (r.name.clone(), r))
            .collect();
        let pending = targets
            .iter()
            .any(|n| progress(verb, rows.get(n)) == Progress::Pending);
        if !block || !pending {
            return Ok(rows);
        }
        if Instant::now() >= deadline {
            let _ = writeln!(
                io.err,
                "\nhivectl: still in progress after {} s; hive-c0re carries on (`hivectl status` shows the outcome)",
                WAIT_LIMIT.as_secs()
            );
            return Err(exit::IN_PROGRESS);
        }
        std::thread::sleep(POLL);
    }
}

/// One line per target; exit 1 when one failed or is gone.
fn report(
    io: &mut Io<'_>,
    verb: Verb,
    targets: &[Ident],
    rows: &BTreeMap<Ident, AgentStatusRow>,
) -> u8 {
    let mut status = exit::OK;
    let mut text = String::new();
    for name in targets {
        match progress(verb, rows.get(name)) {
            Progress::Done => {
                if let Some(row) = rows.get(name) {
                    text.push_str(&roster::outcome_line(verb, row, true));
                }
            }
            Progress::Pending => {
                // Only without waiting: the answer said done, the roster
                // has not caught up; say what it shows.
                if let Some(row) = rows.get(name) {
                    text.push_str(&roster::outcome_line(verb, row, true));
                }
            }
            Progress::Failed => {
                status = exit::REFUSED;
                let _ = writeln!(
                    io.err,
                    "hivectl: {name} failed to come up; see `hivectl logs {name}` and \
                     `hivectl journal --agent {name}`"
                );
            }
            Progress::Gone => {
                status = exit::REFUSED;
                let _ = writeln!(io.err, "hivectl: {name} is no longer managed by this hive");
            }
        }
    }
    if !io.json
        && let Err(s) = io.emit(&text)
    {
        return s;
    }
    status
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
