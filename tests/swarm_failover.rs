//! Issue 30, the swarm roster through NATS failovers: every node of a real
//! three-node JetStream cluster is killed in turn under the daemon's own
//! permission table, and a new agent must reach every hive within the
//! issue's 30 s. Each hive puts a heartbeat every 5 s and takes a roster
//! watch silent for 15 s for dead (async-nats 0.51's ordered watch can go
//! silent after a node's death without an error): it is recreated with the
//! bucket's current rows. Prints each kill's figure (spawn to listed by
//! every hive). Not in `tests/run`: it met the bound in 6 of 7 runs (the
//! 7th, in a loaded CI run, missed it after the second node's death). By hand:
//! `cargo test --test swarm_failover -- --ignored --nocapture`
//! (`HIVE_NATS_LOG=DIR` keeps the nodes' logs). Without the roster-recreate
//! grant of `src/swarm/permissions.rs` it fails every time, with the
//! server's `Publish Violation` on the watch's recreate.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(dead_code)] // the shared swarm support serves tests/swarm.rs too

#[path = "support/common/mod.rs"]
mod common;
#[path = "support/swarm/hive.rs"]
mod swarm_hive;
#[path = "support/swarm/mod.rs"]
mod swarm_support;

use std::collections::BTreeSet;
use std::time::{Duration, Instant};

use swarm_hive::Hive;
use swarm_support::{Cluster, SWARM, wait_until};

const HIVES: [&str; 3] = ["hive-a", "hive-b", "hive-c"];

/// Issue 30: after the NATS node a hive was connected to died, its client
/// reconnected elsewhere and the library recreated the roster watch under a
/// subject the documented permissions refused; the hive never heard of a
/// new agent again, and 90 s later the other hives' rows aged out of its
/// `status --swarm`. Every node is killed (-9) in turn, so every hive loses
/// the node it is on once; the permissions are the daemon's own table.
#[test]
#[ignore = "flaky: 6 of 7 runs met the 30 s bound; run by hand"]
fn the_swarm_roster_survives_each_nats_node_dying_under_the_documented_permissions() {
    let mut cluster = Cluster::start(&HIVES);
    let base = tempfile::tempdir().unwrap();
    let hives: Vec<Hive> = HIVES
        .iter()
        .map(|&h| Hive::start(base.path(), h, cluster.urls()))
        .collect();
    let mut expected: BTreeSet<String> = BTreeSet::new();
    for (k, h) in hives.iter().enumerate() {
        h.spawn_agents(&[format!("a{k}")]);
        expected.insert(format!("{}:a{k}", HIVES[k]));
    }
    let all_listed =
        |expected: &BTreeSet<String>| hives.iter().all(|h| h.swarm_roster().is_superset(expected));
    wait_until(Duration::from_secs(60), "the first roster", || {
        all_listed(&expected)
    });
    let first_kill = Instant::now();
    for i in 0..cluster.nodes.len() {
        cluster.nodes[i].kill();
        std::thread::sleep(Duration::from_secs(3));
        let k = (i + 1) % hives.len();
        hives[k].spawn_agents(&[format!("late{i}")]);
        expected.insert(format!("{}:late{i}", HIVES[k]));
        // The bound. A watch that went silent is recreated after
        // 15 s (roster::WATCH_SILENCE); a put the bus did not take is
        // retried at the next 5 s beat.
        let spawned = Instant::now();
        wait_until(
            Duration::from_secs(30),
            &format!("every hive to list late{i} after node {} died", i + 1),
            || all_listed(&expected),
        );
        println!(
            "figure: node {} killed, late{i} spawned on {} 3 s later: listed by every hive {} ms after its spawn",
            i + 1,
            HIVES[k],
            spawned.elapsed().as_millis()
        );
        cluster.restart(i);
        cluster.wait_until_replicas_current(&[
            &format!("KV_hive-{SWARM}-roster"),
            &format!("HIVE-{SWARM}"),
        ]);
    }
    // Past the roster's 90 s age-out: rows kept fresh by a live watch.
    let age_out = Duration::from_secs(95);
    if let Some(rest) = age_out.checked_sub(first_kill.elapsed()) {
        std::thread::sleep(rest);
    }
    for h in &hives {
        let rows = h.swarm_roster();
        assert!(
            rows.is_superset(&expected),
            "{rows:?} lacks some of {expected:?}"
        );
    }
}
