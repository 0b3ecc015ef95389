//! A 1,000-agent ring over real sockets (prints figures; not a test).
//!
//! `cargo build --release --bins && cargo run --release --example bench_ring`
//!
//! Starts the release daemon (`--driver fake`) under a soft open-files
//! limit of 1,024 (`prlimit --nofile=1024:`: what systemd gives a
//! service by default; the daemon raises it to the hard limit), spawns
//! [`AGENTS`] agents over host.sock, opens one connection per agent on its
//! own `mcp.sock`, and runs [`ROUNDS`] rounds of a ring: every agent sends
//! to the next, long-polls its inbox, acks its turn. While all connections
//! are held it asks host.sock for `agent_status`. Prints messages/s, the
//! daemon's threads and RSS (targets: every request answered, threads < 64,
//! RSS < 100 MiB).

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // a benchmark runs the daemon it measures

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream as StdStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

use tokio::io::{AsyncBufReadExt, AsyncWriteExt};

const AGENTS: usize = 1000;
const ROUNDS: usize = 5;
const BIN: &str = "target/release/hive-c0re";

fn host(socket: &Path, line: &str) -> String {
    let mut s = StdStream::connect(socket).unwrap();
    s.write_all(format!("{line}\n").as_bytes()).unwrap();
    let mut answer = String::new();
    BufReader::new(s).read_line(&mut answer).unwrap();
    answer
}

/// `Threads:` and `VmRSS:` (KiB) of a process.
fn threads_and_rss(pid: u32) -> (u64, u64) {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    let field = |key: &str| {
        status
            .lines()
            .find_map(|l| l.strip_prefix(key))
            .and_then(|v| v.split_whitespace().next())
            .and_then(|v| v.parse().ok())
            .unwrap_or(0)
    };
    (field("Threads:"), field("VmRSS:"))
}

fn start(dir: &Path) -> (Child, PathBuf) {
    let config = dir.join("config.json");
    std::fs::write(&config, format!("{{\"max_agents\": {}}}", AGENTS + 1)).unwrap();
    let run = dir.join("run");
    let child = Command::new("prlimit")
        .arg("--nofile=1024:")
        .arg("--")
        .arg(BIN)
        .args(["serve", "--driver", "fake", "--config"])
        .arg(&config)
        .arg("--state-dir")
        .arg(dir.join("state"))
        .arg("--runtime-dir")
        .arg(&run)
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .spawn()
        .expect(
            "run prlimit (util-linux) and target/release/hive-c0re: cargo build --release --bins",
        );
    let socket = run.join("host.sock");
    let deadline = Instant::now() + Duration::from_secs(20);
    while StdStream::connect(&socket).is_err() {
        assert!(Instant::now() < deadline, "the daemon did not listen");
        std::thread::sleep(Duration::from_millis(50));
    }
    (child, socket)
}

async fn agent(socket: PathBuf, next: String) -> (usize, usize) {
    let stream = tokio::net::UnixStream::connect(&socket).await.unwrap();
    let (read, mut write) = stream.into_split();
    let mut lines = tokio::io::BufReader::new(read).lines();
    let mut ask = async |line: String| {
        write
            .write_all(format!("{line}\n").as_bytes())
            .await
            .unwrap();
        lines
            .next_line()
            .await
            .unwrap()
            .expect("the daemon answered")
    };
    let (mut received, mut answered) = (0, 0);
    for round in 0..ROUNDS {
        let sent = ask(format!(
            r#"{{"cmd":"send","to":"{next}","body":"round {round}"}}"#
        ))
        .await;
        assert_eq!(sent, r#"{"kind":"ok"}"#);
        answered += 1;
        while received < round + 1 {
            let got = ask(r#"{"cmd":"recv","wait_seconds":30,"max":10}"#.to_owned()).await;
            let v: serde_json::Value = serde_json::from_str(&got).unwrap();
            let n = v["messages"].as_array().map_or(0, Vec::len);
            assert!(n > 0, "a round timed out: {got}");
            received += n;
            answered += 1;
            assert_eq!(
                ask(r#"{"cmd":"ack_turn"}"#.to_owned()).await,
                r#"{"kind":"ok"}"#
            );
            answered += 1;
        }
    }
    (received, answered)
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (mut daemon, socket) = start(dir.path());
    let (_, rss_idle) = threads_and_rss(daemon.id());
    let names: Vec<String> = (0..AGENTS).map(|i| format!("a{i:04}")).collect();
    let started = Instant::now();
    for n in &names {
        let answer = host(&socket, &format!(r#"{{"cmd":"spawn","name":"{n}"}}"#));
        assert!(
            answer.starts_with(r#"{"version":1,"ok":true"#),
            "{n}: {answer}"
        );
    }
    println!("spawned {AGENTS} agents in {:.1?}", started.elapsed());

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let run = dir.path().join("run/agents");
    let started = Instant::now();
    let ring = runtime.spawn({
        let names = names.clone();
        async move {
            let mut tasks = tokio::task::JoinSet::new();
            for (i, n) in names.iter().enumerate() {
                let next = names[(i + 1) % names.len()].clone();
                tasks.spawn(agent(run.join(n).join("mcp.sock"), next));
            }
            let (mut received, mut answered) = (0, 0);
            while let Some(done) = tasks.join_next().await {
                let (r, a) = done.unwrap();
                received += r;
                answered += a;
            }
            (received, answered)
        }
    });
    // While every agent holds its connection: host.sock still answers.
    let pid = daemon.id();
    let sampler = std::thread::spawn(move || {
        let (mut threads, mut rss) = (0, 0);
        while !ring.is_finished() {
            let (t, r) = threads_and_rss(pid);
            (threads, rss) = (threads.max(t), rss.max(r));
            std::thread::sleep(Duration::from_millis(20));
        }
        (threads, rss, ring)
    });
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    let status = host(&socket, r#"{"cmd":"agent_status"}"#);
    let status_took = t.elapsed();
    assert!(status.starts_with(r#"{"version":1,"ok":true"#), "{status}");
    let (threads, rss, ring) = sampler.join().unwrap();
    let (received, answered) = runtime.block_on(ring).unwrap();
    let wall = started.elapsed();
    let (threads_end, rss_end) = threads_and_rss(daemon.id());
    println!(
        "ring over real sockets: {AGENTS} agents x {ROUNDS} rounds: {received} messages in {:.2?} = {:.0} messages/s, {answered} agent requests answered",
        wall,
        received as f64 / wall.as_secs_f64()
    );
    println!(
        "host.sock agent_status during the ring: {status_took:.2?} ({} bytes)",
        status.len()
    );
    println!(
        "daemon (soft open-files limit 1,024 at start): threads at most {} during / {} after (target < 64); RSS {:.1} MiB idle, at most {:.1} MiB during, {:.1} MiB after (target < 100 MiB)",
        threads,
        threads_end,
        rss_idle as f64 / 1024.0,
        rss as f64 / 1024.0,
        rss_end as f64 / 1024.0
    );
    let _ = daemon.kill();
    let _ = daemon.wait();
}
