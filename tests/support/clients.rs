//! The real clients' tools for the harness tests (`tests/clients/install`
//! names them) and the Messages API stand-in they talk to.

use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::Duration;

use serde_json::Value;

use crate::agent_rig::eventually;

/// The model gateway's test certificates (the stand-in's, and its CA).
pub const GATEWAY_FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/gateway");

pub fn tool(var: &str) -> PathBuf {
    let path = std::env::var_os(var).unwrap_or_else(|| {
        panic!("{var} is not set: run `eval \"$(tests/clients/install)\"` first (tests/run does)")
    });
    PathBuf::from(path)
}

pub fn clients_dir() -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR")).join("tests/clients")
}

/// What `tests/clients/mcp_client.py` saw of `hive-agent mcp` on `socket`.
/// The Messages API stand-in on a free loopback port.
pub struct StandIn {
    child: Child,
    pub port: u16,
    log: PathBuf,
}

impl StandIn {
    pub fn start(dir: &Path, to: &str, body: &str) -> Self {
        Self::launch(dir, to, body, "", "127.0.0.1")
    }

    /// One speaking HTTPS with the fixtures' certificate (a stand-in of
    /// api.anthropic.com behind the hive's model gateway).
    pub fn with_tls(dir: &Path, to: &str, body: &str) -> Self {
        Self::launch(dir, to, body, "tls", "127.0.0.1")
    }

    /// One on 127.0.0.2: a harness's Claude reaches it only through its
    /// proxy (NO_PROXY keeps 127.0.0.1 direct).
    pub fn behind_the_proxy(dir: &Path, to: &str, body: &str) -> Self {
        Self::launch(dir, to, body, "", "127.0.0.2")
    }

    /// A stand-in answering every message request 401 (no valid key).
    pub fn unauthorized(dir: &Path) -> Self {
        Self::launch(dir, "operator", "-", "401", "127.0.0.1")
    }

    /// `status`: `401` (refuse every request), `tls` (speak HTTPS), or "".
    fn launch(dir: &Path, to: &str, body: &str, status: &str, host: &str) -> Self {
        let portfile = dir.join("api.port");
        let log = dir.join("api.log");
        let mut command = Command::new(tool("HIVE_TEST_PYTHON"));
        if status == "tls" {
            command
                .env("STANDIN_TLS_CERT", format!("{GATEWAY_FIXTURES}/server.pem"))
                .env("STANDIN_TLS_KEY", format!("{GATEWAY_FIXTURES}/server.key"));
        }
        let child = command
            .arg(clients_dir().join("messages_standin.py"))
            .args([&portfile, &log])
            .args([to, body])
            .env("STANDIN_STATUS", status)
            .env("STANDIN_HOST", host)
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        eventually("the stand-in's port", Duration::from_secs(20), || {
            portfile.exists()
        });
        let port = std::fs::read_to_string(&portfile)
            .unwrap()
            .trim()
            .parse()
            .unwrap();
        Self { child, port, log }
    }

    pub fn requests(&self) -> Vec<Value> {
        std::fs::read_to_string(&self.log)
            .unwrap_or_default()
            .lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }
}

impl Drop for StandIn {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}
