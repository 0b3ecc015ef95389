//! `hivectl`, the operator's command line: parse, call host.sock, render,
//! map the outcome to an exit status.
//!
//! - [`args`]: the clap definition and the request each subcommand sends.
//! - [`render`]: tables and row lines for humans.
//!
//! Output contract: a table (or nothing, for a write verb) on stdout by
//! default; with `--json`, each line hive-c0re sent, byte for byte, so
//! scripts see exactly what the daemon said (for `watch` that includes the
//! ack line). Errors go to stderr as `hivectl: <message>`. Exit status:
//! [`exit::OK`], [`exit::REFUSED`], [`exit::USAGE`] (clap's own), and
//! [`exit::UNREACHABLE`].
//!
//! `HIVECTL_TIMEOUT_MS` (or the hidden `--timeout-ms`) replaces the 5 s
//! budget of a call; it exists so tests of a silent daemon finish quickly.
//!
//! Decision: `run` takes its output streams as parameters and returns a
//! status instead of exiting, so the binary's `main` stays three lines.
//! Rejected alternative: `process::exit` from inside the command handlers,
//! which skips destructors and makes the outcomes untestable in-process.

pub mod args;
pub mod render;

use std::io::{self, Write};
use std::path::Path;

use clap::CommandFactory;

use crate::client::{Client, ClientError, Reply};
use crate::errors::chain;
use crate::wire::host::{HostRequest, VERSION};
use args::{Action, Cli};

/// hivectl's exit statuses.
pub mod exit {
    /// Done.
    pub const OK: u8 = 0;
    /// hive-c0re answered `ok:false` (or a local file could not be written).
    pub const REFUSED: u8 = 1;
    /// Bad command line (clap exits with this itself).
    pub const USAGE: u8 = 2;
    /// hive-c0re could not be reached or did not answer properly.
    pub const UNREACHABLE: u8 = 3;
}

/// Run one parsed command line, writing to `out` and `err`; returns the
/// exit status.
pub fn run(cli: Cli, out: &mut dyn Write, err: &mut dyn Write) -> u8 {
    let mut client = Client::new(&cli.socket);
    if let Some(ms) = cli.timeout_ms {
        client = client.with_budget(std::time::Duration::from_millis(ms));
    }
    match cli.command.action() {
        Action::Call(request) => call(&client, &request, cli.json, out, err),
        Action::Stream(request) => stream(&client, &request, cli.json, out, err),
        Action::Completions(shell) => {
            // Into a buffer first: clap_complete panics on a failed write
            // (e.g. `hivectl completions bash | head`).
            let mut script = Vec::new();
            clap_complete::generate(shell, &mut Cli::command(), "hivectl", &mut script);
            emit(out, &String::from_utf8_lossy(&script), err).unwrap_or(exit::OK)
        }
        Action::Man(dir) => man(&dir, err),
    }
}

fn call(
    client: &Client,
    request: &HostRequest,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let reply = match client.call(request) {
        Ok(reply) => reply,
        Err(e) => return unreachable(err, &e),
    };
    warn_if_newer(err, &reply);
    let text = if json {
        format!("{}\n", reply.line)
    } else if reply.response.ok {
        render::answer(request, &reply.response)
    } else {
        String::new()
    };
    if let Some(status) = emit(out, &text, err) {
        return status;
    }
    if reply.response.ok {
        exit::OK
    } else {
        refused(err, &reply)
    }
}

fn stream(
    client: &Client,
    request: &HostRequest,
    json: bool,
    out: &mut dyn Write,
    err: &mut dyn Write,
) -> u8 {
    let stream = match client.stream(request) {
        Ok(stream) => stream,
        Err(e) => return unreachable(err, &e),
    };
    for (n, item) in stream.enumerate() {
        let reply = match item {
            Ok(reply) => reply,
            Err(e) => return unreachable(err, &e),
        };
        if n == 0 {
            warn_if_newer(err, &reply);
        }
        let text = if json {
            format!("{}\n", reply.line)
        } else {
            let rows = reply.response.agent_statuses.as_deref().unwrap_or(&[]);
            let entries = reply.response.entries.as_deref().unwrap_or(&[]);
            let mut text: String = rows.iter().map(render::status_line).collect();
            text.push_str(&render::journal_lines(entries));
            text
        };
        if let Some(status) = emit(out, &text, err) {
            return status;
        }
        if !reply.response.ok {
            return refused(err, &reply);
        }
    }
    let _ = writeln!(
        err,
        "hivectl: hive-c0re closed the stream on {}",
        client.path().display()
    );
    exit::UNREACHABLE
}

fn man(dir: &Path, err: &mut dyn Write) -> u8 {
    let written =
        std::fs::create_dir_all(dir).and_then(|()| clap_mangen::generate_to(Cli::command(), dir));
    match written {
        Ok(()) => exit::OK,
        Err(e) => {
            let _ = writeln!(
                err,
                "hivectl: cannot write manual pages to {}: {e}",
                dir.display()
            );
            exit::REFUSED
        }
    }
}

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

fn refused(err: &mut dyn Write, reply: &Reply) -> u8 {
    let message = reply
        .response
        .error
        .as_deref()
        .map(render::clean)
        .unwrap_or_else(|| "hive-c0re refused the request without saying why".into());
    let _ = writeln!(err, "hivectl: {message}");
    exit::REFUSED
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
