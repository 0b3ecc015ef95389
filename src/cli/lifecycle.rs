//! The lifecycle verbs as an operator expects them (podman, systemctl):
//! `start`, `stop`, `restart`, `kill` (and `kill -s`), `destroy` and
//! `spawn` take their agents by name or `--all`, the command waits for the
//! outcome, and the outcome is told per agent.
//!
//! - `--all` is resolved against the roster: `stop --all` stops the running
//!   agents and reports the others as already stopped, so a manager without
//!   a container on a fresh hive is not a failure. `destroy --all` is
//!   refused before anything is sent ([`DESTROY_ALL_REFUSED`]).
//! - Several names are each checked against the roster before anything
//!   acts; then each is acted on, a refusal for one printed and the others
//!   still done, and the exit status is the first refusal's.
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
use super::{Io, exit, render, roster};
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

/// Whether `--all` applies `verb` to an agent in this state: start what
/// is stopped; stop, restart and signal what runs (a restart never starts
/// what an operator stopped). Destroy never takes `--all`.
pub fn applies(verb: Verb, row: &AgentStatusRow) -> bool {
    match verb {
        Verb::Start => !row.running,
        Verb::Stop { .. } | Verb::Restart | Verb::Signal(_) => row.running,
        Verb::Spawn => true,
        Verb::Destroy { .. } => false,
    }
}

/// Where `row` (`None`: not on the roster) stands for `verb`.
pub fn progress(verb: Verb, row: Option<&AgentStatusRow>) -> Progress {
    let Some(row) = row else {
        return match verb {
            Verb::Destroy { .. } => Progress::Done,
            _ => Progress::Gone,
        };
    };
    match verb {
        Verb::Start | Verb::Restart | Verb::Spawn if row.running => Progress::Done,
        Verb::Start | Verb::Restart | Verb::Spawn if row.failed => Progress::Failed,
        Verb::Start | Verb::Restart | Verb::Spawn => Progress::Pending,
        Verb::Stop { .. } if row.running => Progress::Pending,
        Verb::Stop { .. } | Verb::Signal(_) => Progress::Done,
        Verb::Destroy { .. } => Progress::Pending,
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
        Verb::Signal(_) => "Signalling",
        Verb::Destroy { .. } => "Destroying",
    }
}

/// Why `destroy --all` is refused (exit [`exit::USAGE`], nothing sent).
pub const DESTROY_ALL_REFUSED: &str = "destroy --all is refused: it would tear down every \
     agent of the hive at once, which no operator means and a typo must not do; name the \
     agents (`hivectl destroy alice bob`)";

/// The agents a request acted on, by how its answer went.
#[derive(Default)]
struct Answered {
    /// Refused for these agents alone (a per-agent request): its refusal
    /// is on stderr; nothing more is said of them.
    refused: Vec<Ident>,
    /// A request for several agents refused: some may have been done (they
    /// are reported), the others are named in its refusal.
    partly: Vec<Ident>,
    /// The first refusal's exit status, [`exit::OK`] when none.
    status: u8,
}

/// Run a lifecycle verb; returns the exit status.
pub(crate) fn run(mut io: Io<'_>, lc: &Lifecycle, progress_on: bool) -> u8 {
    let targets = match targets(&mut io, lc) {
        Ok(targets) => targets,
        Err(status) => return status,
    };
    let requests = lc.requests(&targets);
    let started = Instant::now();
    let mut progress_open = progress_on && lc.block && !requests.is_empty();
    if progress_open {
        let names: Vec<String> = targets.iter().map(Ident::machine_name).collect();
        let _ = write!(io.err, "{} {}…", doing(lc.verb), names.join(", "));
    }
    let mut answered = Answered::default();
    let mut in_progress = Vec::new();
    for (request, names) in &requests {
        let reply = match io.call(request) {
            Ok(reply) => reply,
            Err(status) => return end_progress(&mut io, progress_open, status),
        };
        if io.json
            && let Err(status) = io.emit(&format!("{}\n", reply.line))
        {
            return status;
        }
        if still_in_progress(&reply.response) {
            in_progress.push(reply);
        } else if !reply.response.ok {
            end_progress(&mut io, std::mem::take(&mut progress_open), 0);
            let status = super::refused(io.err, &reply);
            if answered.status == exit::OK {
                answered.status = status;
            }
            match names.as_slice() {
                [one] => answered.refused.push(one.clone()),
                several => answered.partly.extend(several.iter().cloned()),
            }
        }
    }
    if !in_progress.is_empty() && !lc.block {
        for reply in &in_progress {
            super::refused(io.err, reply);
        }
        return match answered.status {
            exit::OK => exit::IN_PROGRESS,
            failed => failed,
        };
    }
    // Done (or failed) as far as the answers tell; the roster says which.
    let waited: Vec<Ident> = targets
        .iter()
        .filter(|n| !answered.refused.contains(n) && !answered.partly.contains(n))
        .cloned()
        .collect();
    let mut rows = match wait(
        &mut io,
        lc.verb,
        &waited,
        !in_progress.is_empty() && lc.block,
    ) {
        Ok(rows) => rows,
        Err(status) => return end_progress(&mut io, progress_open, status),
    };
    if !answered.partly.is_empty() {
        match roster(&mut io) {
            Ok(now) => rows.extend(now.into_iter().map(|r| (r.name.clone(), r))),
            Err(status) => return status,
        }
    }
    if progress_open {
        let _ = writeln!(io.err, " {} s", started.elapsed().as_secs());
    }
    let reported: Vec<Ident> = targets
        .into_iter()
        .filter(|n| !answered.refused.contains(n))
        .collect();
    let status = report(&mut io, lc.verb, &reported, &rows, &answered.partly);
    match answered.status {
        exit::OK => status,
        failed => failed,
    }
}

/// The agents to act on: `--all` resolved against the roster (the agents
/// it does not apply to are reported as left alone), or the names given,
/// each once, checked against the roster when there are several so an
/// unknown one stops the verb before anything acts (one name is checked by
/// hive-c0re, which refuses it before acting).
fn targets(io: &mut Io<'_>, lc: &Lifecycle) -> Result<Vec<Ident>, u8> {
    if lc.all && !lc.verb.takes_all() {
        let _ = writeln!(io.err, "hivectl: {DESTROY_ALL_REFUSED}");
        return Err(exit::USAGE);
    }
    let mut names: Vec<Ident> = Vec::new();
    for name in &lc.names {
        if !names.contains(name) {
            names.push(name.clone());
        }
    }
    if !lc.all && (names.len() < 2 || !lc.verb.names_managed_agents()) {
        return Ok(names);
    }
    let rows = roster(io)?;
    if !lc.all {
        let unknown: Vec<&Ident> = names
            .iter()
            .filter(|n| !rows.iter().any(|r| &r.name == *n))
            .collect();
        if unknown.is_empty() {
            return Ok(names);
        }
        for name in unknown {
            let _ = writeln!(
                io.err,
                "hivectl: agent \"{name}\" is not managed by this hive"
            );
        }
        let _ = writeln!(
            io.err,
            "hivectl: nothing was done: every name must be managed (`hivectl list` shows them)"
        );
        return Err(ErrorCode::UnknownAgent.exit_status());
    }
    let (act, skip): (Vec<_>, Vec<_>) = rows.into_iter().partition(|r| applies(lc.verb, r));
    if !io.json {
        let skipped: String = skip
            .iter()
            .map(|r| roster::outcome_line(lc.verb, r, false))
            .collect();
        io.emit(&skipped)?;
    }
    Ok(act.into_iter().map(|r| r.name).collect())
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
/// or once; not at all for no target. Returns the last rows of the
/// targets.
fn wait(
    io: &mut Io<'_>,
    verb: Verb,
    targets: &[Ident],
    block: bool,
) -> Result<BTreeMap<Ident, AgentStatusRow>, u8> {
    if targets.is_empty() {
        return Ok(BTreeMap::new());
    }
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

/// One line per target; exit 1 when one failed or is gone. Of `partly`
/// (a refused request for several), only those done are told.
fn report(
    io: &mut Io<'_>,
    verb: Verb,
    targets: &[Ident],
    rows: &BTreeMap<Ident, AgentStatusRow>,
    partly: &[Ident],
) -> u8 {
    let mut status = exit::OK;
    let mut text = String::new();
    for name in targets {
        let row = rows.get(name);
        match progress(verb, row) {
            // Pending only without waiting: the answer said done, the
            // roster has not caught up; say what it shows.
            Progress::Done | Progress::Pending if !partly.contains(name) => {
                text.push_str(&done_line(verb, name, row));
            }
            Progress::Done => text.push_str(&done_line(verb, name, row)),
            Progress::Pending => {}
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

/// The line of an agent the verb got where it was sent: its state now
/// (`alice: running`), or what was done (`alice: sent SIGHUP`, `alice:
/// destroyed ...`).
fn done_line(verb: Verb, name: &Ident, row: Option<&AgentStatusRow>) -> String {
    let name = name.clone();
    match verb {
        Verb::Signal(signal) => render::done(&HostRequest::Signal { name, signal }),
        Verb::Destroy { purge } => render::done(&HostRequest::Destroy { name, purge }),
        _ => row.map_or_else(String::new, |r| roster::outcome_line(verb, r, true)),
    }
}

#[cfg(test)]
#[path = "lifecycle_tests.rs"]
mod tests;
