//! The demo hive's agents (`hive-c0re serve --driver fake --demo-agents`):
//! every fake container that is running runs the real harness, `hive-agent
//! run`, on its agent socket, with the scripted stand-in of Claude Code
//! (`hive-agent demo-model`) as its turn's command. So the demo's agents
//! take their messages, do turns, answer, and show in the live turn view,
//! the turn journal and the usage page — with no container, model or key.
//!
//! It follows the fake driver's changes, as systemd would run the
//! container's `hive-agent.service`: a unit that becomes active gets a
//! harness process; one that leaves active (stop, kill, destroy) has its
//! harness stopped — SIGTERM, then SIGKILL after [`STOP_GRACE`]; a harness
//! that exits while its unit is active is started again after
//! [`RESTART_DELAY`] (the unit's `Restart=on-failure`). Each harness's
//! files are in `<dir>/<agent>`: its config, its state (sessions, the turn
//! in progress) and its log, `harness.log`.
//!
//! Rejected: starting harnesses inside [`super::fake::FakeDriver`]. The
//! fake driver is the systemd seam every fast test runs against; processes
//! of its own would be in every one of them. Here they are a follower of
//! its change channel, on only when asked for.

use std::collections::HashMap;
use std::path::PathBuf;
use std::process::Stdio;
use std::time::Duration;

use tokio::process::{Child, Command};
use tokio::sync::broadcast::{self, error::RecvError};
use tokio_util::sync::CancellationToken;

use super::UnitChange;
use crate::wire::ident::Ident;

/// How long a harness has to stop after SIGTERM (hive-agent.service's
/// stop timeout is longer; a demo turn is short).
pub const STOP_GRACE: Duration = Duration::from_secs(5);
/// The wait before a harness that exited is started again.
pub const RESTART_DELAY: Duration = Duration::from_secs(1);

/// Where the demo's harnesses run and what they talk to.
#[derive(Debug, Clone)]
pub struct DemoAgents {
    /// The `hive-agent` program.
    pub program: PathBuf,
    /// The daemon's runtime directory: `agents/<n>/mcp.sock`,
    /// `manager/mcp.sock`.
    pub runtime_dir: PathBuf,
    /// The harnesses' own directories, one per agent.
    pub dir: PathBuf,
    /// The manager's name (its socket is the manager socket).
    pub manager: Ident,
}

impl DemoAgents {
    /// The agent socket `name`'s harness connects to.
    fn socket(&self, name: &Ident) -> PathBuf {
        if *name == self.manager {
            self.runtime_dir.join("manager").join("mcp.sock")
        } else {
            self.runtime_dir
                .join("agents")
                .join(name.as_str())
                .join("mcp.sock")
        }
    }

    /// Start `name`'s harness: its config written, its log opened.
    fn start(&self, name: &Ident) -> std::io::Result<Child> {
        let dir = self.dir.join(name.as_str());
        std::fs::create_dir_all(dir.join("state"))?;
        let config = serde_json::json!({
            "state_dir": dir.join("state"),
            "claude_command": [self.program, "demo-model"],
            "turn_timeout_seconds": 120,
            "stop_grace_seconds": 2,
        });
        let config_path = dir.join("config.json");
        std::fs::write(&config_path, config.to_string())?;
        let log = std::fs::OpenOptions::new()
            .create(true)
            .append(true)
            .open(dir.join("harness.log"))?;
        #[allow(clippy::disallowed_methods)] // the demo harnesses' process seam
        let mut command = Command::new(&self.program);
        // The harness ends with the daemon even when the daemon is killed
        // (a container of the fake driver does not outlive it).
        // SAFETY: the closure runs in the child between fork and exec and
        // calls only prctl(2), which is async-signal-safe. The signal comes
        // when the spawning thread ends: a runtime worker, which lives as
        // long as the daemon's runtime.
        #[allow(unsafe_code)]
        unsafe {
            command.pre_exec(|| {
                nix::sys::prctl::set_pdeathsig(nix::sys::signal::Signal::SIGTERM)
                    .map_err(std::io::Error::from)
            });
        }
        command
            .arg("run")
            .env("HIVE_AGENT_SOCKET", self.socket(name))
            .env("HIVE_AGENT_CONFIG", &config_path)
            // The stand-in needs no login; a placeholder makes the harness
            // report the agent logged in (it checks for a credential).
            .env("ANTHROPIC_API_KEY", "demo-model-needs-no-key")
            .env_remove("HIVE_CLAUDE_COMMAND")
            .env_remove("HIVE_TOOL_GROUPS")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("NOTIFY_SOCKET")
            .env_remove("LISTEN_FDS")
            .env_remove("LISTEN_FDNAMES")
            .env_remove("LISTEN_PID")
            .stdin(Stdio::null())
            .stdout(Stdio::null())
            .stderr(log)
            .kill_on_drop(true)
            .spawn()
    }
}

/// Run harnesses for the active units `changes` reports until `shutdown`
/// (the fake driver's containers end with the daemon); then stop them all.
/// `active`: the units active when it starts.
pub async fn run(
    agents: DemoAgents,
    active: Vec<Ident>,
    mut changes: broadcast::Receiver<UnitChange>,
    shutdown: CancellationToken,
) {
    let mut running: HashMap<Ident, Child> = HashMap::new();
    let mut wanted: Vec<Ident> = active;
    let mut tick = tokio::time::interval(RESTART_DELAY);
    loop {
        // Start what should run and does not (again, after an exit).
        for name in &wanted {
            let exited = running
                .get_mut(name)
                .is_none_or(|c| c.try_wait().ok().flatten().is_some());
            if exited {
                match agents.start(name) {
                    Ok(child) => {
                        tracing::info!("{name}: demo harness started");
                        running.insert(name.clone(), child);
                    }
                    Err(err) => tracing::warn!("{name}: demo harness not started: {err}"),
                }
            }
        }
        tokio::select! {
            change = changes.recv() => match change {
                Ok(c) => {
                    let up = c.new.as_ref().is_some_and(|s| s.is_running());
                    if up && !wanted.contains(&c.agent) {
                        wanted.push(c.agent);
                    } else if !up {
                        wanted.retain(|n| *n != c.agent);
                        if let Some(child) = running.remove(&c.agent) {
                            stop(&c.agent, child).await;
                        }
                    }
                }
                Err(RecvError::Lagged(_)) => {}
                Err(RecvError::Closed) => break,
            },
            _ = tick.tick() => {}
            () = shutdown.cancelled() => break,
        }
    }
    for (name, child) in running {
        stop(&name, child).await;
    }
}

/// Stop one harness as systemd stops a service: SIGTERM, then SIGKILL.
async fn stop(name: &Ident, mut child: Child) {
    if let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) {
        let pid = nix::unistd::Pid::from_raw(pid);
        let _ = nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM);
    }
    if tokio::time::timeout(STOP_GRACE, child.wait())
        .await
        .is_err()
    {
        let _ = child.kill().await;
    }
    tracing::info!("{name}: demo harness stopped");
}

#[cfg(test)]
#[path = "demo_tests.rs"]
mod tests;
