//! Benchmark (prints figures; not a test): host.sock `agent_status` latency
//! with 100 agents and 16 concurrent clients, and subscribe push latency
//! (driver change → row line at a subscriber), in-process with the fake
//! driver and a real SQLite file.
//!
//! Run: `cargo run --release --example bench_host`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use hive_c0re::wire::ident::Ident;

const AGENTS: usize = 100;
const CLIENTS: usize = 16;
const REQUESTS_PER_CLIENT: usize = 250;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let bench = support::hive_with(AGENTS);
    let (rt, driver, hive) = (&bench.rt, &bench.driver, &bench.hive);
    let socket = bench.config.host_socket();

    // agent_status latency under 16 concurrent clients.
    let started = Instant::now();
    let threads: Vec<_> = (0..CLIENTS)
        .map(|_| {
            let socket = socket.clone();
            std::thread::spawn(move || {
                let mut lat = Vec::with_capacity(REQUESTS_PER_CLIENT);
                for _ in 0..REQUESTS_PER_CLIENT {
                    let t = Instant::now();
                    let mut s = UnixStream::connect(&socket).unwrap();
                    s.write_all(b"{\"cmd\":\"agent_status\"}\n").unwrap();
                    let mut line = String::new();
                    BufReader::new(s).read_line(&mut line).unwrap();
                    assert!(line.starts_with("{\"version\":1,\"ok\":true"));
                    lat.push(t.elapsed());
                }
                lat
            })
        })
        .collect();
    let mut all: Vec<Duration> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let wall = started.elapsed();
    all.sort();
    println!(
        "agent_status, {AGENTS} agents, {CLIENTS} clients: {} requests in {:.2?} ({:.0} req/s); p50 {:.2?}, p99 {:.2?}, max {:.2?}",
        all.len(),
        wall,
        all.len() as f64 / wall.as_secs_f64(),
        percentile(&all, 0.50),
        percentile(&all, 0.99),
        all[all.len() - 1]
    );

    // Push latency: a unit change in the driver -> the row at a subscriber.
    let mut sub = UnixStream::connect(&socket).unwrap();
    sub.write_all(b"{\"cmd\":\"subscribe_agent_status\"}\n")
        .unwrap();
    let mut reader = BufReader::new(sub);
    let mut ack = String::new();
    reader.read_line(&mut ack).unwrap();
    let name = Ident::new("agent-0").unwrap();
    let mut pushes = Vec::new();
    for i in 0..200 {
        let t = Instant::now();
        if i % 2 == 0 {
            driver.crash(&name);
        } else {
            rt.block_on(
                hive.start(&hive_c0re::wire::host::LifecycleScope::agents(vec![
                    name.clone(),
                ])),
            )
            .unwrap();
        }
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        pushes.push(t.elapsed());
    }
    pushes.sort();
    println!(
        "unit change -> subscriber row (fake driver, in-process): p50 {:.2?}, p99 {:.2?}",
        percentile(&pushes, 0.50),
        percentile(&pushes, 0.99)
    );
}
