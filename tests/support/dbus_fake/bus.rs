//! A private `dbus-daemon` on a socket in a temp dir, restartable at the
//! same address. Its config is written here (the session bus's policy —
//! everyone may own and call anything — without service activation, so a
//! call to a name nobody owns fails at once instead of trying to start the
//! host's user services).

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::process::{Child, Command};

/// `LISTEN` is replaced by the socket's address.
const CONFIG: &str = r#"<busconfig>
  <type>session</type>
  <listen>LISTEN</listen>
  <auth>EXTERNAL</auth>
  <policy context="default">
    <allow send_destination="*" eavesdrop="true"/>
    <allow eavesdrop="true"/>
    <allow own="*"/>
  </policy>
</busconfig>
"#;

pub struct PrivateBus {
    config: PathBuf,
    socket: PathBuf,
    child: Option<Child>,
}

impl PrivateBus {
    pub async fn start(dir: &Path) -> Self {
        let socket = dir.join("bus");
        let config = dir.join("bus.conf");
        let address = format!("unix:path={}", socket.display());
        std::fs::write(&config, CONFIG.replace("LISTEN", &address)).unwrap();
        let mut bus = Self {
            config,
            socket,
            child: None,
        };
        bus.spawn().await;
        bus
    }

    /// The address clients use. Without the daemon's guid, so it still
    /// works after a restart.
    pub fn address(&self) -> String {
        format!("unix:path={}", self.socket.display())
    }

    async fn spawn(&mut self) {
        let _ = std::fs::remove_file(&self.socket);
        let mut child = Command::new("dbus-daemon")
            .arg(format!("--config-file={}", self.config.display()))
            .args(["--nofork", "--print-address"])
            .stdout(Stdio::piped())
            // As root it warns that it cannot raise its fd limit; nothing else.
            .stderr(Stdio::null())
            .kill_on_drop(true)
            .spawn()
            .expect("dbus-daemon is installed");
        // It prints its address once it listens.
        let stdout = child.stdout.take().unwrap();
        let mut line = String::new();
        tokio::time::timeout(
            Duration::from_secs(5),
            BufReader::new(stdout).read_line(&mut line),
        )
        .await
        .expect("dbus-daemon printed its address in time")
        .unwrap();
        assert!(line.starts_with("unix:path="), "{line}");
        self.child = Some(child);
    }

    /// Kill the daemon (every connection on it dies).
    pub async fn stop(&mut self) {
        if let Some(mut child) = self.child.take() {
            child.kill().await.unwrap();
        }
    }

    /// Start a new daemon at the same address.
    pub async fn restart(&mut self) {
        self.stop().await;
        self.spawn().await;
    }
}
