use std::sync::Arc;

use super::*;
use crate::clock::ManualClock;
use crate::store::Store;
use crate::testing::{config_in, hive_on, id, model_request};
use crate::wire::codes::ErrorCode;
use crate::wire::model_log::Tokens;

fn row(input: u64) -> MeterRow {
    MeterRow {
        at_ms: 5,
        model: None,
        tokens: Tokens {
            input,
            ..Tokens::default()
        },
        ..model_request()
    }
}

#[tokio::test]
async fn a_recorded_request_is_in_the_agents_model_log_and_an_unknown_name_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _) = hive_on(
        config_in(dir.path()),
        Store::open_in_memory().unwrap(),
        Arc::new(ManualClock::new(1_000)),
    );
    hive.spawn(&id("alice")).await.unwrap();
    assert!(hive.model_log(&id("alice"), 10).await.unwrap().is_empty());
    hive.record_model_request(&id("alice"), row(42));
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = hive.model_log(&id("alice"), 10).await.unwrap();
        if !rows.is_empty() {
            break;
        }
        tokio::time::sleep(std::time::Duration::from_millis(10)).await;
    }
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].request.tokens.input, 42);
    let err = hive.model_log(&id("ghost"), 10).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnknownAgent, "{err}");
    for limit in [0, 10_001] {
        let err = hive.model_log(&id("alice"), limit).await.unwrap_err();
        assert!(err.to_string().contains("out of range"), "{err}");
    }
}
