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
fn an_agent_keeps_only_its_newest_turns_and_usage_still_counts_every_one() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let n = MAX_TURNS_PER_AGENT + 3;
            for i in 0..n {
                insert(c, &id("a"), &turn(DAY_MS + i, None, 1, 1))?;
            }
            insert(c, &id("b"), &turn(DAY_MS, None, 1, 1))?;
            let kept = recent(c, &id("a"), u32::MAX)?;
            assert_eq!(kept.len() as i64, MAX_TURNS_PER_AGENT);
            assert_eq!(kept.last().unwrap().report.ended_at_ms, DAY_MS + 3);
            assert_eq!(recent(c, &id("b"), u32::MAX)?.len(), 1, "not trimmed");
            // What was spent stays counted: the day's sums keep every turn.
            let sums = usage(c, 0, UsageBy::Agent)?;
            assert_eq!(sums[0].turns, n as u64);
            assert_eq!(sums[0].cost_micro_usd, n as u64);
            Ok(())
        })
        .unwrap();
}

/// The sums `usage` must answer, from the reports themselves.
fn brute_force(
    reports: &[(&str, TurnReport)],
    since_ms: i64,
    by: UsageBy,
) -> Vec<(String, u64, u64)> {
    let mut sums: std::collections::BTreeMap<String, (u64, u64)> = Default::default();
    for (agent, r) in reports.iter().filter(|(_, r)| r.ended_at_ms >= since_ms) {
        let key = match by {
            UsageBy::Agent | UsageBy::Subtree => (*agent).to_owned(),
            UsageBy::Model => r.model.clone().unwrap_or_else(|| "-".into()),
            UsageBy::Day => {
                let d = r.ended_at_ms / DAY_MS;
                format!("1970-01-{:02}", d + 1)
            }
        };
        let e = sums.entry(key).or_default();
        e.0 += 1;
        e.1 += r.cost_micro_usd.unwrap_or(0);
    }
    sums.into_iter().map(|(k, (n, c))| (k, n, c)).collect()
}

#[test]
fn usage_from_the_day_sums_agrees_with_the_turns_for_any_window() {
    let store = Store::open_in_memory().unwrap();
    // Turns on four days, on and around midnights, two agents, two models.
    let mut reports = Vec::new();
    for (i, at) in [
        0,
        1,
        DAY_MS - 1,
        DAY_MS,
        DAY_MS + 5,
        2 * DAY_MS - 1,
        2 * DAY_MS,
        3 * DAY_MS + 7,
        3 * DAY_MS + DAY_MS / 2,
    ]
    .into_iter()
    .enumerate()
    {
        let agent = if i % 2 == 0 { "a" } else { "b" };
        let model = (i % 3 != 0).then_some("m1");
        reports.push((agent, turn(at, model, 10, 1 + i as u64)));
    }
    store
        .blocking(|c| {
            for (agent, r) in &reports {
                insert(c, &id(agent), r)?;
            }
            for since in [
                0,
                1,
                DAY_MS - 1,
                DAY_MS,
                DAY_MS + 1,
                2 * DAY_MS + 1,
                3 * DAY_MS,
                3 * DAY_MS + 8,
                10 * DAY_MS,
            ] {
                for by in [UsageBy::Agent, UsageBy::Model, UsageBy::Day] {
                    let got: Vec<_> = usage(c, since, by)?
                        .into_iter()
                        .map(|r| (r.key, r.turns, r.cost_micro_usd))
                        .collect();
                    assert_eq!(
                        got,
                        brute_force(&reports, since, by),
                        "since {since} by {by:?}"
                    );
                }
            }
            Ok(())
        })
        .unwrap();
}
