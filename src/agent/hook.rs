//! `hive-agent hook`: the command an agent's Claude Code settings run for
//! its lifecycle hooks. It reads the hook's JSON from stdin and forwards
//! it whole to the agent socket (verb `hook_event`).
//!
//! It must never block or break Claude Code: the whole run (stdin, connect,
//! answer) is bounded by [`BUDGET`]; whatever goes wrong — the hive
//! unreachable, a refused payload — it exits 0 with nothing on stdout (a
//! hook's stdout can become Claude's context) and one note on stderr.

use std::time::Duration;

use tokio::io::{AsyncRead, AsyncReadExt};

use super::socket::AgentSocket;
use crate::wire::agent::{MAX_HOOK_PAYLOAD, Request, Response};

/// The most one hook run takes, end to end.
pub const BUDGET: Duration = Duration::from_millis(400);

/// Set (to anything) in the environment of a harness turn's Claude, so its
/// hooks are sent marked `headless`: the daemon then leaves that session's
/// transcript alone (`report_turn` counts the turn). A Claude started by
/// hand has no such variable, and its transcript is counted.
pub const ENV_HEADLESS_TURN: &str = "HIVE_HEADLESS_TURN";

/// Is this hook run from a harness turn's Claude ([`ENV_HEADLESS_TURN`])?
pub fn headless() -> bool {
    std::env::var_os(ENV_HEADLESS_TURN).is_some()
}

/// Forward one hook payload read from `stdin` (marked `headless` if so);
/// `Err` is the note for stderr. Never longer than [`BUDGET`].
pub async fn forward(
    socket: &AgentSocket,
    stdin: impl AsyncRead + Unpin,
    headless: bool,
) -> Result<(), String> {
    let started = tokio::time::Instant::now();
    let mut bytes = Vec::new();
    let mut limited = stdin.take(MAX_HOOK_PAYLOAD as u64 + 1);
    match tokio::time::timeout(BUDGET / 2, limited.read_to_end(&mut bytes)).await {
        Ok(Ok(_)) => {}
        Ok(Err(e)) => return Err(format!("cannot read the hook payload from stdin: {e}")),
        Err(_) => return Err("stdin did not close in time; the hook was not forwarded".into()),
    }
    if bytes.len() > MAX_HOOK_PAYLOAD {
        return Err(format!(
            "the hook payload is over {MAX_HOOK_PAYLOAD} bytes; not forwarded"
        ));
    }
    let payload = String::from_utf8(bytes)
        .map_err(|_| "the hook payload is not UTF-8; not forwarded".to_owned())?;
    let left = BUDGET.saturating_sub(started.elapsed());
    match socket
        .call(&Request::HookEvent { payload, headless }, left)
        .await
    {
        Ok(Response::Ok { .. }) => Ok(()),
        Ok(Response::Err { message, .. }) => Err(format!("the hive refused the hook: {message}")),
        Ok(other) => Err(format!("unexpected answer to hook_event: {other:?}")),
        Err(e) => Err(format!("hook not delivered: {e}")),
    }
}

/// The lifecycle events the hive subscribes to. Every hook is a process on
/// the agent's critical path, so the tool events are left out.
pub const EVENTS: [&str; 6] = [
    "SessionStart",
    "UserPromptSubmit",
    "Notification",
    "Stop",
    "StopFailure",
    "SessionEnd",
];

/// Claude Code settings (for `--settings`) that run `<harness> hook` on
/// each of [`EVENTS`] and set [`CLAUDE_ENV`]. Claude runs a hook command through a shell, so the
/// path is single-quoted.
pub fn settings(harness: &std::path::Path) -> serde_json::Value {
    let path = harness.to_string_lossy().replace('\'', r"'\''");
    let entry = serde_json::json!([{
        "hooks": [{"type": "command", "command": format!("'{path}' hook"), "timeout": 5}]
    }]);
    let hooks: serde_json::Map<String, serde_json::Value> = EVENTS
        .iter()
        .map(|e| ((*e).to_owned(), entry.clone()))
        .collect();
    let env: serde_json::Map<String, serde_json::Value> = CLAUDE_ENV
        .iter()
        .map(|(k, v)| ((*k).to_owned(), (*v).into()))
        .collect();
    serde_json::json!({ "env": env, "hooks": hooks })
}

/// The variables every Claude in the container gets from its settings
/// (issue 46): no non-essential traffic (telemetry, error reports, update
/// checks, release notes) — the model gateway serves only the Messages
/// API's routes, and nothing else of Claude's may leave the container.
pub const CLAUDE_ENV: [(&str, &str); 1] = [("CLAUDE_CODE_DISABLE_NONESSENTIAL_TRAFFIC", "1")];

#[cfg(test)]
#[path = "hook_tests.rs"]
mod tests;
