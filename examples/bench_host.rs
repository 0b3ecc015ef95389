//! Benchmark (prints figures; not a test): host.sock `agent_status` latency
//! with 100 agents and 16 concurrent clients, and subscribe push latency
//! (driver change → row line at a subscriber), in-process with the fake
//! driver and a real SQLite file.
//!
//! Run: `cargo run --release --example bench_host`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::sync::Arc;
use std::time::{Duration, Instant};

use hive_c0re::clock::SystemClock;
use hive_c0re::config::{Config, DriverKind};
use hive_c0re::containers::fake::FakeDriver;
use hive_c0re::server::{host, listener};
use hive_c0re::service::Hive;
use hive_c0re::store::Store;
use hive_c0re::wire::ident::Ident;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

const AGENTS: usize = 100;
const CLIENTS: usize = 16;
const REQUESTS_PER_CLIENT: usize = 250;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        state_dir: dir.path().join("state"),
        runtime_dir: dir.path().join("run"),
        driver: DriverKind::Fake,
        ..Config::default()
    };
    let socket = config.host_socket();
    let rt = tokio::runtime::Runtime::new().unwrap();
    let driver = Arc::new(FakeDriver::new(config.profile));
    let hive = rt.block_on(async {
        let store = Store::open(&config.database()).unwrap();
        let hive = Hive::new(config.clone(), store, driver.clone(), Arc::new(SystemClock)).unwrap();
        for i in 0..AGENTS {
            hive.spawn_now(&Ident::new(format!("agent-{i}")).unwrap())
                .await
                .unwrap();
        }
        let l = hive_c0re::systemd::activation::bind(&socket).unwrap();
        l.set_nonblocking(true).unwrap();
        let l = tokio::net::UnixListener::from_std(l).unwrap();
        let shutdown = CancellationToken::new();
        let h = hive.clone();
        tokio::spawn(h.clone().watch_units());
        tokio::spawn(listener::accept_loop(
            l,
            "host.sock",
            shutdown.clone(),
            TaskTracker::new(),
            move |s| host::serve(h.clone(), s, shutdown.clone()),
        ));
        hive
    });

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
