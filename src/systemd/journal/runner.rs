//! Running the reader process: the seam, the limits, the follow stream.
//!
//! [`Spawn`] is the only place a process is created: it turns argv into a
//! `tokio::process::Command` (never a shell). Everything around it — stdio,
//! the timeout, the output cap, killing and reaping, stderr capture — is
//! shared code here, so tests that swap `journalctl` for `sleep`, `yes` or
//! `cat` exercise exactly the code production runs. Rejected: a fake that
//! returns canned bytes without a process, which would leave the kill and
//! cap paths untested.

use std::ffi::OsString;
use std::fmt;
use std::io;
use std::path::{Path, PathBuf};
use std::process::{ExitStatus, Stdio};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncRead, AsyncReadExt, BufReader};
use tokio::process::{Child, ChildStderr, Command};
use tokio::sync::mpsc;
use tokio::task::JoinHandle;

use super::entry::JournalEntry;

/// How much of the reader's stderr is kept for an error message.
const STDERR_KEEP: usize = 4096;

/// Builds the command for given arguments. Implementations only choose the
/// program (and may ignore or record the arguments); stdio and killing are
/// set by the caller.
pub trait Spawn: fmt::Debug + Send + Sync + 'static {
    fn command(&self, args: &[OsString]) -> Command;
    /// The program's name, for error messages.
    fn program(&self) -> &Path;
}

/// A boxed seam is a seam, so the daemon can choose one at run time.
impl<T: Spawn + ?Sized> Spawn for Box<T> {
    fn command(&self, args: &[OsString]) -> Command {
        (**self).command(args)
    }

    fn program(&self) -> &Path {
        (**self).program()
    }
}

/// The real reader: `journalctl` (found on `PATH` unless a path is given).
#[derive(Debug, Clone)]
pub struct Journalctl {
    program: PathBuf,
}

impl Journalctl {
    pub fn new(program: impl Into<PathBuf>) -> Self {
        Self {
            program: program.into(),
        }
    }
}

impl Default for Journalctl {
    fn default() -> Self {
        Self::new("journalctl")
    }
}

impl Spawn for Journalctl {
    fn command(&self, args: &[OsString]) -> Command {
        #[allow(clippy::disallowed_methods)] // the journal's one process seam
        let mut command = Command::new(&self.program);
        command.args(args);
        // No pager, no colours, whatever the daemon's environment says.
        command.env("SYSTEMD_PAGER", "").env("SYSTEMD_COLORS", "0");
        command
    }

    fn program(&self) -> &Path {
        &self.program
    }
}

/// Limits on one read. Past either, the process is killed.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Limits {
    /// Wall-clock time from spawn to exit.
    pub timeout: Duration,
    /// Bytes of stdout; for a follow, bytes of one line.
    pub max_output: usize,
}

impl Default for Limits {
    /// 10 s and 4 MiB: 100 JSON entries are about 150 KiB, so only a query
    /// without `lines` over a big journal gets near either.
    fn default() -> Self {
        Self {
            timeout: Duration::from_secs(10),
            max_output: 4 << 20,
        }
    }
}

/// Why a journal read failed (its filters were checked when the query was
/// built). Each variant is a different answer to the requester.
#[derive(Debug, thiserror::Error)]
pub enum JournalError {
    /// The program could not be started (not installed, not executable):
    /// the host is misconfigured; the requester can only retry later.
    #[error("cannot start {}", program.display())]
    Spawn {
        program: PathBuf,
        #[source]
        source: io::Error,
    },
    /// The read took too long and was killed: narrow it (`lines`, `since`,
    /// `unit`).
    #[error(
        "{} did not finish within {} s and was killed; narrow the query (fewer lines, a since, a unit)",
        program.display(), timeout.as_secs_f32()
    )]
    TimedOut { program: PathBuf, timeout: Duration },
    /// The read wrote more than the cap and was killed: narrow it.
    #[error(
        "{} wrote more than {limit} bytes and was killed; narrow the query (fewer lines, a since, a unit)",
        program.display()
    )]
    OutputTooLarge { program: PathBuf, limit: usize },
    /// The program ran and refused the query (a bad regex or time, an
    /// unknown machine): its own words are in `stderr`; relay them.
    #[error("{} failed ({status}): {stderr}", program.display())]
    Refused {
        program: PathBuf,
        status: ExitStatus,
        stderr: String,
    },
    /// Reading its pipes failed.
    #[error("reading the output of {}", program.display())]
    Io {
        program: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn spawn_piped(spawn: &dyn Spawn, args: &[OsString]) -> Result<Child, JournalError> {
    let mut command = spawn.command(args);
    command
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .kill_on_drop(true);
    command.spawn().map_err(|source| JournalError::Spawn {
        program: spawn.program().to_path_buf(),
        source,
    })
}

/// Keep the first [`STDERR_KEEP`] bytes of stderr and drain the rest, so a
/// chatty child never blocks on a full pipe.
fn capture_stderr(stderr: Option<ChildStderr>) -> JoinHandle<String> {
    tokio::spawn(async move {
        let mut kept = Vec::new();
        if let Some(mut stderr) = stderr {
            let mut chunk = [0u8; 1024];
            while let Ok(n) = stderr.read(&mut chunk).await {
                if n == 0 {
                    break;
                }
                let room = STDERR_KEEP.saturating_sub(kept.len());
                kept.extend_from_slice(&chunk[..n.min(room)]);
            }
        }
        String::from_utf8_lossy(&kept).trim().to_owned()
    })
}

/// Run to completion within `limits` and return everything on stdout.
pub async fn run_to_end(
    spawn: &dyn Spawn,
    args: &[OsString],
    limits: Limits,
) -> Result<Vec<u8>, JournalError> {
    let program = spawn.program().to_path_buf();
    let mut child = spawn_piped(spawn, args)?;
    let stderr = capture_stderr(child.stderr.take());
    let stdout = child.stdout.take();
    let outcome = tokio::time::timeout(limits.timeout, async {
        let output = read_capped(stdout, limits.max_output).await;
        match output {
            Ok(Some(bytes)) => Ok((bytes, child.wait().await)),
            Ok(None) => Err(JournalError::OutputTooLarge {
                program: program.clone(),
                limit: limits.max_output,
            }),
            Err(source) => Err(JournalError::Io {
                program: program.clone(),
                source,
            }),
        }
    })
    .await;
    let (output, status) = match outcome {
        Ok(Ok(done)) => done,
        Ok(Err(error)) => {
            kill_and_reap(&mut child).await;
            return Err(error);
        }
        Err(_elapsed) => {
            kill_and_reap(&mut child).await;
            return Err(JournalError::TimedOut {
                program,
                timeout: limits.timeout,
            });
        }
    };
    let status = status.map_err(|source| JournalError::Io {
        program: program.clone(),
        source,
    })?;
    if status.success() {
        Ok(output)
    } else {
        let stderr = stderr.await.unwrap_or_default();
        Err(JournalError::Refused {
            program,
            status,
            stderr,
        })
    }
}

/// Read to EOF; `None` as soon as more than `max` bytes arrived.
async fn read_capped(
    stdout: Option<impl AsyncRead + Unpin>,
    max: usize,
) -> io::Result<Option<Vec<u8>>> {
    let Some(stdout) = stdout else {
        return Ok(Some(Vec::new()));
    };
    let mut output = Vec::new();
    // One byte more than allowed tells "exactly max" from "too much".
    let limit = u64::try_from(max).unwrap_or(u64::MAX).saturating_add(1);
    stdout.take(limit).read_to_end(&mut output).await?;
    Ok((output.len() <= max).then_some(output))
}

async fn kill_and_reap(child: &mut Child) {
    // Already exited is fine: kill() then only reaps.
    let _ = child.kill().await;
}

/// Entries from a running `journalctl --follow`, in journal order. Dropping
/// it (or [`Follow::close`]) kills the process.
#[derive(Debug)]
pub struct Follow {
    entries: mpsc::Receiver<Result<JournalEntry, JournalError>>,
    task: JoinHandle<()>,
    pid: Option<u32>,
}

impl Follow {
    /// The next entry; `None` once the process ended (an error, if it
    /// failed, comes first).
    pub async fn next(&mut self) -> Option<Result<JournalEntry, JournalError>> {
        self.entries.recv().await
    }

    /// The reader's process id while it runs (for logs and tests).
    pub fn pid(&self) -> Option<u32> {
        self.pid
    }

    /// Stop following: kill the process and wait until it is reaped.
    pub async fn close(self) {
        let Self { entries, task, .. } = self;
        drop(entries);
        let _ = task.await;
    }
}

/// Start a follow; `limits.max_output` caps each line, the timeout is not
/// used (a follow runs until the consumer stops).
pub fn follow(
    spawn: &dyn Spawn,
    args: &[OsString],
    limits: Limits,
) -> Result<Follow, JournalError> {
    let program = spawn.program().to_path_buf();
    let mut child = spawn_piped(spawn, args)?;
    let pid = child.id();
    let stderr = capture_stderr(child.stderr.take());
    let stdout = child.stdout.take();
    let (tx, rx) = mpsc::channel(64);
    let task = tokio::spawn(async move {
        let Some(stdout) = stdout else { return };
        let mut lines = BufReader::new(stdout);
        let closed_tx = tx.clone();
        let ended = tokio::select! {
            ended = pump(&mut lines, &tx, &program, limits.max_output) => ended,
            () = closed_tx.closed() => Pump::ConsumerGone,
        };
        match ended {
            Pump::Eof => {
                let status = child.wait().await;
                let stderr = stderr.await.unwrap_or_default();
                let error = match status {
                    Ok(status) if status.success() => None,
                    Ok(status) => Some(JournalError::Refused {
                        program,
                        status,
                        stderr,
                    }),
                    Err(source) => Some(JournalError::Io { program, source }),
                };
                if let Some(error) = error {
                    let _ = tx.send(Err(error)).await;
                }
            }
            Pump::Failed(error) => {
                kill_and_reap(&mut child).await;
                let _ = tx.send(Err(error)).await;
            }
            Pump::ConsumerGone => kill_and_reap(&mut child).await,
        }
    });
    Ok(Follow {
        entries: rx,
        task,
        pid,
    })
}

enum Pump {
    Eof,
    Failed(JournalError),
    ConsumerGone,
}

async fn pump(
    lines: &mut (impl AsyncBufReadExt + Unpin),
    tx: &mpsc::Sender<Result<JournalEntry, JournalError>>,
    program: &Path,
    max_line: usize,
) -> Pump {
    let limit = u64::try_from(max_line)
        .unwrap_or(u64::MAX)
        .saturating_add(1);
    let mut line = Vec::new();
    loop {
        line.clear();
        let read = (&mut *lines).take(limit).read_until(b'\n', &mut line).await;
        match read {
            Ok(0) => return Pump::Eof,
            Ok(_) if line.len() > max_line => {
                return Pump::Failed(JournalError::OutputTooLarge {
                    program: program.to_path_buf(),
                    limit: max_line,
                });
            }
            Ok(_) => {}
            Err(source) => {
                return Pump::Failed(JournalError::Io {
                    program: program.to_path_buf(),
                    source,
                });
            }
        }
        if !line.ends_with(b"\n") {
            // A partial last line at EOF: the process is ending anyway.
            continue;
        }
        match JournalEntry::from_json_line(&line) {
            Ok(entry) => {
                if tx.send(Ok(entry)).await.is_err() {
                    return Pump::ConsumerGone;
                }
            }
            Err(error) => tracing::warn!(%error, "skipping a journal line that is not JSON"),
        }
    }
}

#[cfg(test)]
#[path = "runner_tests.rs"]
mod tests;
