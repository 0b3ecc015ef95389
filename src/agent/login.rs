//! Whether the agent can talk to Claude: its login, as the harness sees it
//! in the agent's state directory.
//!
//! Logged in = Claude Code's credentials file `<CLAUDE_CONFIG_DIR>/
//! .credentials.json` exists and is not empty (what `claude login` writes
//! on Linux), or the harness's environment carries an API key or OAuth
//! token (`ANTHROPIC_API_KEY`, `CLAUDE_CODE_OAUTH_TOKEN`, e.g. from a unit
//! drop-in). The harness checks this between turns — a `stat(2)` of one
//! file in its own container — and reports only changes to the daemon,
//! which turns them into `needs_login` on the roster and `NeedsLogin` /
//! `LoggedIn` events to the manager. Rejected: the daemon watching every
//! agent's state directory with inotify, which would make the host parse
//! files an untrusted container writes.

use std::path::Path;

/// The file `claude login` writes in Claude's config directory.
pub const CREDENTIALS_FILE: &str = ".credentials.json";
/// Environment variables that log Claude Code in without a file.
pub const TOKEN_VARS: &[&str] = &["ANTHROPIC_API_KEY", "CLAUDE_CODE_OAUTH_TOKEN"];

/// Whether Claude has credentials: a non-empty credentials file in
/// `config_dir`, or a non-empty token in `env`.
pub fn logged_in(config_dir: &Path, env: impl Fn(&str) -> Option<String>) -> bool {
    let file = std::fs::metadata(config_dir.join(CREDENTIALS_FILE))
        .map(|m| m.is_file() && m.len() > 0)
        .unwrap_or(false);
    file || TOKEN_VARS
        .iter()
        .any(|v| env(v).is_some_and(|t| !t.trim().is_empty()))
}

#[cfg(test)]
#[path = "login_tests.rs"]
mod tests;
