//! The daemon's control connection to the egress service, against a
//! stand-in of the service on the dialer socket: the whole set of holds
//! first, then again each time a budget holds an agent or lets it go.

use std::time::Duration;

use tokio::io::{AsyncBufReadExt, BufReader};
use tokio::net::UnixListener;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::testing::{config_in, hive_at, id, model_request};
use crate::wire::egress::HoldsLine;
use crate::wire::model_log::{MeterRow, Tokens};

/// A metered request of `output` tokens, at a cost of a micro-dollar.
fn row(output: u64) -> MeterRow {
    MeterRow {
        at_ms: 1_000_000,
        tokens: Tokens {
            output,
            ..Tokens::default()
        },
        cost_micro_usd: Some(1),
        ..model_request()
    }
}

/// The next holds line the daemon writes, within 2 s.
async fn next_line<R: AsyncBufReadExt + Unpin>(from: &mut R) -> HoldsLine {
    let mut text = String::new();
    tokio::time::timeout(Duration::from_secs(2), from.read_line(&mut text))
        .await
        .expect("a holds line within 2 s")
        .unwrap();
    serde_json::from_str(&text).unwrap()
}

#[tokio::test]
async fn a_reached_budget_is_pushed_to_the_egress_service_and_raising_it_pushes_the_release() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.budget_hold_secs = 7;
    let (hive, _) = hive_at(config, 1_000);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    std::fs::create_dir_all(hive.config().runtime_dir.clone()).unwrap();
    let listener = UnixListener::bind(hive.config().egress_dialer_socket()).unwrap();
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(run(hive.clone(), shutdown.clone()));
    let (service, _) = listener.accept().await.unwrap();
    let mut from = BufReader::new(service);
    assert_eq!(
        next_line(&mut from).await,
        HoldsLine::default(),
        "nothing held"
    );
    hive.usage()
        .set_budget(Some(&alice), "100tokens/day".parse().unwrap())
        .await
        .unwrap();
    hive.meter(&alice, row(150)).await.unwrap();
    let line = next_line(&mut from).await;
    let hold = &line.holds[&alice];
    assert_eq!(line.holds.len(), 1, "{line:?}");
    assert_eq!(hold.budget, "100tokens/day on alice and under");
    assert_eq!(hold.raise, "hivectl budget set alice AMOUNT");
    assert_eq!(hold.wait_ms, 7_000);
    assert!(hold.spent.contains("150"), "{hold:?}");
    // The dial line of a connection made now carries the same hold.
    assert_eq!(hive.usage().gateway_hold(&alice).as_ref(), Some(hold));
    hive.usage()
        .set_budget(Some(&alice), "1000tokens/day".parse().unwrap())
        .await
        .unwrap();
    assert_eq!(next_line(&mut from).await, HoldsLine::default(), "let go");
    assert_eq!(hive.usage().gateway_hold(&alice), None);
    // The service restarting: the daemon connects again and says it all.
    hive.usage()
        .set_budget(Some(&alice), "10tokens/day".parse().unwrap())
        .await
        .unwrap();
    assert!(next_line(&mut from).await.holds.contains_key(&alice));
    drop(from);
    let (again, _) = tokio::time::timeout(Duration::from_secs(3), listener.accept())
        .await
        .expect("connected again within the first retries")
        .unwrap();
    let mut from = BufReader::new(again);
    assert!(next_line(&mut from).await.holds.contains_key(&alice));
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(1), task)
        .await
        .expect("stops with the daemon")
        .unwrap();
}

#[tokio::test]
async fn without_an_egress_service_the_control_connection_retries_and_stops_with_the_daemon() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _) = hive_at(config_in(dir.path()), 1_000);
    let shutdown = CancellationToken::new();
    let task = tokio::spawn(run(hive.clone(), shutdown.clone()));
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!task.is_finished(), "it keeps trying");
    // The service comes up: the next try reaches it.
    std::fs::create_dir_all(hive.config().runtime_dir.clone()).unwrap();
    let listener = UnixListener::bind(hive.config().egress_dialer_socket()).unwrap();
    let (service, _) = tokio::time::timeout(Duration::from_secs(3), listener.accept())
        .await
        .expect("reached within the first retries")
        .unwrap();
    let mut from = BufReader::new(service);
    assert_eq!(next_line(&mut from).await, HoldsLine::default());
    shutdown.cancel();
    tokio::time::timeout(Duration::from_secs(1), task)
        .await
        .expect("stops with the daemon")
        .unwrap();
}
