//! Running the real `hive-c0re` binary for integration tests: temp state and
//! runtime directories, the fake driver, and readiness read from a
//! `NOTIFY_SOCKET` datagram listener — tests wait for READY=1, never sleep.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(dead_code)] // each test binary uses a different part of this
#![allow(clippy::unwrap_used, clippy::expect_used)] // test support: a panic fails the test

pub mod egress;
pub mod follow;
pub mod journal_files;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const BIN: &str = env!("CARGO_BIN_EXE_hive-c0re");
pub const HIVECTL: &str = env!("CARGO_BIN_EXE_hivectl");

/// Run hivectl against `d`: exit code, stdout, stderr. Not a terminal, so
/// no colour and no progress, whatever the environment says.
pub fn hivectl(d: &Daemon, args: &[&str]) -> (i32, String, String) {
    let out = Command::new(HIVECTL)
        .arg("--socket")
        .arg(d.socket())
        .args(args)
        .env("HIVECTL_TIMEOUT_MS", "5000")
        .output()
        .unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

/// A daemon under test, killed when dropped.
pub struct Daemon {
    pub dir: tempfile::TempDir,
    pub child: Child,
    notify: UnixDatagram,
}

/// How the daemon gets host.sock.
#[derive(Clone, Copy, PartialEq, Eq)]
pub enum Launch {
    /// It binds `<runtime>/host.sock` itself.
    Standalone,
    /// `systemd-socket-activate --fdname=host` hands it over.
    Activated,
    /// `systemd-socket-activate -l host.sock -l web.sock --fdname=host:web`
    /// hands over both (the README's way with the dashboard).
    ActivatedWithWeb,
}

impl Daemon {
    pub fn socket(&self) -> PathBuf {
        self.dir.path().join("run/host.sock")
    }

    /// The dashboard's socket, `<runtime>/web.sock`.
    pub fn web_socket(&self) -> PathBuf {
        self.dir.path().join("run/web.sock")
    }

    /// An agent's socket, `<runtime>/agents/<name>/mcp.sock`.
    pub fn agent_socket(&self, name: &str) -> PathBuf {
        self.dir
            .path()
            .join("run/agents")
            .join(name)
            .join("mcp.sock")
    }

    /// The manager's socket, `<runtime>/manager/mcp.sock`.
    pub fn manager_socket(&self) -> PathBuf {
        self.dir.path().join("run/manager/mcp.sock")
    }

    pub fn state_dir(&self) -> PathBuf {
        self.dir.path().join("state")
    }

    /// Start in a fresh temp dir and wait for READY=1.
    pub fn start(launch: Launch) -> Self {
        let dir = tempfile::tempdir().unwrap();
        Self::start_in(dir, launch)
    }

    /// Start on an existing dir (a restart) and wait for READY=1.
    pub fn start_in(dir: tempfile::TempDir, launch: Launch) -> Self {
        let d = Self::spawn(dir, launch);
        if launch != Launch::Standalone {
            // systemd-socket-activate execs the daemon on the first
            // connection; a probe that says nothing triggers it.
            drop(d.connect_when_listening());
        }
        d.wait_for("READY=1");
        d
    }

    /// Start without waiting (the caller drives activation and readiness).
    pub fn spawn(dir: tempfile::TempDir, launch: Launch) -> Self {
        Self::spawn_with(dir, launch, "fake", &[], &[])
    }

    /// Start with the given driver and extra environment; wait for READY=1.
    pub fn start_with(driver: &str, env: &[(&str, &str)]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = Self::spawn_with(dir, Launch::Standalone, driver, env, &[]);
        d.wait_for("READY=1");
        d
    }

    /// Start (fake driver) with extra `serve` flags; wait for READY=1.
    pub fn start_with_args(extra: &[&str]) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let d = Self::spawn_with(dir, Launch::Standalone, "fake", &[], extra);
        d.wait_for("READY=1");
        d
    }

    /// Start (fake driver) with this config file's JSON; wait for READY=1.
    pub fn start_with_config(config: &str) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("config.json");
        std::fs::write(&path, config).unwrap();
        let path = path.to_str().unwrap().to_owned();
        let d = Self::spawn_with(dir, Launch::Standalone, "fake", &[], &["--config", &path]);
        d.wait_for("READY=1");
        d
    }

    fn spawn_with(
        dir: tempfile::TempDir,
        launch: Launch,
        driver: &str,
        env: &[(&str, &str)],
        extra: &[&str],
    ) -> Self {
        let notify_path = dir.path().join("notify.sock");
        let _ = std::fs::remove_file(&notify_path);
        let notify = UnixDatagram::bind(&notify_path).unwrap();
        notify
            .set_read_timeout(Some(Duration::from_secs(10)))
            .unwrap();
        let state = dir.path().join("state");
        let run = dir.path().join("run");
        std::fs::create_dir_all(&run).unwrap();
        let daemon_args = [
            "serve",
            "--driver",
            driver,
            "--state-dir",
            state.to_str().unwrap(),
            "--runtime-dir",
            run.to_str().unwrap(),
        ];
        let daemon_args = daemon_args.iter().chain(extra);
        // A test that wrote `<dir>/config.json` gets it read.
        let config = dir.path().join("config.json");
        let config_args: Vec<String> = if config.exists() && !extra.contains(&"--config") {
            vec!["--config".into(), config.to_str().unwrap().into()]
        } else {
            Vec::new()
        };
        let mut cmd = match launch {
            Launch::Standalone => {
                let mut c = Command::new(BIN);
                c.args(daemon_args)
                    .args(&config_args)
                    .env("NOTIFY_SOCKET", &notify_path);
                c
            }
            Launch::Activated | Launch::ActivatedWithWeb => {
                let mut c = Command::new("systemd-socket-activate");
                c.arg("-l").arg(run.join("host.sock"));
                if launch == Launch::ActivatedWithWeb {
                    c.arg("-l")
                        .arg(run.join("web.sock"))
                        .arg("--fdname=host:web");
                } else {
                    c.arg("--fdname=host");
                }
                c.arg("-E")
                    .arg(format!("NOTIFY_SOCKET={}", notify_path.display()))
                    .arg("-E")
                    .arg("RUST_LOG=info")
                    .arg(BIN)
                    .args(daemon_args)
                    .args(&config_args);
                c
            }
        };
        let child = cmd
            .envs(env.iter().copied())
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        Self { dir, child, notify }
    }

    /// Connect as soon as the launcher listens (the socket file appears at
    /// bind, a moment before listen).
    pub fn connect_when_listening(&self) -> UnixStream {
        let deadline = Instant::now() + Duration::from_secs(10);
        loop {
            match UnixStream::connect(self.socket()) {
                Ok(s) => return s,
                Err(e) => assert!(Instant::now() < deadline, "never listened: {e}"),
            }
            std::thread::sleep(Duration::from_millis(5));
        }
    }

    /// Read notify datagrams until one contains `needle`; return it.
    pub fn wait_for(&self, needle: &str) -> String {
        let mut buf = vec![0u8; 4096];
        loop {
            let n = self
                .notify
                .recv(&mut buf)
                .unwrap_or_else(|e| panic!("no {needle} from the daemon: {e}"));
            let msg = String::from_utf8_lossy(&buf[..n]).into_owned();
            if msg.contains(needle) {
                return msg;
            }
        }
    }

    /// One request line, one answer line.
    pub fn request(&self, line: &str) -> String {
        request_raw(&self.socket(), format!("{line}\n").as_bytes())
    }

    /// SIGKILL, then give the temp dir back for a restart.
    pub fn kill_hard(mut self) -> tempfile::TempDir {
        self.child.kill().unwrap();
        self.child.wait().unwrap();
        let dir = tempfile::tempdir().unwrap();
        std::mem::replace(&mut self.dir, dir)
    }

    /// Wait for an exit already under way; the exit status.
    pub fn terminate_wait(mut self) -> std::process::ExitStatus {
        self.child.wait().unwrap()
    }

    /// SIGTERM and wait for exit; the exit status.
    pub fn terminate(mut self) -> std::process::ExitStatus {
        nix::sys::signal::kill(
            nix::unistd::Pid::from_raw(self.child.id() as i32),
            nix::sys::signal::Signal::SIGTERM,
        )
        .unwrap();
        self.child.wait().unwrap()
    }
}

impl Drop for Daemon {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

/// A standalone daemon (fake driver) with these agents spawned over host.sock.
pub fn daemon_with(agents: &[&str]) -> Daemon {
    let d = Daemon::start(Launch::Standalone);
    for a in agents {
        assert_eq!(
            d.request(&format!(r#"{{"cmd":"spawn","name":"{a}"}}"#)),
            r#"{"version":1,"ok":true}"#
        );
    }
    d
}

/// A model request of `agent` at `at_ms`, of `(input, output)` tokens for
/// `micro` millionths of a dollar, written into the store of `state_dir`
/// with the store's own writer of the meter (which keeps the hours' sums),
/// as the daemon records the gateway's rows — for a test that needs one
/// at a time the daemon's clock would not stamp.
pub fn meter_into_store(state_dir: &Path, agent: &str, at_ms: i64, tokens: (u64, u64), micro: u64) {
    use hive_c0re::wire::model_log::{MeterRow, Tokens};
    let db = rusqlite::Connection::open(state_dir.join("hive.db")).unwrap();
    db.busy_timeout(Duration::from_secs(10)).unwrap();
    let row = MeterRow {
        at_ms,
        route: "POST /v1/messages".into(),
        model: Some("claude-haiku-4-5".into()),
        status: 200,
        tokens: Tokens {
            input: tokens.0,
            output: tokens.1,
            ..Tokens::default()
        },
        cost_micro_usd: Some(micro),
        ms: 900,
        request_id: None,
        error: None,
    };
    let agent = hive_c0re::wire::ident::Ident::new(agent).unwrap();
    hive_c0re::store::model_log::write(&db, &agent, &[row], 5000).unwrap();
}

/// Send raw bytes, read one line back (with a 10 s guard).
pub fn request_raw(socket: &Path, bytes: &[u8]) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(bytes).unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line.trim_end().to_owned()
}

/// A long-lived connection to an agent or the manager socket: many
/// requests, answered in order.
pub struct Conn {
    reader: BufReader<UnixStream>,
}

impl Conn {
    /// Connect, with a read guard long enough for the longest poll a test
    /// asks for.
    pub fn open(socket: &Path) -> Self {
        let s = UnixStream::connect(socket)
            .unwrap_or_else(|e| panic!("connect {}: {e}", socket.display()));
        s.set_read_timeout(Some(Duration::from_secs(60))).unwrap();
        Self {
            reader: BufReader::new(s),
        }
    }

    /// Connect, or `None` when nothing listens (yet).
    pub fn try_open(socket: &Path) -> Option<Self> {
        let s = UnixStream::connect(socket).ok()?;
        s.set_read_timeout(Some(Duration::from_secs(60))).ok()?;
        Some(Self {
            reader: BufReader::new(s),
        })
    }

    /// One request line, its answer line.
    pub fn ask(&mut self, line: &str) -> String {
        self.reader
            .get_mut()
            .write_all(format!("{line}\n").as_bytes())
            .unwrap();
        let mut answer = String::new();
        self.reader.read_line(&mut answer).unwrap();
        assert!(answer.ends_with('\n'), "connection closed: {answer:?}");
        answer.trim_end().to_owned()
    }

    /// One request line, its answer line; `None` once the connection is
    /// gone (the daemon was killed).
    pub fn try_ask(&mut self, line: &str) -> Option<String> {
        self.reader
            .get_mut()
            .write_all(format!("{line}\n").as_bytes())
            .ok()?;
        let mut answer = String::new();
        self.reader.read_line(&mut answer).ok()?;
        answer.ends_with('\n').then(|| answer.trim_end().to_owned())
    }

    /// `recv` as parsed JSON messages.
    pub fn recv(&mut self, wait_seconds: u64, max: u32) -> Vec<serde_json::Value> {
        let answer = self.ask(&format!(
            r#"{{"cmd":"recv","wait_seconds":{wait_seconds},"max":{max}}}"#
        ));
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_eq!(v["kind"], "messages", "{answer}");
        v["messages"].as_array().unwrap().clone()
    }
}

/// `text` without its `"deployed_sha":"<hex>",` fields: a spawned agent's
/// config repo is seeded with a first commit whose sha changes with the
/// time, so golden lines compare what is around it.
pub fn without_deployed_sha(text: &str) -> String {
    const KEY: &str = "\"deployed_sha\":\"";
    let mut out = String::with_capacity(text.len());
    let mut rest = text;
    while let Some(at) = rest.find(KEY) {
        out.push_str(&rest[..at]);
        let after = &rest[at + KEY.len()..];
        let end = after.find("\",").map_or(after.len(), |e| e + 2);
        rest = &after[end..];
    }
    out.push_str(rest);
    out
}
