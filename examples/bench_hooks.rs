//! Benchmark (prints figures; not a test): Claude Code hook → roster row,
//! end to end. The real daemon (`hive-c0re serve --driver fake`, a real
//! SQLite file) with one agent and a `subscribe_agent_status` subscriber;
//! each sample starts the real `hive-agent hook` process with a payload on
//! its stdin (alternately a permission prompt and a submitted prompt, so
//! each one changes the row) and stops the clock when the changed row
//! arrives at the subscriber. The floor, measured in the same run: starting
//! `hive-agent --version` and waiting for it (the process start alone).
//!
//! Run: `cargo build --release --bins && cargo run --release --example bench_hooks`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // it runs the binaries it measures

#[path = "support/daemon.rs"]
mod daemon;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::process::{Command, Stdio};
use std::sync::mpsc;
use std::time::{Duration, Instant};

use daemon::{bin, daemon_with};

const SAMPLES: usize = 300;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(what: &str, mut samples: Vec<Duration>, floor: Duration) {
    samples.sort();
    let (p50, p99) = (percentile(&samples, 0.5), percentile(&samples, 0.99));
    println!(
        "{what}: p50 {:.1} ms, p99 {:.1} ms, max {:.1} ms ({:.1}x / {:.1}x the floor's p50)",
        p50.as_secs_f64() * 1e3,
        p99.as_secs_f64() * 1e3,
        samples.last().unwrap().as_secs_f64() * 1e3,
        p50.as_secs_f64() / floor.as_secs_f64(),
        p99.as_secs_f64() / floor.as_secs_f64(),
    );
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (daemon, run) = daemon_with(dir.path(), None, "alice");
    let host = run.join("host.sock");
    let agent_socket = run.join("agents/alice/mcp.sock");

    let (tx, rx) = mpsc::channel::<(Instant, String)>();
    let mut sub = UnixStream::connect(&host).unwrap();
    sub.write_all(b"{\"cmd\":\"subscribe_agent_status\"}\n")
        .unwrap();
    std::thread::spawn(move || {
        for line in BufReader::new(sub).lines() {
            let Ok(line) = line else { return };
            if tx.send((Instant::now(), line)).is_err() {
                return;
            }
        }
    });
    let _ack = rx.recv().unwrap();

    let agent = bin("hive-agent");
    let payloads = [
        (
            r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Edit"}"#,
            "needs_permission",
        ),
        (
            r#"{"hook_event_name":"UserPromptSubmit","prompt":"go on"}"#,
            "working",
        ),
    ];
    let mut samples = Vec::with_capacity(SAMPLES);
    let mut floor = Vec::with_capacity(SAMPLES);
    for i in 0..SAMPLES {
        let (payload, state) = payloads[i % 2];
        let want = format!(r#""session_state":"{state}""#);
        let started = Instant::now();
        let mut hook = Command::new(&agent)
            .arg("hook")
            .env("HIVE_AGENT_SOCKET", &agent_socket)
            .stdin(Stdio::piped())
            .stdout(Stdio::null())
            .spawn()
            .unwrap();
        hook.stdin
            .take()
            .unwrap()
            .write_all(payload.as_bytes())
            .unwrap();
        let arrived = loop {
            let (at, line) = rx.recv_timeout(Duration::from_secs(5)).unwrap();
            if line.contains(&want) {
                break at;
            }
        };
        assert!(hook.wait().unwrap().success());
        samples.push(arrived - started);

        let started = Instant::now();
        Command::new(&agent)
            .arg("--version")
            .stdout(Stdio::null())
            .status()
            .unwrap();
        floor.push(started.elapsed());
    }
    floor.sort();
    let floor_p50 = percentile(&floor, 0.5);
    println!("{SAMPLES} hooks, one agent, one subscriber, real daemon and hive-agent processes");
    report(
        "floor: `hive-agent --version` start to exit",
        floor.clone(),
        floor_p50,
    );
    report(
        "hook command start -> row at the subscriber",
        samples,
        floor_p50,
    );
    drop(daemon);
}
