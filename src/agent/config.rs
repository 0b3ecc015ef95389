//! `hive-agent run`'s configuration: a JSON file (strict: an unknown key
//! is an error naming it) and a few environment overrides.
//!
//! File: `--config PATH`, env `HIVE_AGENT_CONFIG`, else
//! `/etc/hive-agent/config.json` when it exists, else the defaults.
//! Env `HIVE_CLAUDE_COMMAND` (a JSON array of strings) replaces
//! `claude_command`, so a unit drop-in or a test can point the turn loop at
//! another program without a file.

use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

pub const DEFAULT_CONFIG: &str = "/etc/hive-agent/config.json";
pub const ENV_CONFIG: &str = "HIVE_AGENT_CONFIG";
pub const ENV_CLAUDE_COMMAND: &str = "HIVE_CLAUDE_COMMAND";

/// The turn loop's settings.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct RunConfig {
    /// The whole argv of a turn, used as given (the prompt goes to its
    /// stdin). Absent: the real `claude` CLI with the arguments the
    /// harness builds (see [`super::claude`]).
    pub claude_command: Option<Vec<String>>,
    /// The `claude` program when `claude_command` is absent.
    pub claude_program: String,
    /// `--model` for the default command.
    pub model: Option<String>,
    /// The agent's state directory (Claude's config and login live in
    /// `<state_dir>/claude`).
    pub state_dir: PathBuf,
    /// A turn's deadline; past it the command's process group is killed
    /// and the messages are requeued.
    pub turn_timeout_seconds: u64,
    /// On SIGTERM, how long the current turn may still run.
    pub stop_grace_seconds: u64,
    /// The first pause after a failed turn; doubled per failure up to
    /// `max_backoff_seconds`, reset by a good turn.
    pub retry_backoff_seconds: u64,
    pub max_backoff_seconds: u64,
    /// One `recv` long poll (the daemon caps it).
    pub recv_wait_seconds: u64,
    /// The most messages one turn takes.
    pub max_messages: u32,
    /// How many times a cut turn (Claude died, the deadline, the harness
    /// or its container restarted) is resumed in its own session before
    /// it fails as a failed turn does and its next attempt starts a new
    /// conversation (see [`super::resume`]). 0: never resumed.
    pub max_resumes: u32,
    /// The working directory of the turn's command (default: the state
    /// directory).
    pub workdir: Option<PathBuf>,
}

impl Default for RunConfig {
    fn default() -> Self {
        Self {
            claude_command: None,
            claude_program: "claude".into(),
            model: None,
            state_dir: PathBuf::from("/var/lib/hive"),
            turn_timeout_seconds: 30 * 60,
            stop_grace_seconds: 60,
            retry_backoff_seconds: 5,
            max_backoff_seconds: 300,
            recv_wait_seconds: 30,
            max_messages: 20,
            max_resumes: 2,
            workdir: None,
        }
    }
}

/// Why the configuration cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read {path}: {source}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("{path} is not a valid hive-agent config: {source}")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    #[error("{var} must be a JSON array of strings (the argv, no shell): {source}")]
    Command {
        var: &'static str,
        #[source]
        source: serde_json::Error,
    },
    #[error("the claude command is empty; give at least the program")]
    EmptyCommand,
}

impl RunConfig {
    /// Load from `path` (or the default path when it exists), then apply
    /// `claude_command_env` (the value of `HIVE_CLAUDE_COMMAND`).
    pub fn load(
        path: Option<&Path>,
        claude_command_env: Option<&str>,
    ) -> Result<Self, ConfigError> {
        let default = Path::new(DEFAULT_CONFIG);
        let path = path.or_else(|| default.exists().then_some(default));
        let mut config = match path {
            None => Self::default(),
            Some(path) => {
                let text = std::fs::read_to_string(path).map_err(|source| ConfigError::Read {
                    path: path.to_owned(),
                    source,
                })?;
                serde_json::from_str(&text).map_err(|source| ConfigError::Parse {
                    path: path.to_owned(),
                    source,
                })?
            }
        };
        if let Some(value) = claude_command_env {
            config.claude_command =
                Some(
                    serde_json::from_str(value).map_err(|source| ConfigError::Command {
                        var: ENV_CLAUDE_COMMAND,
                        source,
                    })?,
                );
        }
        if config.claude_command.as_ref().is_some_and(Vec::is_empty) {
            return Err(ConfigError::EmptyCommand);
        }
        Ok(config)
    }

    pub fn turn_timeout(&self) -> Duration {
        Duration::from_secs(self.turn_timeout_seconds)
    }

    pub fn stop_grace(&self) -> Duration {
        Duration::from_secs(self.stop_grace_seconds)
    }

    /// Claude Code's config directory: its login survives rebuilds
    /// because the state directory does.
    pub fn claude_config_dir(&self) -> PathBuf {
        self.state_dir.join("claude")
    }

    pub fn workdir(&self) -> PathBuf {
        self.workdir
            .clone()
            .unwrap_or_else(|| self.state_dir.clone())
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
