//! Broker benchmark: prints figures, asserts nothing.
//!
//! `cargo run --release --example bench_broker`
//!
//! 1. Sustained send → recv → ack across 100 agents, and across 1,000 (more
//!    writes waiting for each commit), through the service layer (`Hive`),
//!    on a real database file with the store's durability settings (WAL,
//!    `synchronous=FULL`): every agent sends to the next one in a ring,
//!    long-polls its own inbox, acks the turn. With the writer's counters:
//!    jobs per commit, and the ceiling this disk allows at that batching
//!    (its commits/s, the one-row-per-commit floor, × the jobs one commit
//!    carries ÷ the two waited writes of a message), and with full batches
//!    ([`MAX_BATCH`] jobs).
//! 2. Long-poll wake latency: an agent waits in `recv`, another sends; time
//!    from the start of the `send` call (and from its commit) to the
//!    poll's answer, p50/p99.
//! 3. The floors, on a bare rusqlite connection with the same pragmas:
//!    SQLite's one-commit-per-row (`INSERT` in its own `BEGIN IMMEDIATE …
//!    COMMIT`) and N-rows-per-commit (10, 100) rates, the same three commits
//!    per message (insert, pop, ack) as the broker had before its `recv`
//!    stopped writing, and that loop with
//!    `synchronous=NORMAL` (the price of FULL). The broker's rate is printed
//!    as a ratio to each.
//!
//! All are bound by fsync, whose cost on a shared disk swings from run to
//! run; ring and floors therefore alternate [`REPS`] times and the medians
//! (and the ratios of the medians) are printed at the end.

use std::sync::Arc;
use std::time::{Duration, Instant};

use anyhow::Context;
use hive_c0re::clock::{Clock, SystemClock};
use hive_c0re::config::{Config, DriverKind};
use hive_c0re::containers::fake::FakeDriver;
use hive_c0re::service::Hive;
use hive_c0re::store::{MAX_BATCH, Store, agents};
use hive_c0re::wire::ident::Ident;

/// The daemon's allocator (src/main.rs), so the broker is measured as it runs.
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

/// The ring sizes; the database holds the largest.
const RINGS: [usize; 2] = [100, 1000];
const AGENTS: usize = 1000;
/// Messages per ring run, whatever its size (so a run lasts long enough to
/// measure: 100 rounds of 100 agents, 10 of 1,000).
const MESSAGES: usize = 10_000;
/// Writes waited for per message: the send and the ack (a `recv` writes
/// nothing it waits for; its in-flight marks ride the next commit).
const WRITES_PER_MESSAGE: f64 = 2.0;
const REPS: usize = 3;
const WAKE_SAMPLES: usize = 200;

fn name(i: usize) -> anyhow::Result<Ident> {
    Ok(Ident::new(format!("agent-{i:03}"))?)
}

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    let idx = ((sorted.len() as f64 - 1.0) * p).round() as usize;
    sorted[idx.min(sorted.len() - 1)]
}

async fn ring(hive: &Hive, agents: usize) -> anyhow::Result<(usize, Duration)> {
    let started = Instant::now();
    let mut tasks = tokio::task::JoinSet::new();
    for i in 0..agents {
        let (hive, me, next) = (hive.clone(), name(i)?, name((i + 1) % agents)?);
        tasks.spawn(async move {
            let mut received = 0usize;
            for round in 0..MESSAGES / agents {
                hive.messaging()
                    .send(&me, next.as_str(), format!("round {round}"), None)
                    .await?;
                while received < round + 1 {
                    let got = hive
                        .messaging()
                        .recv(
                            &me,
                            Some(Duration::from_secs(30)),
                            Some(10),
                            std::future::pending(),
                        )
                        .await?;
                    anyhow::ensure!(!got.is_empty(), "{me}: a round timed out");
                    received += got.len();
                    hive.messaging().ack_turn(&me).await?;
                }
            }
            anyhow::Ok(received)
        });
    }
    let mut total = 0;
    while let Some(joined) = tasks.join_next().await {
        total += joined.context("ring task")??;
    }
    Ok((total, started.elapsed()))
}

async fn wake_latency(hive: &Hive) -> anyhow::Result<(Vec<Duration>, Vec<Duration>)> {
    let (waiter, sender) = (name(0)?, name(1)?);
    let mut from_call = Vec::with_capacity(WAKE_SAMPLES);
    let mut from_commit = Vec::with_capacity(WAKE_SAMPLES);
    for n in 0..WAKE_SAMPLES {
        let poll = {
            let (hive, waiter) = (hive.clone(), waiter.clone());
            tokio::spawn(async move {
                let got = hive
                    .messaging()
                    .recv(
                        &waiter,
                        Some(Duration::from_secs(10)),
                        Some(10),
                        std::future::pending(),
                    )
                    .await;
                (got, Instant::now())
            })
        };
        // Give the poll time to arm and wait (this is a benchmark, not a test).
        tokio::time::sleep(Duration::from_millis(3)).await;
        let called = Instant::now();
        hive.messaging()
            .send(&sender, waiter.as_str(), format!("wake {n}"), None)
            .await?;
        let committed = Instant::now();
        let (got, answered) = poll.await?;
        anyhow::ensure!(got?.len() == 1, "the poll did not get exactly the message");
        hive.messaging().ack_turn(&waiter).await?;
        from_call.push(answered.saturating_duration_since(called));
        from_commit.push(answered.saturating_duration_since(committed));
    }
    from_call.sort();
    from_commit.sort();
    Ok((from_call, from_commit))
}

/// The same commits as one send → recv → ack, on a bare connection.
fn median(mut v: Vec<f64>) -> f64 {
    v.sort_by(f64::total_cmp);
    v[v.len() / 2]
}

fn floor(path: &std::path::Path, count: usize, synchronous: &str) -> anyhow::Result<Duration> {
    let mut conn = rusqlite::Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", synchronous)?;
    conn.execute_batch(
        "CREATE TABLE messages (id INTEGER PRIMARY KEY AUTOINCREMENT, sender TEXT NOT NULL,
           recipient TEXT NOT NULL, body TEXT NOT NULL, in_reply_to INTEGER, at INTEGER NOT NULL,
           state TEXT NOT NULL DEFAULT 'pending', redelivered INTEGER NOT NULL DEFAULT 0,
           popped_at INTEGER, handled_at INTEGER);
         CREATE INDEX messages_inbox ON messages(recipient, state, id);",
    )?;
    let started = Instant::now();
    for n in 0..count {
        let to = format!("agent-{:03}", n % RINGS[0]);
        conn.execute(
            "INSERT INTO messages (sender, recipient, body, at) VALUES ('x', ?1, 'round', 1)",
            [&to],
        )?;
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        let id: i64 = tx.query_row(
            "SELECT id FROM messages WHERE recipient = ?1 AND state = 'pending' ORDER BY id LIMIT 10",
            [&to],
            |r| r.get(0),
        )?;
        tx.execute(
            "UPDATE messages SET state = 'inflight', popped_at = 1 WHERE id = ?1",
            [id],
        )?;
        tx.commit()?;
        conn.execute(
            "UPDATE messages SET state = 'handled', handled_at = 1 WHERE recipient = ?1 AND state = 'inflight'",
            [&to],
        )?;
    }
    Ok(started.elapsed())
}

/// Rows per second inserting `count` rows, `per_commit` in each
/// `BEGIN IMMEDIATE … COMMIT` (WAL, `synchronous=FULL`).
fn rows_floor(path: &std::path::Path, count: usize, per_commit: usize) -> anyhow::Result<f64> {
    let mut conn = rusqlite::Connection::open(path)?;
    conn.pragma_update(None, "journal_mode", "WAL")?;
    conn.pragma_update(None, "synchronous", "FULL")?;
    conn.execute_batch(
        "CREATE TABLE rows (id INTEGER PRIMARY KEY, recipient TEXT NOT NULL, body TEXT NOT NULL)",
    )?;
    let started = Instant::now();
    let mut n = 0;
    while n < count {
        let tx = conn.transaction_with_behavior(rusqlite::TransactionBehavior::Immediate)?;
        for _ in 0..per_commit.min(count - n) {
            tx.execute(
                "INSERT INTO rows (recipient, body) VALUES (?1, 'round')",
                [format!("agent-{:03}", n % RINGS[0])],
            )?;
            n += 1;
        }
        tx.commit()?;
    }
    Ok(count as f64 / started.elapsed().as_secs_f64())
}

fn main() -> anyhow::Result<()> {
    let dir = tempfile::tempdir()?;
    let config = Config {
        state_dir: dir.path().join("state"),
        runtime_dir: dir.path().join("run"),
        driver: DriverKind::Fake,
        ..Config::default()
    };
    let store = Store::open(&config.database())?;
    let now = SystemClock.now_unix();
    store.blocking(|c| {
        for i in 0..AGENTS {
            agents::insert(
                c,
                &name(i).map_err(|e| hive_c0re::store::StoreError::Corrupt(e.to_string()))?,
                None,
                now,
            )?;
        }
        Ok(())
    })?;
    let driver = Arc::new(FakeDriver::with_containers(config.profile, []));
    let hive = Hive::new(config, store.clone(), driver, Arc::new(SystemClock))?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()?;

    println!(
        "broker benchmark: rings of {RINGS:?} agents, WAL + synchronous=FULL, database on {}",
        dir.path().display()
    );
    // Per ring size: messages/s and jobs per commit, one per rep.
    let mut rings: [(Vec<f64>, Vec<f64>); RINGS.len()] = Default::default();
    let (mut floor_rates, mut normal_rates) = (Vec::new(), Vec::new());
    let mut per_row: [Vec<f64>; 3] = Default::default();
    const PER_COMMIT: [usize; 3] = [1, 10, 100];
    for rep in 0..REPS {
        let mut total = 0;
        for (r, agents) in RINGS.into_iter().enumerate() {
            let before = store.write_stats();
            let (received, elapsed) = runtime.block_on(ring(&hive, agents))?;
            let after = store.write_stats();
            let rate = received as f64 / elapsed.as_secs_f64();
            let batches = (after.batches - before.batches).max(1) as f64;
            let per_commit = (after.jobs - before.jobs) as f64 / batches;
            println!(
                "run {rep}: sustained send->recv->ack, {agents} agents: {received} messages in {:.2} s = {rate:.0} messages/s; {per_commit:.1} writes per commit, one commit every {:.2} ms",
                elapsed.as_secs_f64(),
                elapsed.as_secs_f64() * 1e3 / batches
            );
            rings[r].0.push(rate);
            rings[r].1.push(per_commit);
            if r == 0 {
                total = received;
            }
        }
        let elapsed = floor(&dir.path().join(format!("floor-{rep}.db")), total, "FULL")?;
        let rate = total as f64 / elapsed.as_secs_f64();
        println!(
            "run {rep}: floor, bare rusqlite (insert + pop + ack commits): {total} messages in {:.2} s = {rate:.0} messages/s",
            elapsed.as_secs_f64()
        );
        floor_rates.push(rate);
        let elapsed = floor(
            &dir.path().join(format!("normal-{rep}.db")),
            total,
            "NORMAL",
        )?;
        let rate = total as f64 / elapsed.as_secs_f64();
        println!(
            "run {rep}: same loop with synchronous=NORMAL: {total} messages in {:.2} s = {rate:.0} messages/s",
            elapsed.as_secs_f64()
        );
        normal_rates.push(rate);
        for (i, n) in PER_COMMIT.into_iter().enumerate() {
            let rows = if n == 1 { total } else { total * 10 };
            let path = dir.path().join(format!("rows-{n}-{rep}.db"));
            let rate = rows_floor(&path, rows, n)?;
            println!("run {rep}: floor, SQLite {n} row(s) per commit: {rate:.0} rows/s");
            per_row[i].push(rate);
        }
    }
    let broker = median(rings[0].0.clone());
    for (i, n) in PER_COMMIT.into_iter().enumerate() {
        let floor = median(per_row[i].clone());
        println!(
            "ratio: broker {broker:.0} messages/s / SQLite {n} row(s) per commit {floor:.0} rows/s = {:.2}x",
            broker / floor
        );
    }
    let (floor3, normal) = (median(floor_rates), median(normal_rates));
    println!(
        "median: broker {broker:.0} messages/s, bare rusqlite insert+pop+ack floor {floor3:.0} messages/s ({:.2}x), same with NORMAL {normal:.0} messages/s ({:.2}x)",
        broker / floor3,
        broker / normal
    );
    // What this disk allows: one commit per fsync at the one-row floor's
    // rate, each carrying what the writer batched (or a full batch).
    let commits = median(per_row[0].clone());
    println!(
        "this disk: one commit (fsync) every {:.2} ms at the one-row floor; a broker commit slower than that is the writer's CPU, not the disk",
        1e3 / commits
    );
    let full = commits * MAX_BATCH as f64 / WRITES_PER_MESSAGE;
    for (r, agents) in RINGS.into_iter().enumerate() {
        let (rate, per_commit) = (median(rings[r].0.clone()), median(rings[r].1.clone()));
        let ceiling = commits * per_commit / WRITES_PER_MESSAGE;
        println!(
            "ceiling, {agents} agents: this disk's {commits:.0} commits/s x {per_commit:.1} writes per commit / {WRITES_PER_MESSAGE} writes per message = {ceiling:.0} messages/s; broker {rate:.0} messages/s = {:.2}x of it, {:.2}x of the 20,000 target",
            rate / ceiling,
            rate / 20_000.0
        );
    }
    println!(
        "ceiling with full batches ({MAX_BATCH} writes per commit): {full:.0} messages/s (the 20,000 target is {:.2}x of it)",
        20_000.0 / full
    );

    let (from_call, from_commit) = runtime.block_on(wake_latency(&hive))?;
    println!(
        "long-poll wake, send call -> recv answer: p50 {:.2} ms, p99 {:.2} ms ({WAKE_SAMPLES} samples)",
        percentile(&from_call, 0.5).as_secs_f64() * 1e3,
        percentile(&from_call, 0.99).as_secs_f64() * 1e3,
    );
    println!(
        "long-poll wake, send committed -> recv answer: p50 {:.3} ms, p99 {:.3} ms",
        percentile(&from_commit, 0.5).as_secs_f64() * 1e3,
        percentile(&from_commit, 0.99).as_secs_f64() * 1e3,
    );
    Ok(())
}
