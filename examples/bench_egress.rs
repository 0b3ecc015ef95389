//! Egress throughput: one large download through the hive's egress path
//! against the same download straight from the target (prints figures and
//! their ratio; not a test).
//!
//! `examples/bench bench_egress`, or
//! `cargo build --release --bins --examples && target/release/examples/bench_egress [MIB]`.
//!
//! The path is the production one, with the release binaries: a client
//! speaks `CONNECT` to `hive-agent egress-forward` on loopback (as Claude
//! does through `HTTPS_PROXY` in a container), which relays to the agent's
//! `egress.sock`, served by `hive-c0re serve --driver fake`, which hands the
//! connection to `hive-c0re egress`, which dials the target: three
//! processes and three extra socket hops. The target is a thread on
//! 127.0.0.1 that writes [`MIB`] MiB per connection. Both ways are run
//! [`REPS`] times, alternated; the medians and their ratio are printed.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // a benchmark runs the binaries it measures

#[path = "support/daemon.rs"]
mod daemon;

use std::io::{BufRead, BufReader, Read, Write};
use std::net::{TcpListener, TcpStream};
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use daemon::{Killed, bin, daemon_with, wait_for};

/// MiB per download (the first argument overrides it).
const MIB: usize = 512;
/// Downloads each way.
const REPS: usize = 5;

/// A target writing `bytes` to every connection; its port.
fn target(bytes: usize) -> u16 {
    let listener = TcpListener::bind("127.0.0.1:0").unwrap();
    let port = listener.local_addr().unwrap().port();
    std::thread::spawn(move || {
        let chunk = vec![0x5au8; 1 << 20];
        for s in listener.incoming() {
            let mut s = s.unwrap();
            std::thread::spawn({
                let chunk = chunk.clone();
                move || {
                    let mut left = bytes;
                    while left > 0 {
                        let n = left.min(chunk.len());
                        if s.write_all(&chunk[..n]).is_err() {
                            return;
                        }
                        left -= n;
                    }
                }
            });
        }
    });
    port
}

/// Read everything from `s`; the bytes read.
fn drain(s: &mut impl Read) -> usize {
    let mut buf = vec![0u8; 1 << 20];
    let mut total = 0;
    loop {
        match s.read(&mut buf).unwrap() {
            0 => return total,
            n => total += n,
        }
    }
}

fn direct(port: u16) -> (usize, Duration) {
    let started = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", port)).unwrap();
    let n = drain(&mut s);
    (n, started.elapsed())
}

fn proxied(forwarder: u16, port: u16) -> (usize, Duration) {
    let started = Instant::now();
    let mut s = TcpStream::connect(("127.0.0.1", forwarder)).unwrap();
    s.write_all(format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n").as_bytes())
        .unwrap();
    let mut reader = BufReader::new(s);
    let mut line = String::new();
    reader.read_line(&mut line).unwrap();
    assert!(line.starts_with("HTTP/1.1 200 "), "the proxy said {line:?}");
    while line != "\r\n" {
        line.clear();
        reader.read_line(&mut line).unwrap();
    }
    let n = reader.buffer().len();
    let rest = {
        let buffered = n;
        reader.consume(buffered);
        drain(&mut reader)
    };
    (n + rest, started.elapsed())
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(|a, b| a.total_cmp(b));
    v[v.len() / 2]
}

fn main() {
    let mib: usize = std::env::args()
        .nth(1)
        .map(|a| a.parse().expect("MiB"))
        .unwrap_or(MIB);
    let bytes = mib << 20;
    let port = target(bytes);
    let dir = tempfile::tempdir().unwrap();
    let config = dir.path().join("config.json");
    std::fs::write(
        &config,
        format!(r#"{{"egress_allow": ["127.0.0.1:{port}"]}}"#),
    )
    .unwrap();
    let (hive, run) = daemon_with(dir.path(), Some(&config), "bench");
    let dialer = run.join("egress-dialer.sock");
    let service = Killed(
        Command::new(bin("hive-c0re"))
            .args(["egress", "--socket"])
            .arg(&dialer)
            .env("RUST_LOG", "warn")
            .stdout(Stdio::null())
            .stderr(Stdio::null())
            .spawn()
            .unwrap(),
    );
    wait_for(&dialer);
    let mut fwd = Command::new(bin("hive-agent"))
        .args(["egress-forward", "--listen", "127.0.0.1:0", "--socket"])
        .arg(run.join("agents/bench/mcp.sock"))
        .env("RUST_LOG", "warn")
        .stdout(Stdio::null())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    let mut line = String::new();
    BufReader::new(fwd.stderr.take().unwrap())
        .read_line(&mut line)
        .unwrap();
    let forwarder: u16 = line
        .split("forwarding 127.0.0.1:")
        .nth(1)
        .and_then(|r| r.split(' ').next())
        .and_then(|p| p.parse().ok())
        .unwrap_or_else(|| panic!("no port in {line:?}"));
    let _fwd = Killed(fwd);

    println!("one download of {mib} MiB from 127.0.0.1, {REPS} times each way, alternated");
    let (mut straight, mut through) = (Vec::new(), Vec::new());
    let mbps = |(n, t): (usize, Duration)| {
        assert_eq!(n, bytes, "a short download");
        n as f64 / (1 << 20) as f64 / t.as_secs_f64()
    };
    for _ in 0..REPS {
        straight.push(mbps(direct(port)));
        through.push(mbps(proxied(forwarder, port)));
    }
    let (d, p) = (median(straight.clone()), median(through.clone()));
    println!("direct:             {d:8.0} MiB/s (runs: {straight:.0?})");
    println!("through the proxy:  {p:8.0} MiB/s (runs: {through:.0?})");
    println!("ratio proxy/direct: {:.2}", p / d);
    drop((service, hive));
}
