use super::*;
use crate::store::Store;
use crate::testing::id;

fn row(n: u64) -> MeterRow {
    MeterRow {
        at_ms: 1_000 + n as i64,
        route: "POST /v1/messages".into(),
        model: Some("claude-haiku-4-5".into()),
        status: 200,
        tokens: Tokens {
            input: n,
            output: 2 * n,
            cache_write: 0,
            cache_read: 1,
        },
        cost_micro_usd: n.is_multiple_of(2).then_some(n * 10),
        ms: 7,
        request_id: Some(format!("req_{n}")),
        error: None,
    }
}

#[tokio::test]
async fn rows_read_back_oldest_first_as_written_and_each_agent_keeps_its_newest_within_its_bound() {
    let store = Store::open_in_memory().unwrap();
    let (alice, bob) = (id("alice"), id("bob"));
    let a = alice.clone();
    let b = bob.clone();
    store
        .run(move |c| {
            write(c, &b, &[row(100)], 3)?;
            for n in 1..=5 {
                write(c, &a, &[row(n)], 3)?;
            }
            Ok(())
        })
        .await
        .unwrap();
    let a = alice.clone();
    let rows = store.read(move |c| recent(c, &a, 10)).await.unwrap();
    let got: Vec<MeterRow> = rows.iter().map(|r| r.request.clone()).collect();
    assert_eq!(got, [row(3), row(4), row(5)]);
    assert!(rows.iter().all(|r| r.agent == alice));
    let b = bob.clone();
    let rows = store.read(move |c| recent(c, &b, 10)).await.unwrap();
    assert_eq!(rows.len(), 1, "alice's requests never push bob's out");
    let a = alice.clone();
    let newest = store.read(move |c| recent(c, &a, 1)).await.unwrap();
    assert_eq!(newest[0].request, row(5));
    let gone = store.run(|c| forget(c, "alice")).await.unwrap();
    assert_eq!(gone, 3);
}

/// A priced request of `agent`'s at `at_ms`: `tokens` output tokens for
/// `micro` millionths.
fn priced(at_ms: i64, tokens: u64, micro: Option<u64>) -> MeterRow {
    MeterRow {
        at_ms,
        tokens: Tokens {
            output: tokens,
            ..Tokens::default()
        },
        cost_micro_usd: micro,
        ..row(0)
    }
}

async fn by_agent(store: &Store, since_ms: i64) -> Vec<(String, MeteredUsage)> {
    store
        .read(move |c| spend(c, since_ms, UsageBy::Agent))
        .await
        .unwrap()
}

const HOUR: i64 = 3_600_000;

#[tokio::test]
async fn a_written_row_adds_to_its_hours_sums_and_a_window_counts_only_what_came_inside_it() {
    let store = Store::open_in_memory().unwrap();
    let (a, b) = (id("alice"), id("bob"));
    store
        .run(move |c| {
            write(c, &a, &[priced(10 * HOUR + 100, 5, Some(50))], 100)?;
            write(c, &a, &[priced(10 * HOUR + 900, 7, None)], 100)?;
            write(c, &a, &[priced(11 * HOUR + 5, 1, Some(10))], 100)?;
            write(c, &b, &[priced(11 * HOUR + 6, 2, Some(20))], 100)
        })
        .await
        .unwrap();
    let all = store.read(|c| spend(c, 0, UsageBy::Agent)).await.unwrap();
    assert_eq!(all.len(), 2, "{all:?}");
    let (key, alice) = &all[0];
    assert_eq!(key, "alice");
    assert_eq!(
        (
            alice.requests,
            alice.tokens.output,
            alice.cost_micro_usd,
            alice.unpriced
        ),
        (3, 13, 60, 1),
        "the unpriced request counts its tokens, not a cost"
    );
    // From inside hour 10: the whole hour's sums less its rows before.
    let late = store
        .read(|c| spend(c, 10 * HOUR + 500, UsageBy::Agent))
        .await
        .unwrap();
    assert_eq!(
        (
            late[0].1.requests,
            late[0].1.tokens.output,
            late[0].1.cost_micro_usd
        ),
        (2, 8, 10)
    );
    let models = store.read(|c| spend(c, 0, UsageBy::Model)).await.unwrap();
    assert_eq!(models[0].0, "claude-haiku-4-5");
    assert_eq!(models[0].1.requests, 4);
    let days = store.read(|c| spend(c, 0, UsageBy::Day)).await.unwrap();
    assert_eq!(days[0].0, "1970-01-01");
    let a = id("alice");
    let turn = store
        .read(move |c| between(c, &a, 10 * HOUR, 10 * HOUR + 900))
        .await
        .unwrap();
    assert_eq!((turn.requests, turn.tokens.output), (2, 12));
}

#[tokio::test]
async fn pruning_rows_past_the_bound_keeps_the_spend_of_every_window_that_starts_on_an_hour() {
    let store = Store::open_in_memory().unwrap();
    let a = id("alice");
    // Ten requests over two hours, with room for three rows.
    store
        .run(move |c| {
            for n in 0..10 {
                write(c, &a, &[priced(8 * HOUR + n * HOUR / 5, 1, Some(100))], 3)?;
            }
            Ok(())
        })
        .await
        .unwrap();
    let a = id("alice");
    let kept = store.read(move |c| recent(c, &a, 100)).await.unwrap();
    assert_eq!(kept.len(), 3, "the rows are bounded");
    let all = by_agent(&store, 0).await;
    assert_eq!(
        (all[0].1.requests, all[0].1.cost_micro_usd),
        (10, 1000),
        "every request still counts"
    );
    assert_eq!(by_agent(&store, 9 * HOUR).await[0].1.requests, 5);
    // A window starting inside an hour whose early rows are gone counts
    // that whole hour: more than was spent there, never less.
    let inside = by_agent(&store, 8 * HOUR + HOUR / 2).await;
    assert_eq!(inside[0].1.requests, 10);
    let gone = store.run(|c| forget(c, "alice")).await.unwrap();
    assert_eq!(gone, 3);
    assert!(
        by_agent(&store, 0).await.is_empty(),
        "a purge takes the sums too"
    );
}
