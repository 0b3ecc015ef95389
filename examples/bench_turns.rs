//! Benchmark (prints figures; not a test): the turn journal at the size its
//! retention allows — 100 agents × 10,000 turns (1,000,000 rows, ended over
//! the last 30 days) in a real SQLite file — in-process with the fake
//! driver:
//! - `usage` (the service call behind host.sock `usage` and the dashboard's
//!   usage page) over 24 h, 7 d and every turn, by agent, subtree and day:
//!   p50 and p99 of 200 calls each, and each p99 as a ratio against the p99
//!   of `agent_status()` measured in the same run (the operator's most
//!   frequent read);
//! - what reporting a turn adds to a turn's host-side writes: the p50 of a
//!   message's round (`send` + `recv` + `ack_turn`) with and without a
//!   `report_turn` before the ack, 16 agents at once, alternated.
//!
//! Run: `cargo run --release --example bench_turns`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure

mod support;

use std::time::{Duration, Instant};

use hive_c0re::clock::{Clock, SystemClock};
use hive_c0re::service::Hive;
use hive_c0re::store::turns;
use hive_c0re::wire::ident::Ident;
use hive_c0re::wire::turns::{TurnOutcome, TurnReport, TurnUsage, UsageBy};

const AGENTS: usize = 100;
const TURNS_PER_AGENT: i64 = 10_000;
const CALLS: usize = 200;
const ROUNDS: usize = 300;
const CONCURRENT: usize = 16;

fn percentile(sorted: &[Duration], p: f64) -> Duration {
    sorted[((sorted.len() as f64 - 1.0) * p).round() as usize]
}

fn report(ended_at_ms: i64, model: &str) -> TurnReport {
    TurnReport {
        started_at_ms: ended_at_ms - 20_000,
        ended_at_ms,
        message_ids: vec![1],
        session_id: Some("s".into()),
        model: Some(model.into()),
        outcome: TurnOutcome::Ok,
        error: None,
        tools: Vec::new(),
        usage: Some(TurnUsage {
            input_tokens: 1200,
            output_tokens: 300,
            cache_read_input_tokens: 5000,
            cache_creation_input_tokens: 100,
        }),
        cost_micro_usd: Some(21_000),
        num_turns: Some(3),
        duration_ms: Some(20_000),
        duration_api_ms: Some(15_000),
    }
}

fn name(i: usize) -> Ident {
    Ident::new(format!("agent-{i}")).unwrap()
}

/// `CALLS` sequential calls of `call`; the latencies, sorted.
fn timed<F, Fut>(rt: &tokio::runtime::Runtime, calls: usize, call: F) -> Vec<Duration>
where
    F: Fn() -> Fut,
    Fut: std::future::Future<Output = usize>,
{
    let mut lat: Vec<Duration> = (0..calls)
        .map(|_| {
            let t = Instant::now();
            assert!(rt.block_on(call()) > 0);
            t.elapsed()
        })
        .collect();
    lat.sort();
    lat
}

/// `CONCURRENT` agents each doing `ROUNDS` message rounds (send to itself,
/// recv, optionally report, ack); every round's latency, sorted.
fn rounds(rt: &tokio::runtime::Runtime, hive: &Hive, with_report: bool) -> Vec<Duration> {
    rt.block_on(async {
        let tasks: Vec<_> = (0..CONCURRENT)
            .map(|i| {
                let (hive, me) = (hive.clone(), name(i));
                tokio::spawn(async move {
                    let mut lat = Vec::with_capacity(ROUNDS);
                    for _ in 0..ROUNDS {
                        let t = Instant::now();
                        hive.messaging()
                            .send(&me, me.as_str(), "work".into(), None)
                            .await
                            .unwrap();
                        let got = hive
                            .messaging()
                            .recv(&me, None, Some(1), std::future::pending())
                            .await
                            .unwrap();
                        assert_eq!(got.len(), 1);
                        if with_report {
                            let ended = SystemClock.now_unix() * 1000;
                            hive.usage()
                                .report_turn(&me, report(ended, "m"))
                                .await
                                .unwrap();
                        }
                        hive.messaging().ack_turn(&me).await.unwrap();
                        lat.push(t.elapsed());
                    }
                    lat
                })
            })
            .collect();
        support::gather(tasks).await
    })
}

fn main() {
    let bench = support::hive_with(AGENTS);
    let (rt, hive, store) = (&bench.rt, &bench.hive, &bench.store);
    rt.block_on(async {
        // A tree: agent-i under agent-(i/10), so subtree sums have depth.
        for i in 1..AGENTS {
            hive.set_parent(&name(i), Some(&name(i / 10)))
                .await
                .unwrap();
        }
    });

    let now_ms = SystemClock.now_unix() * 1000;
    let span_ms = 30 * 86_400_000_i64;
    let t = Instant::now();
    store
        .blocking(|c| {
            let tx = c.transaction()?;
            for i in 0..AGENTS {
                let agent = name(i);
                for k in 0..TURNS_PER_AGENT {
                    let ended = now_ms - span_ms + span_ms * k / TURNS_PER_AGENT;
                    let model = if k % 3 == 0 { "opus" } else { "sonnet" };
                    turns::insert(&tx, &agent, &report(ended, model))?;
                }
            }
            tx.commit()?;
            Ok(())
        })
        .unwrap();
    println!(
        "journal: {AGENTS} agents x {TURNS_PER_AGENT} turns over 30 days inserted in {:.1?}",
        t.elapsed()
    );

    let status = timed(rt, CALLS, || async {
        hive.agent_status().await.unwrap().len()
    });
    let status_p99 = percentile(&status, 0.99);
    println!(
        "agent_status(), {AGENTS} agents: p50 {:.2?}, p99 {status_p99:.2?}",
        percentile(&status, 0.50)
    );
    for (window, since) in [
        ("24h", Some(86_400)),
        ("7d", Some(7 * 86_400)),
        ("all", None),
    ] {
        for by in [UsageBy::Agent, UsageBy::Subtree, UsageBy::Day] {
            let lat = timed(rt, CALLS, || async {
                hive.usage().sums(since, by).await.unwrap().len()
            });
            let p99 = percentile(&lat, 0.99);
            println!(
                "usage since {window:>3} by {:<7}: p50 {:>9.2?}, p99 {:>9.2?} = {:>7.1}x agent_status's p99",
                by.as_str(),
                percentile(&lat, 0.50),
                p99,
                p99.as_secs_f64() / status_p99.as_secs_f64()
            );
        }
    }

    // Alternated, twice each: a message round without, then with, a report.
    let mut p50 = [Vec::new(), Vec::new()];
    for _ in 0..2 {
        for (slot, with_report) in [(0, false), (1, true)] {
            p50[slot].push(percentile(&rounds(rt, hive, with_report), 0.50));
        }
    }
    let median = |v: &[Duration]| {
        let mut v = v.to_vec();
        v.sort();
        v[v.len() / 2]
    };
    let (without, with) = (median(&p50[0]), median(&p50[1]));
    println!(
        "a message round (send, recv, ack), {CONCURRENT} agents at once: p50 {without:.2?} without a turn report, {with:.2?} with one = {:.2}x",
        with.as_secs_f64() / without.as_secs_f64()
    );
}
