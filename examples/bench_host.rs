//! Benchmark (prints figures; not a test): host.sock `agent_status` latency
//! with 100 and then 1,000 agents and 16 concurrent clients (the roster is
//! served from memory, so the ratio of the two p99s is the figure: the
//! target is ≤ 10× for 10× the agents), and subscribe push latency (driver
//! change → row line at a subscriber), in-process with the fake driver and a
//! real SQLite file.
//!
//! The same 16 clients in-process (tasks calling the service's
//! `agent_status`, and building host.sock's answer line from the roster's
//! JSON as host.sock does) are timed on their own, without the socket: the
//! target is p99 < 1 ms at 100 agents, and again the 1,000/100 ratio.
//!
//! Run: `cargo run --release --example bench_host`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure

mod support;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use hive_c0re::containers::ContainerDriver;
use hive_c0re::wire::host::HostResponse;
use hive_c0re::wire::ident::Ident;

const HIVES: [usize; 2] = [100, 1000];
const CLIENTS: usize = 16;
const REQUESTS_PER_CLIENT: usize = 250;
const IN_PROCESS_REQUESTS: usize = 2_000;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

/// p99s of one hive size: over host.sock, in-process through the service,
/// in-process as host.sock's answer line.
struct P99 {
    socket: Duration,
    service: Duration,
    line: Duration,
}

/// [`CLIENTS`] tasks each timing [`IN_PROCESS_REQUESTS`] calls of `call`;
/// every latency, sorted.
fn in_process<F, Fut>(rt: &tokio::runtime::Runtime, call: F) -> Vec<Duration>
where
    F: Fn() -> Fut + Clone + Send + 'static,
    Fut: std::future::Future<Output = usize> + Send,
{
    rt.block_on(async {
        let tasks: Vec<_> = (0..CLIENTS)
            .map(|_| {
                let call = call.clone();
                tokio::spawn(async move {
                    let mut lat = Vec::with_capacity(IN_PROCESS_REQUESTS);
                    for _ in 0..IN_PROCESS_REQUESTS {
                        let t = Instant::now();
                        assert!(call().await > 0);
                        lat.push(t.elapsed());
                        // A client's next request comes after its answer
                        // was written: let the others run meanwhile.
                        tokio::task::yield_now().await;
                    }
                    lat
                })
            })
            .collect();
        support::gather(tasks).await
    })
}

fn bench(agents: usize) -> P99 {
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

    // In-process, the same 16 clients without the socket.
    let h = hive.clone();
    let service = in_process(rt, move || {
        let h = h.clone();
        async move { h.agent_status().await.unwrap().len() }
    });
    let h = hive.clone();
    let line = in_process(rt, move || {
        let h = h.clone();
        async move { HostResponse::agent_statuses_line(h.roster().json()).len() }
    });
    for (what, lat) in [
        ("service agent_status() (rows cloned)", &service),
        ("host.sock's answer line from the roster's JSON", &line),
    ] {
        println!(
            "in-process {what}, {agents} agents, {CLIENTS} clients: {} calls; p50 {:.1?}, p99 {:.1?}, max {:.1?} (target p99 < 1 ms)",
            lat.len(),
            percentile(lat, 0.50),
            percentile(lat, 0.99),
            lat[lat.len() - 1]
        );
    }
    P99 {
        socket: percentile(&all, 0.99),
        service: percentile(&service, 0.99),
        line: percentile(&line, 0.99),
    }
}

fn main() {
    let p99: Vec<P99> = HIVES.into_iter().map(bench).collect();
    let ratio = |f: fn(&P99) -> Duration| f(&p99[1]).as_secs_f64() / f(&p99[0]).as_secs_f64();
    for (what, f) in [
        ("over host.sock", (|p| p.socket) as fn(&P99) -> Duration),
        ("in-process, service", |p| p.service),
        ("in-process, answer line", |p| p.line),
    ] {
        println!(
            "agent_status {what}: p99 at {} agents {:.2?} / p99 at {} agents {:.2?} = {:.2}x (target <= 10x)",
            HIVES[1],
            f(&p99[1]),
            HIVES[0],
            f(&p99[0]),
            ratio(f)
        );
    }
}
