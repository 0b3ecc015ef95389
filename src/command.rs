//! Running an operator-configured external command: an argv from the
//! config plus arguments the hive appends, never a shell, killed if its
//! caller gives up, stdout captured, failures reported with stderr's tail.
//!
//! Used by `update_meta_inputs` (`nix_command`), the nixos profile's
//! system builds (`nixos_build_command`) and the operator's `notify_command`;
//! [`output`] (a child fed its input, its output collected) also by the
//! config repos' git runs. Rejected: `sh -c
//! "<configured string>"`, which would make every appended value (an agent
//! name, a commit ref) a piece of shell syntax.

use std::process::Stdio;

/// Why a configured command did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum CommandError {
    /// The config has no command for this job: the operator sets `setting`.
    #[error("no command is configured for this; set `{setting}` in the config")]
    NotConfigured { setting: &'static str },
    /// The program could not be started (missing, not executable).
    /// (The cause is in the message only, so a chain walker prints it once.)
    #[error("cannot run {program:?}: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    /// It ran and exited unsuccessfully; the last lines of its stderr.
    #[error("{program} failed ({status}): {stderr}")]
    Failed {
        program: String,
        status: String,
        stderr: String,
    },
}

/// Run `argv` (from config setting `setting`) with `extra` appended; its
/// stdout on success.
pub async fn run(
    setting: &'static str,
    argv: &[String],
    extra: &[&str],
) -> Result<String, CommandError> {
    run_fed(setting, argv, extra, None).await
}

/// [`run`], with `input` written to its stdin (then closed) when given.
pub async fn run_fed(
    setting: &'static str,
    argv: &[String],
    extra: &[&str],
    input: Option<&[u8]>,
) -> Result<String, CommandError> {
    let (program, args) = argv
        .split_first()
        .ok_or(CommandError::NotConfigured { setting })?;
    let spawn_error = |error| CommandError::Spawn {
        program: program.clone(),
        error,
    };
    #[allow(clippy::disallowed_methods)] // this module is the seam for configured commands
    let mut cmd = tokio::process::Command::new(program);
    cmd.args(args).args(extra);
    // A command that exits without reading its input is judged by its exit
    // status, not by the broken pipe.
    let out = output(cmd, input, |_| Ok(())).await.map_err(spawn_error)?;
    if !out.status.success() {
        let stderr = String::from_utf8_lossy(&out.stderr);
        let tail: Vec<&str> = stderr.lines().rev().take(5).collect();
        return Err(CommandError::Failed {
            program: program.clone(),
            status: out.status.to_string(),
            stderr: tail.into_iter().rev().collect::<Vec<_>>().join(" / "),
        });
    }
    Ok(String::from_utf8_lossy(&out.stdout).into_owned())
}

/// Run `cmd` with stdout and stderr captured, `input` on its stdin (then
/// closed; else stdin is `/dev/null`), killed if the future is dropped; its
/// output once it exits. A failed write of the input goes to `on_write`,
/// whose error ends the run.
pub async fn output(
    mut cmd: tokio::process::Command,
    input: Option<&[u8]>,
    on_write: impl FnOnce(std::io::Error) -> std::io::Result<()>,
) -> std::io::Result<std::process::Output> {
    cmd.stdin(if input.is_some() {
        Stdio::piped()
    } else {
        Stdio::null()
    })
    .stdout(Stdio::piped())
    .stderr(Stdio::piped())
    .kill_on_drop(true);
    let mut child = cmd.spawn()?;
    if let (Some(input), Some(mut stdin)) = (input, child.stdin.take()) {
        use tokio::io::AsyncWriteExt as _;
        if let Err(e) = stdin.write_all(input).await {
            on_write(e)?;
        }
    }
    child.wait_with_output().await
}

/// The last non-empty line of a command's output, trimmed.
pub fn last_line(stdout: &str) -> &str {
    stdout
        .lines()
        .rev()
        .find(|l| !l.trim().is_empty())
        .unwrap_or("")
        .trim()
}

#[cfg(test)]
#[path = "command_tests.rs"]
mod tests;
