//! Running an operator-configured external command: an argv from the
//! config plus arguments the hive appends, never a shell, killed if its
//! caller gives up, stdout captured, failures reported with stderr's tail.
//!
//! Used by the approval actions ([`crate::service::approvals`]) and the
//! nixos profile's system builder. Rejected: `sh -c "<configured string>"`,
//! which would make every appended value (an agent name, a commit ref) a
//! piece of shell syntax.

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
    let (program, args) = argv
        .split_first()
        .ok_or(CommandError::NotConfigured { setting })?;
    #[allow(clippy::disallowed_methods)] // this module is the seam for configured commands
    let out = tokio::process::Command::new(program)
        .args(args)
        .args(extra)
        .stdin(Stdio::null())
        .kill_on_drop(true)
        .output()
        .await
        .map_err(|error| CommandError::Spawn {
            program: program.clone(),
            error,
        })?;
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
mod tests {
    use super::*;

    fn argv(v: &[&str]) -> Vec<String> {
        v.iter().map(|s| (*s).to_owned()).collect()
    }

    #[tokio::test]
    async fn appended_values_are_arguments_never_shell_syntax() {
        let out = run("x", &argv(&["/bin/echo"]), &["a;b", "$(id)", "--x"])
            .await
            .unwrap();
        assert_eq!(out, "a;b $(id) --x\n");
    }

    #[tokio::test]
    async fn a_failing_command_reports_its_status_and_stderr_tail() {
        let err = run("x", &argv(&["/bin/ls", "/nonexistent-dir"]), &[])
            .await
            .unwrap_err();
        let text = err.to_string();
        assert!(
            text.starts_with("/bin/ls failed (exit status: 2): "),
            "{text}"
        );
        assert!(text.contains("nonexistent-dir"), "{text}");
    }

    #[tokio::test]
    async fn an_empty_argv_names_the_setting_to_fill_in() {
        let err = run("approval_command", &[], &[]).await.unwrap_err();
        assert_eq!(
            err.to_string(),
            "no command is configured for this; set `approval_command` in the config"
        );
    }

    #[test]
    fn the_last_line_skips_trailing_blank_lines() {
        assert_eq!(
            last_line("a\n/nix/store/x-system\n\n"),
            "/nix/store/x-system"
        );
    }
}
