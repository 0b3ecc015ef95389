//! Benchmark (prints figures; not a test): host.sock `list` latency while
//! one agent does its worst, as a ratio to the idle latency measured in the
//! same run, on the real daemon (release build, fake driver, default
//! budgets).
//!
//! Each attack by the agent "mallory" runs on its own, with the hive's
//! sampler measuring host.sock while it is under way, and ends (every
//! connection closed, the daemon's slots free again) before the next one
//! starts — so no attack runs on what an earlier one left exhausted:
//! 1. **connections**: 1,100 connections to its socket held open, and a
//!    thread connecting again and again past the budget;
//! 2. **inbox flood**: 64 KiB `wake`s into its own inbox on one
//!    connection, going on after the daemon refuses them;
//! 3. **unread `recent`s**: on every connection the budget allows, a
//!    `recent` of 1,000 rows (its inbox filled first, outside the
//!    measurement) whose answer is never read;
//! 4. **transient flood**: 64 KiB transient `wake`s, which live in memory.
//!
//! Also prints the daemon's RSS at the end of each attack and its peak
//! (VmHWM). The idle p99 is measured before the first attack and again
//! after the last (the machine's noise, in the same units).
//!
//! Run: `cargo build --release --bins && cargo run --release --example bench_attack`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // runs the daemon binary it measures

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::{UnixDatagram, UnixStream};
use std::path::{Path, PathBuf};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::thread::JoinHandle;
use std::time::{Duration, Instant};

const SAMPLES: usize = 400;
/// The daemon's default `agent_max_connections`.
const SLOTS: usize = 16;
/// A wake body just under the default 64 KiB `max_body_bytes`.
const BODY: usize = 64 * 1024 - 100;

fn ask(socket: &Path, line: &str) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut answer = String::new();
    BufReader::new(s).read_line(&mut answer).unwrap();
    answer
}

/// `SAMPLES` host.sock `list`s, one connection each, sorted.
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

fn status_kib(pid: u32, key: &str) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap_or_default();
    status
        .lines()
        .find_map(|l| l.strip_prefix(key))
        .and_then(|v| v.split_whitespace().next()?.parse().ok())
        .unwrap_or(0)
}

/// One request on an open agent connection; its answer line.
fn request(s: &mut BufReader<UnixStream>, line: &str) -> Option<String> {
    s.get_mut()
        .set_read_timeout(Some(Duration::from_secs(10)))
        .ok()?;
    s.get_mut().write_all(format!("{line}\n").as_bytes()).ok()?;
    let mut answer = String::new();
    s.read_line(&mut answer).ok()?;
    Some(answer)
}

fn wake(transient: bool) -> String {
    format!(
        r#"{{"cmd":"wake","from":"m","body":"{}","transient":{transient}}}"#,
        "x".repeat(BODY)
    )
}

/// Wait until every one of the agent's connection slots serves again (the
/// daemon has seen the last attack's connections close).
fn wait_for_free_slots(agent: &Path) {
    let deadline = Instant::now() + Duration::from_secs(30);
    loop {
        let served = (0..SLOTS)
            .map(|_| {
                let s = UnixStream::connect(agent).ok()?;
                s.set_read_timeout(Some(Duration::from_secs(5))).ok()?;
                Some(BufReader::new(s))
            })
            .collect::<Option<Vec<_>>>()
            .map(|mut conns| {
                conns.iter_mut().all(|c| {
                    request(c, r#"{"cmd":"status"}"#)
                        .is_some_and(|a| a.starts_with(r#"{"kind":"status""#))
                })
            });
        if served == Some(true) {
            return;
        }
        assert!(Instant::now() < deadline, "mallory's slots never came back");
        std::thread::sleep(Duration::from_millis(50));
    }
}

/// A thread sending `line` on one connection until `stop`; how many
/// answers were ok and how many refused.
fn flood(agent: &Path, line: String, stop: Arc<AtomicBool>) -> JoinHandle<(u64, u64)> {
    let mut s = BufReader::new(UnixStream::connect(agent).unwrap());
    std::thread::spawn(move || {
        let (mut ok, mut refused) = (0, 0);
        while !stop.load(Ordering::Relaxed) {
            match request(&mut s, &line) {
                Some(a) if a.contains("\"ok\"") => ok += 1,
                Some(a) if !a.is_empty() => refused += 1,
                _ => break,
            }
        }
        (ok, refused)
    })
}

struct Report {
    idle_p99: Duration,
    pid: u32,
}

impl Report {
    fn row(&self, what: &str, sorted: &[Duration], detail: &str) {
        let ms = |d: Duration| d.as_secs_f64() * 1000.0;
        println!(
            "{what:<28} {:8.3} {:8.3} {:7.2}x {:6} {:6}  {detail}",
            ms(pct(sorted, 0.5)),
            ms(pct(sorted, 0.99)),
            ms(pct(sorted, 0.99)) / ms(self.idle_p99),
            status_kib(self.pid, "VmRSS:") / 1024,
            status_kib(self.pid, "VmHWM:") / 1024,
        );
    }
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
    let agent = run.join("agents/mallory/mcp.sock");
    latencies(&host); // warm-up: the first connections' costs are not the idle floor
    let idle = latencies(&host);
    let report = Report {
        idle_p99: pct(&idle, 0.99),
        pid: daemon.id(),
    };
    println!(
        "host.sock list, {SAMPLES} requests per row    p50 ms   p99 ms  p99/idle RSS MiB HWM MiB"
    );
    report.row("idle", &idle, "");

    eprintln!("1. connections");
    // 1. connections: 1,100 held, and connects churning past the budget.
    let held: Vec<UnixStream> = (0..1100)
        .filter_map(|_| UnixStream::connect(&agent).ok())
        .collect();
    let stop = Arc::new(AtomicBool::new(false));
    let churned = Arc::new(AtomicU64::new(0));
    let churn = std::thread::spawn({
        let (agent, stop, churned) = (agent.clone(), stop.clone(), churned.clone());
        move || {
            while !stop.load(Ordering::Relaxed) {
                if let Ok(s) = UnixStream::connect(&agent) {
                    let _ = s.set_read_timeout(Some(Duration::from_secs(10)));
                    let mut line = String::new();
                    let _ = BufReader::new(s).read_line(&mut line);
                    churned.fetch_add(1, Ordering::Relaxed);
                }
            }
        }
    });
    let sorted = latencies(&host);
    stop.store(true, Ordering::Relaxed);
    churn.join().unwrap();
    report.row(
        "1. 1,100 connections",
        &sorted,
        &format!(
            "{} held, {} more connects told the limit",
            held.len(),
            churned.load(Ordering::Relaxed)
        ),
    );
    drop(held);
    wait_for_free_slots(&agent);

    eprintln!("2. inbox flood");
    // 2. inbox flood: 64 KiB wakes, on past the refusal.
    let stop = Arc::new(AtomicBool::new(false));
    let flooder = flood(&agent, wake(false), stop.clone());
    let sorted = latencies(&host);
    stop.store(true, Ordering::Relaxed);
    let (stored, refused) = flooder.join().unwrap();
    report.row(
        "2. inbox flood (64 KiB)",
        &sorted,
        &format!("{stored} stored, {refused} refused (inbox cap)"),
    );
    wait_for_free_slots(&agent);

    eprintln!("3. unread recents");
    // 3. unread recents on every slot, over a full inbox.
    let mut filler = BufReader::new(UnixStream::connect(&agent).unwrap());
    while request(&mut filler, &wake(false)).is_some_and(|a| a.contains("\"ok\"")) {}
    drop(filler);
    wait_for_free_slots(&agent);
    let unread: Vec<UnixStream> = (0..SLOTS)
        .filter_map(|_| {
            let mut s = UnixStream::connect(&agent).ok()?;
            s.write_all(b"{\"cmd\":\"recent\",\"limit\":1000}\n").ok()?;
            Some(s)
        })
        .collect();
    let sorted = latencies(&host);
    report.row(
        "3. unread recent x1,000",
        &sorted,
        &format!("{} connections never reading", unread.len()),
    );
    drop(unread);
    wait_for_free_slots(&agent);

    eprintln!("4. transient flood");
    // 4. transient flood: 64 KiB transient wakes (memory only).
    let stop = Arc::new(AtomicBool::new(false));
    let flooder = flood(&agent, wake(true), stop.clone());
    let sorted = latencies(&host);
    stop.store(true, Ordering::Relaxed);
    let (kept, refused) = flooder.join().unwrap();
    report.row(
        "4. transient flood (64 KiB)",
        &sorted,
        &format!("{kept} accepted (oldest dropped past 1 MiB), {refused} refused"),
    );
    wait_for_free_slots(&agent);

    eprintln!("idle again");
    let after = latencies(&host);
    report.row("idle again (noise)", &after, "");
    let _ = daemon.kill();
    let _ = daemon.wait();
}
