//! `hivectl`, the operator's command line: parse, call host.sock, render,
//! map the outcome to an exit status.
//!
//! - [`args`]: the clap definition and the request each subcommand sends.
//! - [`render`]: tables and row lines for humans.
//! - [`lifecycle`]: start/stop/kill/restart/destroy/spawn — `--all` resolved against
//!   the roster, then waiting for the outcome with progress on a terminal.
//! - [`watch`]: the roster, then its changes, across daemon restarts.
//! - `follow`: `turns -f`, the newest turns then the turn in progress.
//! - [`lifecycle_args`]: the arguments the lifecycle verbs share (which
//!   agents, whether to wait).
//! - [`inbox`]: `inbox show ID`, one message of the operator's inbox whole.
//! - [`egress_log`]: an agent's egress audit as a table.
//! - [`image`]: `image ls`'s table of the agent images and their agents,
//!   `image prune`'s lines; [`image_args`] their arguments.
//! - [`version`]: hivectl's version, then the daemon's.
//! - [`model_log`]: an agent's metered model requests as a table;
//!   [`model_log_args`] its arguments.
//! - [`man`]: the manual pages, `hive-c0re(8)` included.
//!
//! Output contract: a table, or one line per thing a write verb did, on
//! stdout; with `--json`, each line hive-c0re sent, byte for byte, so
//! scripts see exactly what the daemon said (for `watch` that includes the
//! ack line). Errors and progress go to stderr (`hivectl: <message>`).
//! Exit status: the [`exit`] constants.
//!
//! `HIVECTL_TIMEOUT_MS` (or the hidden `--timeout-ms`) replaces the 5 s
//! budget of a call; it exists so tests of a silent daemon finish quickly.
//!
//! Decision: `run` takes its output streams and what it knows of the
//! terminal as parameters and returns a status instead of exiting, so the
//! binary's `main` stays three lines. Rejected alternative: `process::exit`
//! from inside the command handlers, which skips destructors and makes the
//! outcomes untestable in-process.

pub mod action;
pub mod args;
pub mod budget;
mod complete;
pub mod egress_log;
mod follow;
pub mod image;
pub mod image_args;
pub mod inbox;
pub mod inspect;
pub mod lifecycle;
pub mod lifecycle_args;
pub mod man;
pub mod model_log;
pub mod model_log_args;
pub mod render;
pub mod roster;
pub mod since;
pub mod table;
pub mod usage;
mod value_parsers;
pub mod version;
pub mod watch;

use std::io::{self, IsTerminal, Write};

use clap::CommandFactory;

use crate::client::{Client, ClientError, Reply};
use crate::errors::chain;
use crate::wire::codes::ErrorCode;
use crate::wire::host::{ApprovalKind, ApprovalStatus, HostRequest, HostResponse, VERSION};
use crate::wire::ident::Ident;
use action::Action;
use args::{Cli, Command};

/// hivectl's exit statuses, defined beside the error codes that choose
/// them (a refusal exits with its code's status).
pub use crate::wire::codes::exit;

/// What hivectl knows of where it writes.
#[derive(Debug, Clone, Copy, Default)]
pub struct Terminal {
    /// stderr is a terminal: show progress while waiting.
    pub progress: bool,
    /// stdout is a terminal and `NO_COLOR` is unset or empty: colour states.
    pub colour: bool,
}

impl Terminal {
    /// The process's own terminal, as <https://no-color.org> asks.
    pub fn detect() -> Self {
        let no_color = std::env::var_os("NO_COLOR").is_some_and(|v| !v.is_empty());
        Self {
            progress: io::stderr().is_terminal(),
            colour: io::stdout().is_terminal() && !no_color,
        }
    }
}

/// Run one parsed command line, writing to `out` and `err`; returns the
/// exit status.
pub fn run(mut cli: Cli, term: Terminal, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut client = Client::new(&cli.socket);
    if let Some(ms) = cli.timeout_ms {
        client = client.with_budget(std::time::Duration::from_millis(ms));
    }
    if let Some(agent) = cli.command.agent_mut()
        && agent.as_str().starts_with("h-")
        && let Ok(reply) = client.call(&HostRequest::List)
    {
        let managed = reply.response.agents.unwrap_or_default();
        *agent = action::resolve_machine_name(agent, &managed);
    }
    let style = table::Style {
        view: cli.command.view(),
        journal: cli.command.journal_format(),
        colour: term.colour,
        history: matches!(cli.command, Command::Pending { all: true, .. }),
        now: crate::clock::Clock::now_unix(&crate::clock::SystemClock),
    };
    let io = Io {
        client: &client,
        json: cli.json,
        out,
        err,
    };
    match cli.command.action() {
        Action::Call(request) => call(io, &cli.command, &request, &style),
        Action::Stream(request) => stream(io, &request, &style),
        Action::Lifecycle(lc) => lifecycle::run(io, &lc, term.progress),
        Action::Watch => watch::run(io),
        Action::FollowTurns { name, limit } => follow::run(io, &name, limit),
        Action::Completions(shell) => completions(shell, io.out, io.err),
        Action::Man(dir) => man::write(&dir, io.err),
        Action::Version => version::run(io),
    }
}

/// The client and the streams a command uses.
pub(crate) struct Io<'a> {
    pub client: &'a Client,
    /// `--json`: print hive-c0re's lines unchanged.
    pub json: bool,
    pub out: &'a mut dyn Write,
    pub err: &'a mut dyn Write,
}

impl Io<'_> {
    /// Call, or report why hive-c0re could not be reached (`Err(status)`).
    fn call(&mut self, request: &HostRequest) -> Result<Reply, u8> {
        match self.client.call(request) {
            Ok(reply) => {
                warn_if_newer(self.err, &reply);
                Ok(reply)
            }
            Err(e) => Err(unreachable(self.err, &e)),
        }
    }

    /// Write to stdout; `Err(status)` when the command must end here.
    fn emit(&mut self, text: &str) -> Result<(), u8> {
        match emit(self.out, text, self.err) {
            Some(status) => Err(status),
            None => Ok(()),
        }
    }
}

fn call(mut io: Io<'_>, command: &Command, request: &HostRequest, style: &table::Style) -> u8 {
    let mut reply = match io.call(request) {
        Ok(reply) => reply,
        Err(status) => return status,
    };
    if let Command::Status { needs_me: true, .. } = command
        && let Some(rows) = reply.response.agent_statuses.as_mut()
    {
        rows.retain(crate::wire::host::AgentStatusRow::needs_person);
        reply.line = reply.response.to_line();
    }
    if reply.response.ok
        && let Some(why) = inbox::not_answered(request, &reply.response)
    {
        let _ = writeln!(io.err, "hivectl: {why}");
        return ErrorCode::UnknownItem.exit_status();
    }
    if io.json {
        if let Err(status) = io.emit(&format!("{}\n", reply.line)) {
            return status;
        }
    } else if reply.response.ok {
        let mut text = render::answer(request, &reply.response, style);
        if let HostRequest::RequestSpawn { name } = request {
            text = queued_approval(&mut io, name, &reply.response);
        }
        if let Err(status) = io.emit(&text) {
            return status;
        }
        capped_note(io.err, command, &reply);
    }
    if reply.response.ok {
        exit::OK
    } else {
        refused(io.err, &reply)
    }
}

/// The line `request-spawn` prints: the id of the approval it queued, from
/// the answer's row (`approvals: [row]`); a daemon that answers without it
/// (older ones) is asked for its queue, and the newest pending spawn of
/// that agent is taken.
fn queued_approval(io: &mut Io<'_>, name: &Ident, answer: &HostResponse) -> String {
    let answered = answer
        .approvals
        .as_ref()
        .and_then(|rows| rows.first())
        .map(|a| a.id);
    let queued = answered.or_else(|| {
        io.client
            .call(&HostRequest::Pending)
            .ok()
            .and_then(|reply| reply.response.approvals)
            .unwrap_or_default()
            .into_iter()
            .filter(|a| {
                &a.agent == name
                    && a.kind == ApprovalKind::Spawn
                    && a.status == ApprovalStatus::Pending
            })
            .map(|a| a.id)
            .max()
    });
    match queued {
        Some(id) => format!(
            "approval {id}: spawn {name}, pending (`hivectl approve {id}` or `hivectl deny {id}`)\n"
        ),
        None => format!("spawn of {name} queued for approval (see `hivectl pending`)\n"),
    }
}

/// Tell the operator when a journal answer was cut to the daemon's cap, so
/// `-n 500` showing 100 lines is not a silent surprise.
fn capped_note(err: &mut dyn Write, command: &Command, reply: &Reply) {
    let (asked, cap, verb) = match command {
        Command::Journal { lines, .. } => (
            *lines,
            crate::wire::journal::HOST_JOURNAL_MAX_LINES,
            "journal",
        ),
        Command::Logs { lines, .. } => (*lines, crate::wire::journal::AGENT_LOGS_MAX_LINES, "logs"),
        _ => return,
    };
    let shown = reply.response.entries.as_ref().map_or(0, Vec::len);
    if asked.is_some_and(|n| n > cap) && shown >= cap as usize {
        let _ = writeln!(
            err,
            "hivectl: showing the newest {cap} entries, the most `{verb}` returns; narrow it \
             with --since/--until (or --grep)"
        );
    }
}

fn stream(mut io: Io<'_>, request: &HostRequest, style: &table::Style) -> u8 {
    let stream = match io.client.stream(request) {
        Ok(stream) => stream,
        Err(e) => return unreachable(io.err, &e),
    };
    for (n, item) in stream.enumerate() {
        let reply = match item {
            Ok(reply) => reply,
            Err(e) => return unreachable(io.err, &e),
        };
        if n == 0 {
            warn_if_newer(io.err, &reply);
        }
        let text = if io.json {
            format!("{}\n", reply.line)
        } else {
            // A stream's empty batch is no news ("-- No entries --" is
            // for a one-shot read).
            match reply.response.entries.as_deref().unwrap_or(&[]) {
                [] => String::new(),
                entries => render::journal(entries, style.journal),
            }
        };
        if let Err(status) = io.emit(&text) {
            return status;
        }
        if !reply.response.ok {
            return refused(io.err, &reply);
        }
    }
    let _ = writeln!(
        io.err,
        "hivectl: hive-c0re closed the stream on {}",
        io.client.path().display()
    );
    exit::UNREACHABLE
}

/// The shell's registration of hivectl's completion engine: the script
/// calls `hivectl` back (`COMPLETE=<shell>`) for every completion, so
/// agent names come from the running hive.
fn completions(shell: clap_complete::Shell, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    use clap_complete::env::EnvCompleter;
    use clap_complete::env::{Bash, Elvish, Fish, Powershell, Zsh};
    let completer: &dyn EnvCompleter = match shell {
        clap_complete::Shell::Bash => &Bash,
        clap_complete::Shell::Elvish => &Elvish,
        clap_complete::Shell::Fish => &Fish,
        clap_complete::Shell::PowerShell => &Powershell,
        clap_complete::Shell::Zsh => &Zsh,
        _ => &Bash,
    };
    let name = Cli::command().get_name().to_owned();
    // Into a buffer first, so a failed write (`| head`) is reported once.
    let mut script = Vec::new();
    if let Err(e) = completer.write_registration(COMPLETE_VAR, &name, &name, &name, &mut script) {
        let _ = writeln!(err, "hivectl: cannot write the completion script: {e}");
        return exit::REFUSED;
    }
    emit(out, &String::from_utf8_lossy(&script), err).unwrap_or(exit::OK)
}

/// The environment variable through which a shell asks for completions.
pub const COMPLETE_VAR: &str = "COMPLETE";

/// Write `text` and flush. `Some(status)` when the command must end here: a
/// closed pipe (`hivectl watch | head`) ends it quietly, any other write
/// failure is reported.
fn emit(out: &mut dyn Write, text: &str, err: &mut dyn Write) -> Option<u8> {
    match out.write_all(text.as_bytes()).and_then(|()| out.flush()) {
        Ok(()) => None,
        Err(e) if e.kind() == io::ErrorKind::BrokenPipe => Some(exit::OK),
        Err(e) => {
            let _ = writeln!(err, "hivectl: cannot write to stdout: {e}");
            Some(exit::REFUSED)
        }
    }
}

/// hive-c0re's refusal on stderr; the exit status is its code's (a
/// lifecycle verb still at work past the daemon's answer budget is
/// [`exit::IN_PROGRESS`], not a refusal). An answer without a code (an
/// older daemon) is a plain refusal.
fn refused(err: &mut dyn Write, reply: &Reply) -> u8 {
    let message = reply
        .response
        .error
        .as_deref()
        .map(table::clean)
        .unwrap_or_else(|| "hive-c0re refused the request without saying why".into());
    let _ = writeln!(err, "hivectl: {message}");
    reply
        .response
        .code
        .map_or(exit::REFUSED, ErrorCode::exit_status)
}

fn unreachable(err: &mut dyn Write, e: &ClientError) -> u8 {
    let _ = writeln!(err, "hivectl: {}", chain(e));
    exit::UNREACHABLE
}

fn warn_if_newer(err: &mut dyn Write, reply: &Reply) {
    if reply.is_newer_than_us() {
        let _ = writeln!(
            err,
            "hivectl: warning: hive-c0re speaks host.sock version {}, this hivectl knows \
             version {VERSION}; carrying on (update hivectl to see every field)",
            reply.response.version
        );
    }
}
