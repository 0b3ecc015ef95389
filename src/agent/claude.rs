//! The Claude command of a turn: its argv, its environment, running it
//! with a deadline, and what its `stream-json` output says.
//!
//! The default argv runs the real CLI non-interactively:
//! `claude -p --output-format stream-json --verbose --mcp-config
//! <state>/mcp.json --strict-mcp-config --allowedTools <list> [--model M]
//! [--resume <session>]`, the prompt on stdin (no argv length limit, never
//! a shell). `mcp.json` names this same binary's `mcp` and `mcp-bash`
//! servers; `--allowedTools` is the tool groups' expansion
//! ([`super::tools::Selection::allowed_tools`]), so the agent's tools run
//! without a permission prompt and nothing else is pre-approved.
//! `--resume` continues the agent's session (its id is read from the
//! stream as soon as `system`/`init` names it and kept in
//! `<state>/claude-session`), so an agent keeps its context across turns;
//! a cut turn keeps it too and is resumed in it (see the `resume` module:
//! only a session Claude says it cannot resume, or a turn past its resume
//! limit, starts a new conversation).
//!
//! The environment is the harness's own, then the agent's variables from
//! its reviewed `agent.json` (`HIVE_CLAUDE_ENV`), then the hive's:
//! `CLAUDE_CONFIG_DIR=<state>/claude` (the login lives in the state
//! directory, which survives rebuilds; unless set before), `HIVE_AGENT_SOCKET`,
//! `HIVE_TURN_CALLS` (the attempt's call log, for `hive-agent call` from
//! Claude's shell; `mcp.json` names it to the MCP server too), the egress
//! proxy's variables, and, for stand-in commands, `HIVE_MCP_CONFIG`
//! and `HIVE_ALLOWED_TOOLS`.

use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use serde_json::{Value, json};
use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::sync::watch;

use super::accounting::TurnAccount;
use super::config::RunConfig;
use super::idempotency::ENV_TURN_CALLS;
use super::process;
use super::socket::ENV_SOCKET;
use super::tools::{BASH_SERVER_NAME, ENV_CAPABILITIES, ENV_TOOL_GROUPS, SERVER_NAME, Selection};

pub const ENV_MCP_CONFIG: &str = "HIVE_MCP_CONFIG";
pub const ENV_ALLOWED_TOOLS: &str = "HIVE_ALLOWED_TOOLS";
pub const ENV_CLAUDE_CONFIG_DIR: &str = "CLAUDE_CONFIG_DIR";
/// Where Claude Code sends its API requests.
pub const ENV_BASE_URL: &str = "ANTHROPIC_BASE_URL";
/// A bearer credential for Claude Code (the harness's sentinel).
pub const ENV_AUTH_TOKEN: &str = "ANTHROPIC_AUTH_TOKEN";

/// This container's host name (`h-<agent>`), for the sentinel; empty when
/// unreadable.
fn sentinel_host() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_owned())
        .unwrap_or_default()
}
/// What Claude Code prints, on stderr and in its `result` event, when it
/// has no conversation to resume (Claude Code 2.x): such a session starts
/// a new conversation (the `resume` module).
pub const NO_CONVERSATION: &str = "No conversation found with session ID";
/// The longest model name reported to the daemon.
const MAX_MODEL: usize = 100;

/// Everything a turn's command is built from.
#[derive(Debug, Clone)]
pub struct Launch {
    pub config: RunConfig,
    pub selection: Selection,
    /// This binary (the MCP servers' command).
    pub harness: PathBuf,
    pub socket: PathBuf,
    /// The loopback port of this harness's egress forwarder: Claude gets
    /// `HTTPS_PROXY`/`HTTP_PROXY` pointing at it (none: no proxy set).
    pub egress_port: Option<u16>,
    /// The agent's own variables from its reviewed `agent.json`
    /// (`HIVE_CLAUDE_ENV`, [`crate::wire::claude_env`]); the hive's own
    /// variables come after them, so none can be replaced.
    pub agent_env: Vec<(String, String)>,
}

impl Launch {
    pub fn mcp_config_path(&self) -> PathBuf {
        self.config.state_dir.join("mcp.json")
    }

    /// The `--settings` file installing the hive's lifecycle hooks
    /// (`hive-agent hook`, see [`super::hook`]).
    pub fn hook_settings_path(&self) -> PathBuf {
        self.config.state_dir.join("hook-settings.json")
    }

    /// The attempt's call log (the idempotency keys' counts, see
    /// [`super::idempotency`]).
    pub fn calls_path(&self) -> PathBuf {
        super::idempotency::calls_path(&self.config.state_dir)
    }

    pub fn session_path(&self) -> PathBuf {
        self.config.state_dir.join("claude-session")
    }

    /// The `--mcp-config` document: the `hyperhive` server, and `bash`
    /// when the execution group is granted.
    pub fn mcp_config(&self) -> Value {
        let groups: Vec<&str> = self.selection.groups.iter().map(|g| g.as_str()).collect();
        let caps: Vec<&str> = self
            .selection
            .capabilities
            .iter()
            .map(|c| c.as_str())
            .collect();
        let socket = self.socket.to_string_lossy();
        let harness = self.harness.to_string_lossy();
        let env = json!({
            ENV_SOCKET: socket,
            ENV_TOOL_GROUPS: groups.join(","),
            ENV_CAPABILITIES: caps.join(","),
            ENV_TURN_CALLS: self.calls_path().to_string_lossy(),
        });
        let mut servers = serde_json::Map::new();
        servers.insert(
            SERVER_NAME.into(),
            json!({"type": "stdio", "command": harness, "args": ["mcp", "--socket", socket], "env": env}),
        );
        if self.selection.has_execution() {
            servers.insert(
                BASH_SERVER_NAME.into(),
                json!({"type": "stdio", "command": harness, "args": ["mcp-bash", "--socket", socket], "env": env}),
            );
        }
        json!({ "mcpServers": servers })
    }

    /// Write `mcp.json` and the hook settings (at start; the selection does not change while the
    /// harness runs).
    pub fn write_mcp_config(&self) -> std::io::Result<()> {
        std::fs::create_dir_all(&self.config.state_dir)?;
        let text = serde_json::to_string_pretty(&self.mcp_config()).unwrap_or_default();
        std::fs::write(self.mcp_config_path(), text)?;
        let hooks = super::hook::settings(&self.harness);
        let text = serde_json::to_string_pretty(&hooks).unwrap_or_default();
        std::fs::write(self.hook_settings_path(), text)
    }

    /// The argv of a turn.
    pub fn argv(&self, session: Option<&str>) -> Vec<String> {
        if let Some(argv) = &self.config.claude_command {
            return argv.clone();
        }
        let mut argv: Vec<String> = vec![
            self.config.claude_program.clone(),
            "-p".into(),
            "--output-format".into(),
            "stream-json".into(),
            "--verbose".into(),
            "--mcp-config".into(),
            self.mcp_config_path().to_string_lossy().into_owned(),
            "--strict-mcp-config".into(),
            "--settings".into(),
            self.hook_settings_path().to_string_lossy().into_owned(),
        ];
        let allowed = self.selection.allowed_tools();
        if !allowed.is_empty() {
            argv.push("--allowedTools".into());
            argv.push(allowed.join(","));
        }
        if let Some(model) = &self.config.model {
            argv.push("--model".into());
            argv.push(model.clone());
        }
        if let Some(session) = session {
            argv.push("--resume".into());
            argv.push(session.to_owned());
        }
        argv
    }

    /// The variables the turn's command gets on top of the harness's own.
    pub fn env(&self) -> Vec<(String, String)> {
        let mut env = self.agent_env.clone();
        env.extend([
            (
                ENV_SOCKET.into(),
                self.socket.to_string_lossy().into_owned(),
            ),
            (
                ENV_MCP_CONFIG.into(),
                self.mcp_config_path().to_string_lossy().into_owned(),
            ),
            (
                ENV_ALLOWED_TOOLS.into(),
                self.selection.allowed_tools().join(","),
            ),
            (super::hook::ENV_HEADLESS_TURN.into(), "1".into()),
            (
                ENV_TURN_CALLS.into(),
                self.calls_path().to_string_lossy().into_owned(),
            ),
        ]);
        if self.var(ENV_CLAUDE_CONFIG_DIR).is_none() {
            env.push((
                ENV_CLAUDE_CONFIG_DIR.into(),
                self.config
                    .claude_config_dir()
                    .to_string_lossy()
                    .into_owned(),
            ));
        }
        if let Some(port) = self.egress_port {
            env.extend(super::egress::proxy_env(port));
            let own_login =
                super::login::logged_in(&self.config.claude_config_dir(), |v| self.var(v))
                    || self.var(ENV_AUTH_TOKEN).is_some();
            env.extend(super::egress::model_env(
                port,
                self.var(ENV_BASE_URL).is_some(),
                own_login,
                &sentinel_host(),
            ));
        }
        env
    }

    /// A variable as the turn's command sees it before the hive's own:
    /// the agent's (`agent_env`), else the harness's environment.
    pub fn var(&self, name: &str) -> Option<String> {
        self.agent_env
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .or_else(|| std::env::var(name).ok())
    }

    /// The session to resume, if the last good turn left one.
    pub fn saved_session(&self) -> Option<String> {
        if self.config.claude_command.is_some() {
            return None;
        }
        let text = std::fs::read_to_string(self.session_path()).ok()?;
        let id = text.trim();
        valid_session(id).then(|| id.to_owned())
    }

    pub fn remember_session(&self, id: Option<&str>) {
        let path = self.session_path();
        let _ = match id.filter(|id| valid_session(id)) {
            Some(id) => std::fs::write(path, id),
            None => std::fs::remove_file(path),
        };
    }
}

/// A session id as the harness keeps it: `[A-Za-z0-9_-]`, 1 to 64
/// characters (Claude Code's are UUIDs).
pub fn valid_session(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= 64
        && id
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '-' || c == '_')
}

/// What a turn's `stream-json` output said.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct StreamFacts {
    /// The model in use (from `system/init` or an assistant message).
    pub model: Option<String>,
    pub session_id: Option<String>,
    /// The final `result` event's error, when it reports one.
    pub error: Option<String>,
    /// Usage, cost and tool calls, for the turn journal.
    pub account: TurnAccount,
    /// Claude said it has no conversation for the session it was asked
    /// to resume ([`NO_CONVERSATION`], in the `result`
    /// event or on stderr).
    pub no_conversation: bool,
}

impl StreamFacts {
    /// Take in one output line; lines that are not JSON are ignored (a
    /// stand-in command may print anything).
    pub fn observe(&mut self, line: &str) {
        if let Ok(event) = serde_json::from_str::<Value>(line) {
            self.observe_event(&event);
        }
    }

    /// Take in one parsed stream event.
    pub fn observe_event(&mut self, event: &Value) {
        let text = |v: &Value| v.as_str().map(str::to_owned);
        self.account.observe(event);
        match event["type"].as_str() {
            Some("system") => {
                if let Some(model) = text(&event["model"]) {
                    self.set_model(model);
                }
                if let Some(id) = text(&event["session_id"]) {
                    self.session_id = Some(id);
                }
            }
            Some("assistant") => {
                if let Some(model) = text(&event["message"]["model"]) {
                    self.set_model(model);
                }
            }
            Some("result") => {
                if let Some(id) = text(&event["session_id"]) {
                    self.session_id = Some(id);
                }
                let says_no_conversation =
                    |v: &Value| v.as_str().is_some_and(|t| t.contains(NO_CONVERSATION));
                if says_no_conversation(&event["result"])
                    || event["errors"]
                        .as_array()
                        .is_some_and(|e| e.iter().any(says_no_conversation))
                {
                    self.no_conversation = true;
                }
                if event["is_error"].as_bool() == Some(true) {
                    let why = text(&event["result"])
                        .or_else(|| event["errors"][0].as_str().map(str::to_owned))
                        .or_else(|| text(&event["subtype"]))
                        .unwrap_or_else(|| "error".into());
                    self.error = Some(why.chars().take(300).collect());
                }
            }
            _ => {}
        }
    }

    fn set_model(&mut self, model: String) {
        if !model.is_empty() && model.len() <= MAX_MODEL && !model.chars().any(char::is_control) {
            self.model = Some(model);
        }
    }
}

/// How a turn's command ended.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TurnEnd {
    /// Exited 0 and its stream reported no error.
    Done(StreamFacts),
    /// It failed; the words say how.
    Failed {
        why: String,
        facts: StreamFacts,
        how: Failure,
    },
    /// Stopped by the harness (deadline or stop).
    Killed {
        why: String,
        facts: StreamFacts,
        by: Stop,
    },
    /// Stopped because the operator interrupted it.
    Interrupted { facts: StreamFacts },
}

impl TurnEnd {
    /// What the stream said, however the turn ended.
    pub fn facts(&self) -> &StreamFacts {
        match self {
            Self::Done(f)
            | Self::Failed { facts: f, .. }
            | Self::Killed { facts: f, .. }
            | Self::Interrupted { facts: f } => f,
        }
    }
}

/// How a turn's command failed (the resume decision's input).
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Failure {
    /// It never ran (empty argv, cannot spawn): nothing was cut.
    NotStarted,
    /// It exited, not 0, or was killed by a signal not the harness's; the
    /// exit as std words it (`exit status: 1`, `signal: 9 (SIGKILL)`).
    Exited(String),
    /// It exited 0 and its `result` reported an error.
    Reported,
}

/// Why the harness stopped a turn's command.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Stop {
    /// Its deadline passed.
    Deadline,
    /// The harness is stopping and the grace ran out.
    HarnessStopping,
}

/// What ends a turn besides its command's own exit.
#[derive(Debug)]
pub struct Ends<I> {
    /// The turn's longest run.
    pub deadline: Duration,
    /// The harness is stopping: the turn gets `grace` more, then ends.
    pub stop: watch::Receiver<bool>,
    pub grace: Duration,
    /// Resolves when the operator interrupts the turn.
    pub interrupted: I,
}

/// Run one turn: spawn `argv` with `prompt` on stdin; stop its process
/// group at the deadline, `grace` after `stop` turns true, or at once when
/// `interrupted` resolves.
pub async fn run_turn<I: std::future::Future<Output = ()>>(
    argv: &[String],
    env: &[(String, String)],
    workdir: &Path,
    prompt: &str,
    ends: Ends<I>,
) -> TurnEnd {
    run_turn_watched(argv, env, workdir, prompt, ends, &mut |_| {}).await
}

/// [`run_turn`], handing `watch` each stream event as it is read (the
/// live view's feed).
pub async fn run_turn_watched<I: std::future::Future<Output = ()>>(
    argv: &[String],
    env: &[(String, String)],
    workdir: &Path,
    prompt: &str,
    ends: Ends<I>,
    watch: &mut (dyn FnMut(&Value) + Send),
) -> TurnEnd {
    let Ends {
        deadline,
        mut stop,
        grace,
        interrupted,
    } = ends;
    let mut interrupted = std::pin::pin!(interrupted);
    let mut facts = StreamFacts::default();
    let Some((program, args)) = argv.split_first() else {
        return TurnEnd::Failed {
            why: "the claude command is empty".into(),
            facts,
            how: Failure::NotStarted,
        };
    };
    let _ = std::fs::create_dir_all(workdir);
    let spawned = process::command(program)
        .args(args)
        .envs(env.iter().map(|(k, v)| (k.as_str(), v.as_str())))
        .current_dir(workdir)
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn();
    let mut child = match spawned {
        Ok(child) => child,
        Err(e) => {
            return TurnEnd::Failed {
                why: format!("cannot start {program:?}: {e}"),
                facts,
                how: Failure::NotStarted,
            };
        }
    };
    if let Some(mut stdin) = child.stdin.take() {
        let prompt = prompt.to_owned();
        tokio::spawn(async move {
            let _ = stdin.write_all(prompt.as_bytes()).await;
        });
    }
    let stderr = child.stderr.take().map(|e| tokio::spawn(forward_stderr(e)));
    let mut lines = child.stdout.take().map(|s| BufReader::new(s).lines());
    let timer = tokio::time::sleep(deadline);
    tokio::pin!(timer);
    let mut grace_timer: Option<std::pin::Pin<Box<tokio::time::Sleep>>> = None;
    if *stop.borrow() {
        grace_timer = Some(Box::pin(tokio::time::sleep(grace)));
    }
    let status = loop {
        tokio::select! {
            line = next_line(&mut lines) => match line {
                Some(line) => if let Ok(event) = serde_json::from_str::<Value>(&line) {
                    facts.observe_event(&event);
                    watch(&event);
                },
                None => lines = None,
            },
            status = child.wait(), if lines.is_none() => break status,
            () = &mut interrupted => {
                process::stop_group(&mut child, Duration::from_secs(5)).await;
                return TurnEnd::Interrupted { facts };
            }
            () = &mut timer => {
                process::stop_group(&mut child, Duration::from_secs(5)).await;
                return TurnEnd::Killed { why: format!("the turn passed its deadline of {} s", deadline.as_secs()), facts, by: Stop::Deadline };
            }
            changed = stop.changed(), if grace_timer.is_none() => {
                if changed.is_err() || *stop.borrow() {
                    grace_timer = Some(Box::pin(tokio::time::sleep(grace)));
                }
            }
            () = async { match grace_timer.as_mut() { Some(t) => t.await, None => std::future::pending().await } } => {
                process::stop_group(&mut child, Duration::from_secs(5)).await;
                return TurnEnd::Killed { why: format!("the harness is stopping and the turn did not end within {} s", grace.as_secs()), facts, by: Stop::HarnessStopping };
            }
        }
    };
    // Claude's stderr has reached the harness's (the journal); the flag is
    // waited for briefly (a grandchild may hold the pipe open).
    if let Some(task) = stderr
        && let Ok(Ok(true)) = tokio::time::timeout(Duration::from_secs(1), task).await
    {
        facts.no_conversation = true;
    }
    match status {
        Ok(s) if s.success() => match facts.error.clone() {
            None => TurnEnd::Done(facts),
            Some(error) => TurnEnd::Failed {
                why: format!("claude reported an error: {error}"),
                facts,
                how: Failure::Reported,
            },
        },
        Ok(s) => TurnEnd::Failed {
            why: match &facts.error {
                Some(error) => format!("{program} {s}: {error}"),
                None => format!("{program} {s}"),
            },
            facts,
            how: Failure::Exited(s.to_string()),
        },
        Err(e) => TurnEnd::Failed {
            why: format!("cannot wait for {program}: {e}"),
            facts,
            how: Failure::Exited("its exit is unknown".into()),
        },
    }
}

/// Copy Claude's stderr to the harness's as it comes (bounded chunks, so a
/// line without an end costs no memory), watching for
/// [`NO_CONVERSATION`] across chunk edges: `true` when it
/// was seen. Piped rather than inherited for that one sentence.
async fn forward_stderr(mut from: tokio::process::ChildStderr) -> bool {
    use tokio::io::AsyncReadExt;
    let needle = NO_CONVERSATION.as_bytes();
    let mut to = tokio::io::stderr();
    let mut buf = vec![0u8; 8192];
    let mut tail: Vec<u8> = Vec::new();
    let mut seen = false;
    loop {
        let n = match from.read(&mut buf).await {
            Ok(0) | Err(_) => return seen,
            Ok(n) => n,
        };
        let _ = to.write_all(&buf[..n]).await;
        if !seen {
            tail.extend_from_slice(&buf[..n]);
            seen = tail.windows(needle.len()).any(|w| w == needle);
            let keep = needle.len().saturating_sub(1).min(tail.len());
            tail.drain(..tail.len() - keep);
        }
    }
}

async fn next_line(
    lines: &mut Option<tokio::io::Lines<BufReader<tokio::process::ChildStdout>>>,
) -> Option<String> {
    match lines {
        Some(l) => l.next_line().await.ok().flatten(),
        None => std::future::pending().await,
    }
}

#[cfg(test)]
#[path = "claude_tests.rs"]
mod tests;
