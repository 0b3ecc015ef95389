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
/// `--config config` if given), started through `prefix` if any (e.g.
/// `prlimit --nofile=1024: --`); once host.sock accepts, the process and
/// its runtime directory.
pub fn serve_fake(dir: &Path, config: Option<&Path>, prefix: &[&str]) -> (Killed, PathBuf) {
    serve_fake_binary(&bin("hive-c0re"), dir, config, prefix)
}

/// [`serve_fake`] with the daemon binary at `binary` (e.g. an older
/// build measured beside this one).
pub fn serve_fake_binary(
    binary: &Path,
    dir: &Path,
    config: Option<&Path>,
    prefix: &[&str],
) -> (Killed, PathBuf) {
    let run = dir.join("run");
    std::fs::create_dir_all(&run).unwrap();
    let mut cmd = match prefix.split_first() {
        Some((program, args)) => {
            let mut cmd = Command::new(program);
            cmd.args(args).arg(binary);
            cmd
        }
        None => Command::new(binary),
    };
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
        .unwrap_or_else(|e| panic!("run {prefix:?} hive-c0re: {e}"));
    let daemon = Killed(child);
    let host = run.join("host.sock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while UnixStream::connect(&host).is_err() {
        assert!(Instant::now() < deadline, "the daemon did not listen");
        std::thread::sleep(Duration::from_millis(20));
    }
    (daemon, run)
}

/// [`serve_fake`] with `agent` spawned, once its socket is there.
pub fn daemon_with(dir: &Path, config: Option<&Path>, agent: &str) -> (Killed, PathBuf) {
    let (daemon, run) = serve_fake(dir, config, &[]);
    let spawn = format!(r#"{{"cmd":"spawn","name":"{agent}"}}"#);
    let answer = request(&run.join("host.sock"), &spawn);
    assert_eq!(answer.trim(), r#"{"version":1,"ok":true}"#);
    wait_for(&run.join("agents").join(agent).join("mcp.sock"));
    (daemon, run)
}

/// CPU time `pid` used so far (user + system, every thread), from
/// `/proc/<pid>/stat` in clock ticks (100 per second on Linux).
pub fn cpu_time(pid: u32) -> Duration {
    let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).unwrap();
    // Fields after the command name (which may hold spaces) in parentheses.
    let rest = &stat[stat.rfind(')').unwrap() + 2..];
    let ticks: u64 = rest
        .split(' ')
        .skip(11)
        .take(2)
        .map(|f| f.parse::<u64>().unwrap())
        .sum();
    Duration::from_millis(ticks * 10)
}
