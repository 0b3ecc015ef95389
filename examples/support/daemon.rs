//! The release binaries as separate processes, for the benchmarks that
//! measure them: where they are, a fake-driver daemon on a temp dir with
//! one agent spawned, and a line request on a socket.

#![allow(dead_code)] // each benchmark uses a different part of this

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

/// `target/release/<name>`, beside the running example's directory.
pub fn bin(name: &str) -> PathBuf {
    // target/release/examples/bench_x -> target/release/<name>
    let exe = std::env::current_exe().unwrap();
    let path = exe.parent().unwrap().parent().unwrap().join(name);
    assert!(
        path.exists(),
        "{} is missing: run `cargo build --release --bins` first",
        path.display()
    );
    path
}

/// A child process killed and reaped when dropped.
pub struct Killed(pub Child);
impl Drop for Killed {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

/// Wait (up to 20 s) for `path` to exist.
pub fn wait_for(path: &Path) {
    let deadline = Instant::now() + Duration::from_secs(20);
    while !path.exists() {
        assert!(
            Instant::now() < deadline,
            "{} never appeared",
            path.display()
        );
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// One request line on `socket`, its one answer line.
pub fn request(socket: &Path, line: &str) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut answer = String::new();
    BufReader::new(s).read_line(&mut answer).unwrap();
    answer
}

/// `hive-c0re serve --driver fake` on `dir` (`dir/state`, `dir/run`, and
/// `--config config` if given), with `agent` spawned; its runtime directory.
pub fn daemon_with(dir: &Path, config: Option<&Path>, agent: &str) -> (Killed, PathBuf) {
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    let mut cmd = Command::new(bin("hive-c0re"));
    cmd.args(["serve", "--driver", "fake"]);
    if let Some(config) = config {
        cmd.arg("--config").arg(config);
    }
    let child = cmd
        .arg("--state-dir")
        .arg(dir.join("state"))
        .arg("--runtime-dir")
        .arg(&run)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .spawn()
        .unwrap();
    let daemon = Killed(child);
    let host = run.join("host.sock");
    wait_for(&host);
    std::thread::sleep(Duration::from_millis(200));
    let spawn = format!(r#"{{"cmd":"spawn","name":"{agent}"}}"#);
    assert_eq!(request(&host, &spawn).trim(), r#"{"version":1,"ok":true}"#);
    wait_for(&run.join("agents").join(agent).join("mcp.sock"));
    (daemon, run)
}
