//! A 1,000-agent ring over real sockets, and the broker beside Redis
//! Streams with the same client (prints figures; not a test).
//!
//! `examples/bench bench_ring` (installs `redis-server` when run as root and
//! it is missing, builds, runs), or
//! `cargo build --release --bins --examples && target/release/examples/bench_ring`.
//!
//! Starts the release daemon (`--driver fake`) under a soft open-files
//! limit of 1,024 (`prlimit --nofile=1024:`: what systemd gives a
//! service by default; the daemon raises it to the hard limit), spawns
//! [`AGENTS`] agents over host.sock, then:
//!
//! 1. **1,000 agents**: one connection per agent on its own `mcp.sock`,
//!    [`ROUNDS`] rounds of a ring: every agent sends to the next, long-polls
//!    its inbox, acks its turn. While all connections are held it asks
//!    host.sock for `agent_status`. Prints messages/s, the daemon's threads
//!    and RSS (targets: every request answered, threads < 64, RSS < 100 MiB).
//! 2. **The peer**: the same ring, same client shape (one connection per
//!    agent, one request written and its answer read, the same
//!    concurrency), against a `redis-server` of the benchmark's own with
//!    `appendonly yes` + `appendfsync always` (every write on disk before
//!    its reply, as the broker's `synchronous=FULL`): `send` is `XADD` to
//!    the next agent's stream, `recv` is `XREADGROUP … BLOCK` on its own,
//!    `ack_turn` is `XACK` of what it read. At [`AGENTS`] and at
//!    [`SMALL_RING`] agents, alternated with the broker [`REPS`] times:
//!    medians of messages/s, server CPU and bytes written per message, and
//!    their ratios (target: broker ≥ 1.5× Redis's messages/s, ≤ 1.0× its
//!    CPU per message); the client's own CPU per message, the rate at
//!    which client and server together would fill every core beside the
//!    rate run (the client shares the cores) and the cores each used,
//!    the requests per message,
//!    and the mean wait for a `send`, `recv` and `ack` answer. With
//!    `HIVE_BENCH_PIPELINED=1` every agent writes its ack together with its
//!    next `recv` (`XACK` with `XREADGROUP`) and reads both answers in
//!    order. Without `redis-server`: "redis-server not installed:
//!    skipped".
//! 3. **An older build beside it** (`HIVE_BENCH_BASELINE=<path to an older
//!    hive-c0re>`, e.g. a release build of the previous commit): its own
//!    daemon with the same agents, alternated in the same runs, so a change
//!    is measured against what it replaced on the same machine, same load.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // a benchmark runs the daemon it measures

#[path = "support/daemon.rs"]
mod daemon;
#[path = "support/redis.rs"]
mod redis;
#[path = "support/ring_clients.rs"]
mod ring_clients;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream as StdStream;
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use daemon::{Killed, cpu_time, serve_fake_binary};
use ring_clients::{Broker, Streams, Tally, agent};

const AGENTS: usize = 1000;
const ROUNDS: usize = 40;
/// The ring size of the broker-against-Redis comparison (the issue's).
const SMALL_RING: usize = 100;
const SMALL_ROUNDS: usize = 200;
/// Runs per contender: six, so three contenders each run first, second
/// and third twice.
const REPS: usize = 6;

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

/// The daemon, started under `prlimit --nofile=1024:` (a soft open-files
/// limit of 1,024), with room for the ring's agents; its host.sock.
fn start(binary: &Path, dir: &Path) -> (Killed, PathBuf) {
    std::fs::create_dir_all(dir).unwrap();
    let config = dir.join("config.json");
    std::fs::write(&config, format!("{{\"max_agents\": {}}}", AGENTS + 1)).unwrap();
    let prefix = ["prlimit", "--nofile=1024:", "--"];
    let (daemon, run) = serve_fake_binary(binary, dir, Some(&config), &prefix);
    (daemon, run.join("host.sock"))
}

/// Spawn every agent of `names` over `socket` (host.sock).
fn spawn_all(socket: &Path, names: &[String]) {
    for n in names {
        let answer = host(socket, &format!(r#"{{"cmd":"spawn","name":"{n}"}}"#));
        assert!(
            answer.starts_with(r#"{"version":1,"ok":true"#),
            "{n}: {answer}"
        );
    }
}

/// The daemon binary measured beside this build (`HIVE_BENCH_BASELINE`).
fn baseline() -> Option<PathBuf> {
    let path = PathBuf::from(std::env::var_os("HIVE_BENCH_BASELINE")?);
    assert!(
        path.exists(),
        "HIVE_BENCH_BASELINE={}: no such file",
        path.display()
    );
    Some(path)
}

/// Whether each agent writes its ack with its next long poll
/// (`HIVE_BENCH_PIPELINED=1`; both servers answer pipelined requests in
/// order) instead of waiting for the ack's answer first.
fn pipelined() -> bool {
    std::env::var_os("HIVE_BENCH_PIPELINED").is_some_and(|v| v == "1")
}

/// One server of the alternated runs and what each of its runs measured.
struct Contender<'a> {
    label: &'static str,
    server: Server<'a>,
    pid: u32,
    rates: Vec<f64>,
    cpu_us: Vec<f64>,
    client_us: Vec<f64>,
    bytes: Vec<f64>,
    /// Each run's mean waits for send, recv and ack answers, µs.
    waits: Vec<[f64; 3]>,
}

impl<'a> Contender<'a> {
    fn new(label: &'static str, server: Server<'a>, pid: u32) -> Self {
        Self {
            label,
            server,
            pid,
            rates: Vec::new(),
            cpu_us: Vec::new(),
            client_us: Vec::new(),
            bytes: Vec::new(),
            waits: Vec::new(),
        }
    }

    /// (messages/s, CPU µs per message, bytes written per message), medians.
    fn medians(&self) -> (f64, f64, f64) {
        (
            median(self.rates.clone()),
            median(self.cpu_us.clone()),
            median(self.bytes.clone()),
        )
    }

    /// The client's (this process's) CPU µs per message, median.
    fn client_median(&self) -> f64 {
        median(self.client_us.clone())
    }

    /// The median of each run's mean wait for send, recv and ack, µs.
    fn wait_medians(&self) -> [f64; 3] {
        [0, 1, 2].map(|k| median(self.waits.iter().map(|w| w[k]).collect()))
    }
}

/// [`REPS`] rounds of one ring of `names` per contender, alternated (the
/// order rotating); the
/// medians and each contender's ratios to the last (the peer).
fn alternate(
    runtime: &tokio::runtime::Runtime,
    contenders: &mut [Contender<'_>],
    names: &[String],
    rounds: usize,
) {
    let n = names.len();
    for rep in 0..REPS {
        // Each rep starts with the next contender: at 1,000 agents whoever
        // ran second ran ~7 % faster, whatever its build (seen with two
        // builds of the same code), so a fixed order skewed the ratios.
        let k = contenders.len();
        for i in 0..k {
            let c = &mut contenders[(rep + i) % k];
            let me = std::process::id();
            let (cpu, client, bytes) = (cpu_time(c.pid), cpu_time(me), written(c.pid));
            let (tally, wall) = runtime
                .block_on(ring(runtime, c.server, names, rounds))
                .unwrap();
            let received = tally.received;
            let requests = tally.answered as f64 / received as f64;
            let [send, recv, ack] = tally.mean_waits();
            let (cpu, bytes) = (cpu_time(c.pid) - cpu, written(c.pid) - bytes);
            let client = cpu_time(me) - client;
            let rate = received as f64 / wall.as_secs_f64();
            let us = |d: Duration| d.as_secs_f64() * 1e6 / received as f64;
            let (per_message, client_per_message) = (us(cpu), us(client));
            let bytes = bytes as f64 / received as f64;
            println!(
                "run {rep}: {} ring, {n} agents x {rounds} rounds: {received} messages in {wall:.2?} = {rate:.0} messages/s; server CPU {cpu:.2?} = {per_message:.1} us per message, client {client_per_message:.1} us, {bytes:.0} bytes written per message; {requests:.2} requests per message; answers waited for: send {send:.0} us, recv {recv:.0} us, ack {ack:.0} us",
                c.label
            );
            c.waits.push([send, recv, ack]);
            c.rates.push(rate);
            c.cpu_us.push(per_message);
            c.client_us.push(client_per_message);
            c.bytes.push(bytes);
        }
    }
    let Some((peer, others)) = contenders.split_last() else {
        return;
    };
    let (pr, pc, pb) = peer.medians();
    println!(
        "{n} agents, medians of {REPS}: {} {pr:.0} messages/s, {pc:.1} us CPU and {pb:.0} bytes written per message",
        peer.label
    );
    for c in others {
        let (r, cpu, b) = c.medians();
        println!(
            "{n} agents, medians of {REPS}: {} {r:.0} messages/s = {:.2}x {} (target >= 1.5x); {cpu:.1} us CPU per message = {:.2}x (target <= 1.0x); {b:.0} bytes written per message = {:.1}x",
            c.label,
            r / pr,
            peer.label,
            cpu / pc,
            b / pb
        );
    }
    // Client and server share the machine's cores: the rate at which both
    // together would use every core bounds a contender's messages/s.
    let cores = std::thread::available_parallelism().map_or(1, usize::from) as f64;
    for c in contenders.iter() {
        let ((r, cpu, _), client) = (c.medians(), c.client_median());
        let ceiling = cores * 1e6 / (cpu + client);
        let [send, recv, ack] = c.wait_medians();
        // Cores busy while it ran, from the medians (rate x CPU per
        // message). Redis serves from one thread (io-threads left at its
        // default): 1.0 is its ceiling whatever the machine.
        let busy = |us: f64| r * us / 1e6;
        println!(
            "{n} agents: {} client CPU {client:.1} us per message; server + client would fill {cores} cores at {ceiling:.0} messages/s (it ran at {:.2}x that); cores used: server {:.2}, client {:.2}; answers waited for: send {send:.0} us, recv {recv:.0} us, ack {ack:.0} us",
            c.label,
            r / ceiling,
            busy(cpu),
            busy(client)
        );
    }
    if let [new, old, _] = contenders {
        let ((nr, nc, _), (or, oc, _)) = (new.medians(), old.medians());
        println!(
            "{n} agents: {} / {}: {:.2}x messages/s, {:.2}x CPU per message",
            new.label,
            old.label,
            nr / or,
            nc / oc
        );
    }
}

/// Which server a ring runs against.
#[derive(Clone, Copy)]
enum Server<'a> {
    /// The daemon: agent `n`'s socket is `<dir>/<n>/mcp.sock`.
    Broker(&'a Path),
    /// Redis at this socket.
    Redis(&'a Path),
}

/// Run a ring of `names` for `rounds` rounds; what it came to, and its wall time.
fn ring(
    runtime: &tokio::runtime::Runtime,
    server: Server<'_>,
    names: &[String],
    rounds: usize,
) -> tokio::task::JoinHandle<(Tally, Duration)> {
    let names = names.to_vec();
    let pipelined = pipelined();
    let server = match server {
        Server::Broker(p) => (true, p.to_path_buf()),
        Server::Redis(p) => (false, p.to_path_buf()),
    };
    runtime.spawn(async move {
        let started = Instant::now();
        let mut tasks = tokio::task::JoinSet::new();
        for (i, n) in names.iter().enumerate() {
            let next = names[(i + 1) % names.len()].clone();
            let (me, (broker, path)) = (n.clone(), server.clone());
            tasks.spawn(async move {
                if broker {
                    let client = Broker::connect(&path.join(&me).join("mcp.sock")).await;
                    agent(client, next, rounds, pipelined).await
                } else {
                    let client = redis::Client::connect(&path).await.unwrap();
                    let client = Streams {
                        client,
                        me,
                        read: Vec::new(),
                    };
                    agent(client, next, rounds, pipelined).await
                }
            });
        }
        let mut tally = Tally::default();
        while let Some(done) = tasks.join_next().await {
            tally.add(&done.unwrap());
        }
        (tally, started.elapsed())
    })
}

/// Bytes `pid` handed to write(2)-like calls so far (`wchar` of
/// `/proc/<pid>/io`: sockets and files alike).
fn written(pid: u32) -> u64 {
    let io = std::fs::read_to_string(format!("/proc/{pid}/io")).unwrap();
    io.lines()
        .find_map(|l| l.strip_prefix("wchar: "))
        .and_then(|v| v.trim().parse().ok())
        .unwrap_or(0)
}

/// The peak resident set of `pid` so far, KiB (`VmHWM`).
fn peak_rss(pid: u32) -> u64 {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).unwrap();
    status
        .lines()
        .find_map(|l| l.strip_prefix("VmHWM:"))
        .and_then(|v| v.split_whitespace().next())
        .and_then(|v| v.parse().ok())
        .unwrap_or(0)
}

/// The highest threads and RSS of `pid` until `until` is finished.
fn sample<T>(pid: u32, until: &tokio::task::JoinHandle<T>) -> (u64, u64) {
    let (mut threads, mut rss) = (0, 0);
    while !until.is_finished() {
        let (t, r) = threads_and_rss(pid);
        (threads, rss) = (threads.max(t), rss.max(r));
        std::thread::sleep(Duration::from_millis(20));
    }
    (threads, rss)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

/// Create every agent's stream and its consumer group `g`.
async fn redis_streams(socket: &Path, names: &[String]) {
    let mut c = redis::Client::connect(socket).await.unwrap();
    for n in names {
        let created = c
            .ask(&[b"XGROUP", b"CREATE", n.as_bytes(), b"g", b"$", b"MKSTREAM"])
            .await
            .unwrap();
        assert_eq!(created, redis::Value::Simple("OK".into()), "{n}");
    }
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (daemon, socket) = start(&daemon::bin("hive-c0re"), &dir.path().join("new"));
    let (_, rss_idle) = threads_and_rss(daemon.0.id());
    let names: Vec<String> = (0..AGENTS).map(|i| format!("a{i:04}")).collect();
    let old = baseline().map(|binary| start(&binary, &dir.path().join("old")));
    let started = Instant::now();
    std::thread::scope(|s| {
        if let Some((_, old_socket)) = &old {
            s.spawn(|| spawn_all(old_socket, &names));
        }
        spawn_all(&socket, &names);
    });
    let (_, rss_spawned) = threads_and_rss(daemon.0.id());
    println!("spawned {AGENTS} agents in {:.1?}", started.elapsed());
    if pipelined() {
        println!("pipelined: each ack is written with the next recv (HIVE_BENCH_PIPELINED=1)");
    }

    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
        .unwrap();
    let agents_dir = dir.path().join("new/run/agents");
    let broker = Server::Broker(&agents_dir);
    let pid = daemon.0.id();
    let ring_1000 = ring(&runtime, broker, &names, ROUNDS);
    // While every agent holds its connection: host.sock still answers.
    let sampler = std::thread::spawn(move || {
        let peak = sample(pid, &ring_1000);
        (peak, ring_1000)
    });
    std::thread::sleep(Duration::from_millis(500));
    let t = Instant::now();
    let status = host(&socket, r#"{"cmd":"agent_status"}"#);
    let status_took = t.elapsed();
    assert!(status.starts_with(r#"{"version":1,"ok":true"#), "{status}");
    let ((threads, rss), ring_1000) = sampler.join().unwrap();
    let (
        Tally {
            received, answered, ..
        },
        wall,
    ) = runtime.block_on(ring_1000).unwrap();
    let broker_1000 = received as f64 / wall.as_secs_f64();
    let (threads_end, rss_end) = threads_and_rss(daemon.0.id());
    println!(
        "broker ring over real sockets: {AGENTS} agents x {ROUNDS} rounds: {received} messages in {wall:.2?} = {broker_1000:.0} messages/s, {answered} agent requests answered",
    );
    println!(
        "host.sock agent_status during the ring: {status_took:.2?} ({} bytes)",
        status.len()
    );
    let mib = |kib: u64| kib as f64 / 1024.0;
    println!(
        "daemon (soft open-files limit 1,024 at start): threads at most {threads} during / {threads_end} after (target < 64); RSS {:.1} MiB idle, {:.1} MiB with {AGENTS} agents spawned, at most {:.1} MiB during the ring, {:.1} MiB after (target < 100 MiB)",
        mib(rss_idle),
        mib(rss_spawned),
        mib(rss),
        mib(rss_end)
    );

    let redis_dir = dir.path().join("redis");
    std::fs::create_dir(&redis_dir).unwrap();
    let Some(server) = redis::start(&redis_dir) else {
        println!(
            "redis-server not installed: skipped (apt-get install --no-install-recommends redis-server)"
        );
        drop(daemon);
        return;
    };
    runtime.block_on(redis_streams(&server.socket, &names));
    let old_agents = dir.path().join("old/run/agents");
    let mut contenders = vec![Contender::new("broker", broker, pid)];
    if let Some((old, _)) = &old {
        let server = Server::Broker(&old_agents);
        contenders.push(Contender::new("baseline", server, old.0.id()));
    }
    let peer = Server::Redis(&server.socket);
    contenders.push(Contender::new("redis", peer, server.pid()));
    alternate(&runtime, &mut contenders, &names, ROUNDS);
    for c in &mut contenders {
        (c.rates, c.cpu_us, c.client_us, c.bytes, c.waits) = Default::default();
    }
    alternate(
        &runtime,
        &mut contenders,
        &names[..SMALL_RING],
        SMALL_ROUNDS,
    );
    for c in &contenders {
        println!(
            "{} peak RSS (VmHWM) {:.1} MiB",
            c.label,
            mib(peak_rss(c.pid))
        );
    }
    drop(server);
    drop(daemon);
}
