//! Hives of the real `hive-c0re` binary (`--driver fake`) in the test
//! swarm, and their agents' connections (over `tests/support/common`'s `Conn`).

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test

use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use crate::common::{self, Conn};
use crate::swarm_support::{SWARM, password};

/// One hive: the real daemon with the fake driver, in the swarm.
pub struct Hive {
    pub name: String,
    pub dir: PathBuf,
    pub urls: Vec<String>,
    child: Option<Child>,
    notify: Option<UnixDatagram>,
}

impl Hive {
    /// Write the hive's config (bus at `urls`, as user `name`) and start it;
    /// wait for READY=1.
    pub fn start(base: &Path, name: &str, urls: Vec<String>) -> Self {
        let dir = base.join(name);
        std::fs::create_dir_all(dir.join("run")).unwrap();
        let mut hive = Self {
            name: name.into(),
            dir,
            urls,
            child: None,
            notify: None,
        };
        hive.launch();
        hive
    }

    fn launch(&mut self) {
        let pw = self.dir.join("nats-password");
        std::fs::write(&pw, format!("{}\n", password(&self.name))).unwrap();
        let config = serde_json::json!({
            "hive_name": self.name,
            "swarm_name": SWARM,
            "swarm": {
                "urls": self.urls,
                "user": self.name,
                "password_file": pw,
                "replicas": 3,
            },
        });
        let config_path = self.dir.join("config.json");
        std::fs::write(&config_path, config.to_string()).unwrap();
        let notify_path = self.dir.join("notify.sock");
        let _ = std::fs::remove_file(&notify_path);
        let notify = UnixDatagram::bind(&notify_path).unwrap();
        notify
            .set_read_timeout(Some(Duration::from_secs(30)))
            .unwrap();
        let child = Command::new(common::BIN)
            .args(["serve", "--driver", "fake", "--config"])
            .arg(&config_path)
            .arg("--state-dir")
            .arg(self.dir.join("state"))
            .arg("--runtime-dir")
            .arg(self.dir.join("run"))
            .env("NOTIFY_SOCKET", &notify_path)
            .env(
                "RUST_LOG",
                std::env::var("HIVE_SWARM_LOG").unwrap_or_else(|_| "warn".into()),
            )
            .stdout(Stdio::null())
            .stderr(if std::env::var_os("HIVE_SWARM_LOG").is_some() {
                Stdio::inherit()
            } else {
                Stdio::null()
            })
            .spawn()
            .unwrap();
        self.child = Some(child);
        let mut buf = vec![0u8; 4096];
        loop {
            let n = notify
                .recv(&mut buf)
                .unwrap_or_else(|e| panic!("no READY=1 from hive {}: {e}", self.name));
            if String::from_utf8_lossy(&buf[..n]).contains("READY=1") {
                break;
            }
        }
        self.notify = Some(notify);
    }

    /// SIGKILL the daemon (its state directory stays).
    pub fn kill(&mut self) {
        if let Some(mut c) = self.child.take() {
            c.kill().unwrap();
            c.wait().unwrap();
        }
    }

    /// SIGSTOP (`stop`) or SIGCONT the daemon: a hive that stops answering
    /// without dying.
    pub fn freeze(&self, stop: bool) {
        use nix::sys::signal::{Signal, kill};
        let pid = self.child.as_ref().expect("a running hive").id();
        let signal = if stop {
            Signal::SIGSTOP
        } else {
            Signal::SIGCONT
        };
        kill(nix::unistd::Pid::from_raw(pid as i32), signal).unwrap();
    }

    /// Start it again on the same state; wait for READY=1.
    pub fn restart(&mut self) {
        self.kill();
        self.launch();
    }

    pub fn host_socket(&self) -> PathBuf {
        self.dir.join("run/host.sock")
    }

    /// The dashboard's socket (bound by the daemon: no activation here).
    pub fn web_socket(&self) -> PathBuf {
        self.dir.join("run/web.sock")
    }

    /// The dashboard's answer to `GET path`, status line and all.
    pub fn web_page(&self, path: &str) -> String {
        use std::io::{Read, Write};
        let mut page = std::os::unix::net::UnixStream::connect(self.web_socket()).unwrap();
        write!(
            page,
            "GET {path} HTTP/1.1\r\nHost: dash\r\nConnection: close\r\n\r\n"
        )
        .unwrap();
        let mut html = String::new();
        page.read_to_string(&mut html).unwrap();
        html
    }

    pub fn agent_socket(&self, agent: &str) -> PathBuf {
        self.dir.join("run/agents").join(agent).join("mcp.sock")
    }

    /// `hive:agent` of every row this hive's `swarm_status` lists as fresh
    /// (a row marked stale is as last heard, not live: left out).
    pub fn swarm_roster(&self) -> std::collections::BTreeSet<String> {
        let answer = self.request(r#"{"cmd":"swarm_status"}"#);
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        v["swarm_statuses"]
            .as_array()
            .into_iter()
            .flatten()
            .filter(|r| r["stale"] != true)
            .map(|r| {
                format!(
                    "{}:{}",
                    r["hive"].as_str().unwrap(),
                    r["name"].as_str().unwrap()
                )
            })
            .collect()
    }

    /// One host.sock request line, its answer line.
    pub fn request(&self, line: &str) -> String {
        common::request_raw(&self.host_socket(), format!("{line}\n").as_bytes())
    }

    pub fn spawn_agents(&self, names: &[String]) {
        for a in names {
            let answer = self.request(&format!(r#"{{"cmd":"spawn","name":"{a}"}}"#));
            assert_eq!(answer, r#"{"version":1,"ok":true}"#, "spawn {a}");
        }
    }
}

impl Drop for Hive {
    fn drop(&mut self) {
        self.kill();
    }
}

/// Connect to an agent socket, retrying while its hive restarts (60 s).
pub fn open_retrying(socket: &Path) -> Conn {
    let deadline = Instant::now() + Duration::from_secs(60);
    loop {
        if let Some(c) = Conn::try_open(socket) {
            return c;
        }
        assert!(
            Instant::now() < deadline,
            "{} never came back",
            socket.display()
        );
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// `send`: `Some(true)` when acknowledged, `None` when the hive is gone.
pub fn send(conn: &mut Conn, to: &str, body: &str) -> Option<bool> {
    let line = serde_json::json!({"cmd": "send", "to": to, "body": body}).to_string();
    Some(conn.try_ask(&line)? == r#"{"kind":"ok","delivered":1}"#)
}

/// `recv` (no wait), then `ack_turn`: the messages as (from, body).
pub fn take(conn: &mut Conn, max: u32) -> Vec<(String, String)> {
    let got: Vec<(String, String)> = conn
        .recv(0, max)
        .iter()
        .map(|m| {
            (
                m["from"].as_str().unwrap().to_owned(),
                m["body"].as_str().unwrap().to_owned(),
            )
        })
        .collect();
    if !got.is_empty() {
        assert_eq!(conn.ask(r#"{"cmd":"ack_turn"}"#), r#"{"kind":"ok"}"#);
    }
    got
}
