//! The egress audit through the service: records wait, merge and are
//! bounded per agent in memory, are written within `FLUSH_EVERY`, and are
//! read back per agent.

use crate::testing::{config_in, hive_at, id};
use crate::wire::egress_audit::{EgressRecord, MAX_EGRESS_LOG_LIMIT, Verdict};

use super::{FLUSH_EVERY, Pending};
use crate::service::{Hive, HiveError};

fn hive() -> (Hive, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 10_000);
    (hive, dir)
}

fn record(agent: &str, verdict: Verdict, target: Option<&str>, at_ms: i64) -> EgressRecord {
    EgressRecord {
        agent: id(agent),
        at_ms,
        verdict,
        target: target.map(str::to_owned),
        address: None,
        reason: None,
        up: 1,
        down: 1,
        ms: 1,
        count: 1,
    }
}

#[test]
fn one_agents_flood_waiting_for_its_write_drops_only_its_own_oldest_records() {
    let mut pending = Pending::default();
    pending.add(record("bob", Verdict::Allowed, Some("b.test:443"), 0), 100);
    for n in 0..10_000 {
        pending.add(
            record("alice", Verdict::Allowed, Some("a.test:443"), n),
            100,
        );
    }
    assert_eq!(pending.rows(), 101);
    let taken = pending.take();
    assert_eq!(taken[0].agent, id("bob"));
    assert_eq!(taken[1].at_ms, 9_900);
    assert_eq!(taken.last().unwrap().at_ms, 9_999);
    assert_eq!(pending.rows(), 0);
}

#[test]
fn waiting_refusals_of_one_minute_are_counted_into_one_record_across_an_allowed_one() {
    let mut pending = Pending::default();
    for n in 0..5_000 {
        pending.add(record("alice", Verdict::Limited, None, n), 100);
    }
    pending.add(
        record("alice", Verdict::Allowed, Some("a.test:443"), 5_000),
        100,
    );
    pending.add(record("alice", Verdict::Limited, None, 5_001), 100);
    let taken = pending.take();
    let shape: Vec<_> = taken.iter().map(|r| (r.verdict, r.count)).collect();
    assert_eq!(shape, [(Verdict::Allowed, 1), (Verdict::Limited, 5_001)]);
}

#[tokio::test]
async fn a_recorded_connection_is_in_the_agents_log_within_the_flush_interval() {
    let (hive, _dir) = hive();
    hive.record_egress(record("ruth", Verdict::Allowed, Some("a.test:443"), 1));
    hive.record_egress(record("ruth", Verdict::Refused, Some("b.test:443"), 2));
    tokio::time::sleep(FLUSH_EVERY * 3).await;
    let rows = hive.egress_log(&id("ruth"), 10).await.unwrap();
    let got: Vec<_> = rows.iter().map(|r| r.verdict).collect();
    assert_eq!(got, [Verdict::Allowed, Verdict::Refused]);
}

#[tokio::test]
async fn a_flood_of_one_agent_leaves_anothers_rows_and_is_bounded_by_the_config() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.egress_audit_rows_per_agent = std::num::NonZeroU32::new(50).unwrap();
    let (hive, _driver) = hive_at(config, 10_000);
    hive.record_egress(record("ruth", Verdict::Refused, Some("x.test:443"), 1));
    for n in 0..3_000 {
        let target = format!("h{n}.test:443");
        hive.record_egress(record("alice", Verdict::Allowed, Some(&target), n));
    }
    hive.flush_egress().await;
    assert_eq!(hive.egress_log(&id("ruth"), 100).await.unwrap().len(), 1);
    let alice = hive.egress_log(&id("alice"), 100).await.unwrap();
    assert_eq!(alice.len(), 50);
    assert_eq!(
        alice.last().unwrap().target.as_deref(),
        Some("h2999.test:443")
    );
}

#[tokio::test]
async fn an_unknown_name_and_a_limit_out_of_range_are_refused_with_their_codes() {
    let (hive, _dir) = hive();
    assert!(matches!(
        hive.egress_log(&id("ghost"), 10).await,
        Err(HiveError::UnknownAgent(_))
    ));
    for limit in [0, MAX_EGRESS_LOG_LIMIT + 1] {
        let err = hive.egress_log(&id("ruth"), limit).await.unwrap_err();
        assert!(matches!(err, HiveError::BadArgument(_)), "{err}");
        assert!(err.to_string().contains(&format!("limit {limit}")), "{err}");
    }
    // A managed agent with nothing dialled yet has an empty log.
    assert!(hive.egress_log(&id("ruth"), 10).await.unwrap().is_empty());
    // A name with rows and no agent (destroyed, not purged) is read.
    hive.record_egress(record("gone", Verdict::Allowed, Some("a.test:443"), 1));
    hive.flush_egress().await;
    assert_eq!(hive.egress_log(&id("gone"), 10).await.unwrap().len(), 1);
}
