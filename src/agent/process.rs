//! The harness's one process seam: the Claude command of a turn and the
//! `mcp-bash` tool's commands. Each child runs in its own process group
//! (so a deadline or SIGTERM reaches everything it started, e.g. the MCP
//! servers Claude spawns) and is killed if its owner drops it.

use std::time::Duration;

use nix::sys::signal::{Signal, killpg};
use nix::unistd::Pid;
use tokio::process::{Child, Command};

/// A command for `program` in a new process group, killed on drop.
pub fn command(program: &str) -> Command {
    #[allow(clippy::disallowed_methods)] // the harness's process seam
    let mut cmd = Command::new(program);
    cmd.process_group(0).kill_on_drop(true);
    cmd
}

/// Stop `child`'s whole process group: SIGTERM, then SIGKILL after
/// `grace`. Returns once the child is reaped.
pub async fn stop_group(child: &mut Child, grace: Duration) {
    let Some(pid) = child.id().and_then(|p| i32::try_from(p).ok()) else {
        let _ = child.wait().await;
        return;
    };
    let group = Pid::from_raw(pid);
    let _ = killpg(group, Signal::SIGTERM);
    if tokio::time::timeout(grace, child.wait()).await.is_err() {
        let _ = killpg(group, Signal::SIGKILL);
        let _ = child.wait().await;
    }
    // Whatever the leader left behind in its group goes too.
    let _ = killpg(group, Signal::SIGKILL);
}
