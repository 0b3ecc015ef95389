use super::*;
use crate::store::Store;
use crate::testing::id;
use crate::wire::turns::{ToolCall, TurnOutcome};

fn turn(ended_at_ms: i64, model: Option<&str>, tokens: u64, micro_usd: u64) -> TurnReport {
    TurnReport {
        started_at_ms: ended_at_ms - 1000,
        ended_at_ms,
        message_ids: vec![1, 2],
        session_id: Some("s-1".into()),
        model: model.map(str::to_owned),
        outcome: TurnOutcome::Ok,
        error: None,
        tools: vec![ToolCall {
            name: "Bash".into(),
            ok: true,
            duration_ms: 40,
        }],
        usage: Some(TurnUsage {
            input_tokens: tokens,
            output_tokens: 1,
            cache_read_input_tokens: 0,
            cache_creation_input_tokens: 0,
        }),
        cost_micro_usd: Some(micro_usd),
        num_turns: Some(2),
        duration_ms: Some(900),
        duration_api_ms: Some(800),
    }
}

const DAY_MS: i64 = 86_400_000;

#[test]
fn a_turn_comes_back_whole_newest_first() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let first = turn(DAY_MS, Some("m"), 10, 5);
            let second = turn(DAY_MS + 5, None, 20, 7);
            insert(c, &id("a"), &first)?;
            insert(c, &id("b"), &first)?;
            let newest = insert(c, &id("a"), &second)?;
            let rows = recent(c, &id("a"), 10)?;
            assert_eq!(rows.len(), 2);
            assert_eq!((rows[0].id, &rows[0].report), (newest, &second));
            assert_eq!(rows[1].report, first);
            assert_eq!(recent(c, &id("a"), 1)?.len(), 1);
            Ok(())
        })
        .unwrap();
}

#[test]
fn usage_sums_the_window_by_agent_model_and_day() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            insert(c, &id("a"), &turn(DAY_MS - 1, Some("m1"), 1000, 1_000_000))?; // before
            insert(c, &id("a"), &turn(DAY_MS, Some("m1"), 10, 5))?;
            insert(c, &id("a"), &turn(2 * DAY_MS, Some("m2"), 20, 7))?;
            insert(c, &id("b"), &turn(2 * DAY_MS + 1, None, 30, 11))?;
            let by_agent = usage(c, DAY_MS, UsageBy::Agent)?;
            let keys: Vec<_> = by_agent.iter().map(|r| (r.key.as_str(), r.turns)).collect();
            assert_eq!(keys, [("a", 2), ("b", 1)]);
            assert_eq!(by_agent[0].usage.input_tokens, 30);
            assert_eq!(by_agent[0].usage.output_tokens, 2);
            assert_eq!(by_agent[0].cost_micro_usd, 12);
            let by_model: Vec<_> = usage(c, DAY_MS, UsageBy::Model)?
                .into_iter()
                .map(|r| (r.key, r.cost_micro_usd))
                .collect();
            assert_eq!(
                by_model,
                [("-".into(), 11), ("m1".into(), 5), ("m2".into(), 7)]
            );
            let by_day: Vec<_> = usage(c, 0, UsageBy::Day)?
                .into_iter()
                .map(|r| (r.key, r.turns))
                .collect();
            assert_eq!(
                by_day,
                [
                    ("1970-01-01".into(), 1),
                    ("1970-01-02".into(), 1),
                    ("1970-01-03".into(), 2)
                ]
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn an_agent_keeps_only_its_newest_turns() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let n = MAX_TURNS_PER_AGENT + 3;
            for i in 0..n {
                insert(c, &id("a"), &turn(DAY_MS + i, None, 1, 1))?;
            }
            insert(c, &id("b"), &turn(DAY_MS, None, 1, 1))?;
            let sums = usage(c, 0, UsageBy::Agent)?;
            assert_eq!(sums[0].turns, MAX_TURNS_PER_AGENT as u64);
            assert_eq!(sums[1].turns, 1, "another agent's turns are not trimmed");
            let oldest_kept = recent(c, &id("a"), u32::MAX)?
                .last()
                .unwrap()
                .report
                .ended_at_ms;
            assert_eq!(oldest_kept, DAY_MS + 3);
            Ok(())
        })
        .unwrap();
}
