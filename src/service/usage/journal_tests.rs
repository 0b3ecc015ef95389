//! The turn journal through the service: a report is checked and kept,
//! and usage sums it by agent and by subtree (a parent's row covers its
//! children's turns).

use crate::testing::{config_in, hive_at, id};
use crate::wire::turns::{ToolCall, TurnOutcome, TurnReport, TurnUsage, UsageBy};

use crate::service::{Hive, HiveError};

fn hive() -> (Hive, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 10_000);
    (hive, dir)
}

fn report(ended_at_ms: i64, input_tokens: u64, micro_usd: u64) -> TurnReport {
    TurnReport {
        started_at_ms: ended_at_ms - 500,
        ended_at_ms,
        message_ids: vec![7],
        session_id: None,
        model: Some("claude-test".into()),
        outcome: TurnOutcome::Ok,
        error: None,
        tools: vec![ToolCall {
            name: "Bash".into(),
            ok: true,
            duration_ms: 3,
        }],
        usage: Some(TurnUsage {
            input_tokens,
            ..TurnUsage::default()
        }),
        cost_micro_usd: Some(micro_usd),
        num_turns: Some(1),
        duration_ms: None,
        duration_api_ms: None,
    }
}

#[tokio::test]
async fn usage_by_subtree_adds_every_descendants_turns_to_its_ancestors() {
    let (hive, _dir) = hive();
    for name in ["lead", "dev"] {
        hive.spawn(&id(name)).await.unwrap();
    }
    hive.set_parent(&id("dev"), Some(&id("lead")))
        .await
        .unwrap();
    hive.usage()
        .report_turn(&id("lead"), report(9_000_000, 10, 1_000))
        .await
        .unwrap();
    hive.usage()
        .report_turn(&id("dev"), report(9_500_000, 5, 500))
        .await
        .unwrap();
    hive.usage()
        .report_turn(&id("dev"), report(1_000, 1, 1))
        .await
        .unwrap(); // long ago

    let by_agent = hive.usage().sums(Some(3600), UsageBy::Agent).await.unwrap();
    let sums: Vec<_> = by_agent
        .iter()
        .map(|r| (r.key.as_str(), r.cost_micro_usd))
        .collect();
    assert_eq!(sums, [("dev", 500), ("lead", 1_000)]);
    let subtree = hive
        .usage()
        .sums(Some(3600), UsageBy::Subtree)
        .await
        .unwrap();
    let sums: Vec<_> = subtree
        .iter()
        .map(|r| {
            (
                r.key.as_str(),
                r.turns,
                r.usage.input_tokens,
                r.cost_micro_usd,
            )
        })
        .collect();
    // lead's subtree: lead, dev; ruth (the manager) is above them both.
    assert_eq!(
        sums,
        [
            ("dev", 1, 5, 500),
            ("lead", 2, 15, 1_500),
            ("ruth", 2, 15, 1_500)
        ]
    );
    let all = hive.usage().sums(None, UsageBy::Agent).await.unwrap();
    assert_eq!(all.iter().find(|r| r.key == "dev").unwrap().turns, 2);
}

#[tokio::test]
async fn a_report_breaking_the_caps_or_of_no_agent_is_refused_and_not_kept() {
    let (hive, _dir) = hive();
    hive.spawn(&id("ann")).await.unwrap();
    let mut bad = report(9_000_000, 1, 1);
    bad.tools[0].name = "Bash\nInjected".into();
    let err = hive.usage().report_turn(&id("ann"), bad).await.unwrap_err();
    assert!(matches!(err, HiveError::BadArgument(_)), "{err}");
    let mut backwards = report(9_000_000, 1, 1);
    backwards.started_at_ms = backwards.ended_at_ms + 1;
    assert!(
        hive.usage()
            .report_turn(&id("ann"), backwards)
            .await
            .is_err()
    );
    let err = hive
        .usage()
        .report_turn(&id("nobody"), report(9_000_000, 1, 1))
        .await
        .unwrap_err();
    assert!(matches!(err, HiveError::UnknownAgent(_)), "{err}");
    assert!(hive.usage().turns(&id("ann"), 10).await.unwrap().is_empty());
    let err = hive.usage().turns(&id("nobody"), 10).await.unwrap_err();
    assert!(matches!(err, HiveError::UnknownAgent(_)), "{err}");
}

#[tokio::test]
async fn a_destroyed_agents_turns_and_spend_stay_until_it_is_purged() {
    let (hive, _dir) = hive();
    hive.spawn(&id("old")).await.unwrap();
    let kept = hive
        .usage()
        .report_turn(&id("old"), report(9_000_000, 1, 1))
        .await
        .unwrap();
    hive.destroy(&id("old"), false).await.unwrap();
    let rows = hive.usage().turns(&id("old"), 10).await.unwrap();
    assert_eq!(rows.iter().map(|r| r.id).collect::<Vec<_>>(), [kept]);
    let spent = hive.usage().sums(None, UsageBy::Agent).await.unwrap();
    assert_eq!(spent.len(), 1, "a destroyed agent's spend still counts");
    hive.destroy(&id("old"), true).await.unwrap();
    assert!(
        hive.usage().turns(&id("old"), 10).await.is_err(),
        "purged with the agent"
    );
    // Its sums go too: a new agent of the name starts at nothing spent.
    hive.spawn(&id("old")).await.unwrap();
    assert!(
        hive.usage()
            .sums(None, UsageBy::Agent)
            .await
            .unwrap()
            .is_empty()
    );
}
