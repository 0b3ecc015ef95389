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
