//! Benchmark (prints figures; not a test): host.sock `agent_status` latency
//! with 100 and then 1,000 agents and 16 concurrent clients (the roster is
//! served from memory, so the ratio of the two p99s is the figure: the
//! target is ≤ 10× for 10× the agents), and subscribe push latency (driver
//! change → row line at a subscriber), in-process with the fake driver and a
//! real SQLite file.
//!
//! Run: `cargo run --release --example bench_host`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use hive_c0re::containers::ContainerDriver;
use hive_c0re::wire::ident::Ident;

const HIVES: [usize; 2] = [100, 1000];
const CLIENTS: usize = 16;
const REQUESTS_PER_CLIENT: usize = 250;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn bench(agents: usize) -> Duration {
    let bench = support::hive_with(agents);
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
        "agent_status, {agents} agents, {CLIENTS} clients: {} requests in {:.2?} ({:.0} req/s); p50 {:.2?}, p99 {:.2?}, max {:.2?}",
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
            // The driver alone, as a signal would: the service's own
            // verbs publish too, which would add a second line.
            rt.block_on(driver.start(&name)).unwrap();
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
    let _ = hive;
    percentile(&all, 0.99)
}

fn main() {
    let p99: Vec<Duration> = HIVES.into_iter().map(bench).collect();
    println!(
        "agent_status p99 at {} agents / p99 at {} agents = {:.2}x (target <= 10x)",
        HIVES[1],
        HIVES[0],
        p99[1].as_secs_f64() / p99[0].as_secs_f64()
    );
}
