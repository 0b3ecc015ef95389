//! Benchmark (prints figures; not a test): host.sock `list` latency while
//! one agent does its worst, against the same latency with the hive quiet,
//! measured in one run on the real daemon (release build, fake driver,
//! default budgets). The agent "mallory": 1,100 connections to its socket
//! held open, a flood of 64 KiB `wake`s into its own inbox until refused,
//! and 20 connections asking `recent` 1,000 rows without reading the
//! answers. Also prints the daemon's peak RSS (VmHWM) before and after.
//!
//! Run: `cargo build --release --bins && cargo run --release --example bench_attack`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // runs the daemon binary it measures

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

const SAMPLES: usize = 400;

fn ask(socket: &Path, line: &str) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut answer = String::new();
    BufReader::new(s).read_line(&mut answer).unwrap();
    answer
}

fn latencies(socket: &Path) -> Vec<Duration> {
    let mut out: Vec<Duration> = (0..SAMPLES)
        .map(|_| {
            let t = Instant::now();
            let answer = ask(socket, r#"{"cmd":"list"}"#);
            assert!(answer.contains("mallory"), "{answer}");
            t.elapsed()
        })
        .collect();
    out.sort();
    out
}

fn pct(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn peak_rss_kib(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

fn main() {
    let bin = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("target/release/hive-c0re");
    assert!(bin.exists(), "build it first: cargo build --release --bins");
    let dir = tempfile::tempdir().unwrap();
    let (run, state) = (dir.path().join("run"), dir.path().join("state"));
    let notify_path = dir.path().join("notify.sock");
    let notify = UnixDatagram::bind(&notify_path).unwrap();
    let mut daemon = std::process::Command::new(&bin)
        .args(["serve", "--driver", "fake", "--state-dir"])
        .arg(&state)
        .arg("--runtime-dir")
        .arg(&run)
        .env("NOTIFY_SOCKET", &notify_path)
        .env("RUST_LOG", "error")
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 1024];
    loop {
        let n = notify.recv(&mut buf).unwrap();
        if String::from_utf8_lossy(&buf[..n]).contains("READY=1") {
            break;
        }
    }
    let host = run.join("host.sock");
    for name in ["alice", "mallory"] {
        ask(&host, &format!(r#"{{"cmd":"spawn","name":"{name}"}}"#));
    }
    let quiet = latencies(&host);
    let rss_before = peak_rss_kib(daemon.id());

    let agent = run.join("agents/mallory/mcp.sock");
    // 1. connections held open (those past the budget are told and closed)
    let held: Vec<UnixStream> = (0..1100)
        .filter_map(|_| UnixStream::connect(&agent).ok())
        .collect();
    // 2. fill its own inbox with 64 KiB wakes until the daemon refuses
    let body = "x".repeat(64 * 1024 - 100);
    let flood = std::thread::spawn({
        let agent = agent.clone();
        move || {
            let mut s = loop {
                match UnixStream::connect(&agent) {
                    Ok(s) => break BufReader::new(s),
                    Err(_) => std::thread::sleep(Duration::from_millis(10)),
                }
            };
            let mut stored = 0;
            for _ in 0..2000 {
                let line = format!("{{\"cmd\":\"wake\",\"from\":\"m\",\"body\":\"{body}\"}}\n");
                if s.get_mut().write_all(line.as_bytes()).is_err() {
                    break;
                }
                let mut answer = String::new();
                if s.read_line(&mut answer).is_err() || !answer.contains("\"ok\"") {
                    break;
                }
                stored += 1;
            }
            stored
        }
    });
    // 3. recent 1,000 rows on 20 connections, never read
    let unread: Vec<UnixStream> = (0..20)
        .filter_map(|_| {
            let mut s = UnixStream::connect(&agent).ok()?;
            s.write_all(b"{\"cmd\":\"recent\",\"limit\":1000}\n").ok()?;
            Some(s)
        })
        .collect();
    let attacked = latencies(&host);
    let stored = flood.join().unwrap();
    let rss_after = peak_rss_kib(daemon.id());
    drop((held, unread));

    let ms = |d: Duration| d.as_secs_f64() * 1000.0;
    println!("host.sock list, {SAMPLES} requests each (ms)      p50      p99");
    println!(
        "  quiet hive                              {:8.3} {:8.3}",
        ms(pct(&quiet, 0.5)),
        ms(pct(&quiet, 0.99))
    );
    println!(
        "  one agent at its worst                  {:8.3} {:8.3}",
        ms(pct(&attacked, 0.5)),
        ms(pct(&attacked, 0.99))
    );
    println!(
        "  ratio attacked/quiet                    {:8.2} {:8.2}",
        ms(pct(&attacked, 0.5)) / ms(pct(&quiet, 0.5)),
        ms(pct(&attacked, 0.99)) / ms(pct(&quiet, 0.99))
    );
    println!("mallory's 64 KiB wakes stored before refusal: {stored}");
    println!(
        "daemon peak RSS: {} MiB quiet, {} MiB after the attack",
        rss_before / 1024,
        rss_after / 1024
    );
    let _ = daemon.kill();
    let _ = daemon.wait();
}
