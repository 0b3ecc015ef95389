//! Benchmark (prints figures; not a test): what an idempotency key adds
//! to a `send` (issue 47, "nothing done twice"), over a real agent socket
//! of a real daemon (`serve --driver fake`, release build).
//!
//! Three kinds of send, alternated [`REPEATS`] times, [`SENDS`] each, one
//! after the other on one connection as a harness makes them:
//! - **plain**: no key, the send of old (one INSERT, one commit);
//! - **keyed**: a new key each (a look-up of the key, then the message and
//!   the kept answer in one transaction, the agent's bound kept);
//! - **repeat**: the same key again (a look-up, answered from the row,
//!   nothing written).
//!
//! Printed per kind: p50 and p99 of a send's wall time and the daemon's
//! CPU per send (user + system, from `/proc/<pid>/stat`), medians of the
//! repeats, with ratios against *plain*. The inbox is emptied (recv, ack)
//! between rounds, untimed.
//!
//! Run: `examples/bench bench_keyed_send`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // a benchmark runs the daemon it measures

#[path = "support/daemon.rs"]
mod daemon;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

const SENDS: usize = 500;
const REPEATS: usize = 5;

struct Conn(BufReader<UnixStream>);

impl Conn {
    fn ask(&mut self, line: &str) -> String {
        let s = self.0.get_mut();
        s.write_all(line.as_bytes()).unwrap();
        s.write_all(b"\n").unwrap();
        let mut answer = String::new();
        self.0.read_line(&mut answer).unwrap();
        answer
    }
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() - 1) as f64 * p).round() as usize]
}

fn median(mut v: Vec<Duration>) -> Duration {
    v.sort();
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (daemon, run) = daemon::daemon_with(dir.path(), None, "alice");
    let pid = daemon.0.id();
    let mut c = Conn(BufReader::new(
        UnixStream::connect(run.join("agents/alice/mcp.sock")).unwrap(),
    ));
    let kinds = ["plain", "keyed", "repeat"];
    // (p50, p99, cpu per send) of each repeat, per kind.
    let mut figures: Vec<Vec<(Duration, Duration, Duration)>> = vec![Vec::new(); kinds.len()];
    let mut next_key = 0u64;
    assert!(
        c.ask(r#"{"cmd":"send","to":"alice","body":"x","idempotency_key":"the-same"}"#)
            .contains("delivered")
    );
    for _ in 0..REPEATS {
        for (k, kind) in kinds.iter().enumerate() {
            let mut times = Vec::with_capacity(SENDS);
            let cpu = daemon::cpu_time(pid);
            for _ in 0..SENDS {
                let line = match *kind {
                    "plain" => {
                        r#"{"cmd":"send","to":"alice","body":"a body of a few words"}"#.to_owned()
                    }
                    "keyed" => {
                        next_key += 1;
                        format!(
                            r#"{{"cmd":"send","to":"alice","body":"a body of a few words","idempotency_key":"k{next_key:030}"}}"#
                        )
                    }
                    _ => r#"{"cmd":"send","to":"alice","body":"x","idempotency_key":"the-same"}"#
                        .to_owned(),
                };
                let started = Instant::now();
                let answer = c.ask(&line);
                times.push(started.elapsed());
                assert!(answer.contains(r#""delivered":1"#), "{answer}");
            }
            let cpu = daemon::cpu_time(pid).saturating_sub(cpu) / SENDS as u32;
            times.sort();
            figures[k].push((percentile(&times, 0.5), percentile(&times, 0.99), cpu));
            // Empty the inbox, untimed.
            loop {
                let got = c.ask(r#"{"cmd":"recv","wait_seconds":0,"max":500}"#);
                c.ask(r#"{"cmd":"ack_turn"}"#);
                if got.contains(r#""messages":[]"#) {
                    break;
                }
            }
        }
    }
    println!("{SENDS} sends per kind and repeat, {REPEATS} repeats (medians):");
    let base = (
        median(figures[0].iter().map(|f| f.0).collect()),
        median(figures[0].iter().map(|f| f.2).collect()),
    );
    for (k, kind) in kinds.iter().enumerate() {
        let p50 = median(figures[k].iter().map(|f| f.0).collect());
        let p99 = median(figures[k].iter().map(|f| f.1).collect());
        let cpu = median(figures[k].iter().map(|f| f.2).collect());
        println!(
            "  {kind:7} p50 {:7.3} ms  p99 {:7.3} ms  daemon CPU/send {:7.1} µs   p50 {:.2}x plain, CPU {:.2}x plain",
            p50.as_secs_f64() * 1e3,
            p99.as_secs_f64() * 1e3,
            cpu.as_secs_f64() * 1e6,
            p50.as_secs_f64() / base.0.as_secs_f64(),
            cpu.as_secs_f64() / base.1.as_secs_f64().max(1e-9),
        );
    }
}
