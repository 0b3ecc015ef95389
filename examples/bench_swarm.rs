//! Swarm benchmark: prints figures, asserts nothing.
//!
//! `cargo run --release --example bench_swarm` (needs `nats-server`:
//! `apt-get install --no-install-recommends nats-server`)
//!
//! Three hives of 100 agents each, in this process (the service layer and
//! the swarm door, each hive on its own SQLite file with the store's
//! durability settings), on a real three-node NATS JetStream cluster on
//! loopback (R3 stream). Two runs of the same load, alternated [`REPS`]
//! times, medians printed:
//! - **same-hive**: every agent sends [`PER_AGENT`] messages to the next
//!   agent of its own hive (the floor: one local commit per send);
//! - **cross-hive**: every agent `i` of hive `h` sends as many to agent `i`
//!   of hive `h+1` (outbox commit, relay, R3 publish ack, consumer, inbox
//!   commit).
//!
//! Latency is send call → the recipient's long poll returning the message;
//! throughput is messages over the time from the first send to the last
//! receipt. The extrapolation to 100 hives is in `src/swarm/README.md`.

#[path = "../tests/support/swarm/mod.rs"]
mod swarm_support;

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use hive_c0re::clock::SystemClock;
use hive_c0re::config::{Config, DriverKind, SwarmConfig};
use hive_c0re::containers::fake::FakeDriver;
use hive_c0re::service::Hive;
use hive_c0re::store::Store;
use hive_c0re::wire::ident::Ident;
use tokio_util::sync::CancellationToken;

const HIVES: [&str; 3] = ["hive-a", "hive-b", "hive-c"];
const AGENTS: usize = 100;
const PER_AGENT: usize = 10;
const REPS: usize = 3;
const SINGLES: usize = 100;

fn name(i: usize) -> anyhow::Result<Ident> {
    Ok(Ident::new(format!("agent-{i:03}"))?)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

async fn hive(dir: &std::path::Path, me: &str, urls: &[String]) -> anyhow::Result<Hive> {
    let pw = dir.join(format!("{me}.pw"));
    std::fs::write(&pw, swarm_support::password(me))?;
    let config = Config {
        state_dir: dir.join(me),
        runtime_dir: dir.join(format!("{me}-run")),
        driver: DriverKind::Fake,
        hive_name: Some(Ident::new(me)?),
        swarm_name: Some(Ident::new(swarm_support::SWARM)?),
        swarm: Some(SwarmConfig {
            urls: urls.to_vec(),
            credentials_file: None,
            user: Some(me.to_owned()),
            password_file: Some(pw),
            tls_ca_file: None,
            replicas: 3,
        }),
        ..Config::default()
    };
    let store = Store::open(&config.database())?;
    let driver = Arc::new(FakeDriver::with_containers(config.profile, []));
    let hive = Hive::new(config, store, driver, Arc::new(SystemClock))?;
    for i in 0..AGENTS {
        hive.spawn(&name(i)?).await?;
    }
    Ok(hive)
}

/// Every agent of every hive sends PER_AGENT messages to its partner
/// (`cross`: same index on the next hive); every agent receives as many.
/// (messages, wall time, sorted latencies)
async fn run(hives: &[Hive], cross: bool) -> anyhow::Result<(usize, Duration, Vec<Duration>)> {
    let epoch = Instant::now();
    let mut receivers = tokio::task::JoinSet::new();
    for hive in hives {
        for i in 0..AGENTS {
            let (hive, me) = (hive.clone(), name(i)?);
            receivers.spawn(async move {
                let mut latencies = Vec::with_capacity(PER_AGENT);
                while latencies.len() < PER_AGENT {
                    let got = hive
                        .messaging()
                        .recv(
                            &me,
                            Some(Duration::from_secs(60)),
                            Some(100),
                            std::future::pending(),
                        )
                        .await?;
                    anyhow::ensure!(!got.is_empty(), "{me}: nothing for 60 s");
                    let now = epoch.elapsed();
                    for m in got {
                        let sent: u64 = m.body.parse().context("body")?;
                        latencies.push(now.saturating_sub(Duration::from_nanos(sent)));
                    }
                    hive.messaging().ack_turn(&me).await?;
                }
                anyhow::Ok(latencies)
            });
        }
    }
    let started = Instant::now();
    let mut senders = tokio::task::JoinSet::new();
    for (h, hive) in hives.iter().enumerate() {
        for i in 0..AGENTS {
            let hive = hive.clone();
            let me = name(i)?;
            let to = if cross {
                format!("{}@{}", name(i)?, HIVES[(h + 1) % HIVES.len()])
            } else {
                name((i + 1) % AGENTS)?.to_string()
            };
            senders.spawn(async move {
                for _ in 0..PER_AGENT {
                    let at = epoch.elapsed().as_nanos() as u64;
                    hive.messaging()
                        .send(&me, &to, at.to_string(), None)
                        .await?;
                }
                anyhow::Ok(())
            });
        }
    }
    while let Some(s) = senders.join_next().await {
        s.context("sender")??;
    }
    let mut all = Vec::new();
    while let Some(r) = receivers.join_next().await {
        all.extend(r.context("receiver")??);
    }
    let wall = started.elapsed();
    all.sort();
    Ok((all.len(), wall, all))
}

/// One message at a time from agent 0 of hive-a to agent 1 (same hive) or
/// agent 1 of hive-b: the unloaded latency of one hop, sorted.
async fn one_by_one(hives: &[Hive], cross: bool) -> anyhow::Result<Vec<Duration>> {
    let (from, me, other) = (&hives[0], name(0)?, name(1)?);
    let (to_hive, to) = if cross {
        (&hives[1], format!("{other}@{}", HIVES[1]))
    } else {
        (&hives[0], other.to_string())
    };
    let mut out = Vec::with_capacity(SINGLES);
    for n in 0..SINGLES {
        let started = Instant::now();
        from.messaging()
            .send(&me, &to, format!("single {n}"), None)
            .await?;
        let got = to_hive
            .messaging()
            .recv(
                &other,
                Some(Duration::from_secs(30)),
                Some(10),
                std::future::pending(),
            )
            .await?;
        anyhow::ensure!(got.len() == 1, "single {n} did not arrive alone");
        out.push(started.elapsed());
        to_hive.messaging().ack_turn(&other).await?;
    }
    out.sort();
    Ok(out)
}

/// The bus's own ceiling in this run: pipelined JetStream publishes with
/// message ids to an R3 file stream (as the relay does), acks awaited.
async fn bus_ceiling(urls: &[String]) -> anyhow::Result<f64> {
    use async_nats::jetstream::{self, message::PublishMessage, stream};
    let client = async_nats::ConnectOptions::new()
        .user_and_password("admin".into(), swarm_support::password("admin"))
        .connect(urls.to_vec())
        .await?;
    let js = jetstream::new(client);
    let _ = js.delete_stream("CEILING").await;
    js.create_stream(stream::Config {
        name: "CEILING".into(),
        subjects: vec!["ceiling".into()],
        num_replicas: 3,
        storage: stream::StorageType::File,
        ..Default::default()
    })
    .await?;
    let n = 20_000;
    let started = Instant::now();
    let mut acks = Vec::with_capacity(256);
    for i in 0..n {
        let m = PublishMessage::build()
            .payload(format!(r#"{{"v":1,"seq":{i},"from":"a","to":"b","body":"x","at":0}}"#).into())
            .message_id(format!("hive-a.hive-b.{i}"));
        acks.push(js.send_publish("ceiling", m).await?);
        if acks.len() == 256 {
            for a in acks.drain(..) {
                a.await?;
            }
        }
    }
    for a in acks.drain(..) {
        a.await?;
    }
    let rate = n as f64 / started.elapsed().as_secs_f64();
    js.delete_stream("CEILING").await?;
    Ok(rate)
}

fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn main() -> anyhow::Result<()> {
    let cluster = swarm_support::Cluster::start(&HIVES);
    let urls = cluster.urls();
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let urls = urls;
        let dir = tempfile::tempdir()?;
        let shutdown = CancellationToken::new();
        let mut hives = Vec::new();
        for h in HIVES {
            let hive = hive(dir.path(), h, &urls).await?;
            hive_c0re::swarm::start(hive.clone(), shutdown.clone()).await?;
            hives.push(hive);
        }
        // Warm up: streams, consumers and routes in place before timing.
        run(&hives, true).await?;
        println!(
            "{} hives x {AGENTS} agents, {PER_AGENT} messages per agent per run, NATS R3 on 3 loopback nodes",
            HIVES.len()
        );
        let (mut same_rate, mut cross_rate) = (Vec::new(), Vec::new());
        let (mut same_p50, mut same_p99, mut cross_p50, mut cross_p99) =
            (Vec::new(), Vec::new(), Vec::new(), Vec::new());
        for rep in 0..REPS {
            for cross in [false, true] {
                let (n, wall, lat) = run(&hives, cross).await?;
                let rate = n as f64 / wall.as_secs_f64();
                let (p50, p99) = (percentile(&lat, 0.5), percentile(&lat, 0.99));
                println!(
                    "  rep {rep} {:<10} {n} msgs in {:>6.2} s = {rate:>7.0} msg/s, latency p50 {:>7.1} ms, p99 {:>7.1} ms",
                    if cross { "cross-hive" } else { "same-hive" },
                    wall.as_secs_f64(),
                    p50.as_secs_f64() * 1e3,
                    p99.as_secs_f64() * 1e3,
                );
                let (rates, p50s, p99s) = if cross {
                    (&mut cross_rate, &mut cross_p50, &mut cross_p99)
                } else {
                    (&mut same_rate, &mut same_p50, &mut same_p99)
                };
                rates.push(rate);
                p50s.push(p50.as_secs_f64() * 1e3);
                p99s.push(p99.as_secs_f64() * 1e3);
            }
        }
        let (sr, cr) = (median(same_rate), median(cross_rate));
        let (s50, c50) = (median(same_p50), median(cross_p50));
        let (s99, c99) = (median(same_p99), median(cross_p99));
        println!("medians of {REPS}:");
        println!("  same-hive   {sr:>7.0} msg/s  p50 {s50:>7.1} ms  p99 {s99:>7.1} ms  (the floor)");
        println!("  cross-hive  {cr:>7.0} msg/s  p50 {c50:>7.1} ms  p99 {c99:>7.1} ms");
        println!(
            "  cross/same  throughput x{:.2}, p50 x{:.1}, p99 x{:.1}",
            cr / sr,
            c50 / s50,
            c99 / s99
        );
        let same = one_by_one(&hives, false).await?;
        let cross = one_by_one(&hives, true).await?;
        let ms = |d: Duration| d.as_secs_f64() * 1e3;
        println!("one message at a time ({SINGLES} each), send call -> recv answer:");
        println!(
            "  same-hive   p50 {:>6.1} ms  p99 {:>6.1} ms",
            ms(percentile(&same, 0.5)),
            ms(percentile(&same, 0.99))
        );
        println!(
            "  cross-hive  p50 {:>6.1} ms  p99 {:>6.1} ms",
            ms(percentile(&cross, 0.5)),
            ms(percentile(&cross, 0.99))
        );
        let ceiling = bus_ceiling(&urls).await?;
        println!(
            "bus ceiling: {ceiling:.0} publishes/s (pipelined, acked, R3 file stream); \
             cross-hive load above used {:.0}% of it",
            cr / ceiling * 100.0
        );
        shutdown.cancel();
        anyhow::Ok(())
    })?;
    drop(cluster);
    Ok(())
}
