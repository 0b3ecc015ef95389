//! Spend is the meter's (issue 46, step 2): what an agent's harness
//! reports of a turn — which any process in its container can forge — is
//! shown as reported and never summed into any spend figure; a metered
//! request that reaches a budget holds the next `recv` at once, report or
//! no report.

use std::future::pending;

use super::tests::{NOW, budget_words, cap, hive_in, meter, poll, report};
use crate::testing::id;
use crate::wire::ident::Ident;
use crate::wire::turns::UsageBy;

/// A hive in `dir` with alice spawned under a budget of 1usd/day.
async fn alice_with_a_dollar_a_day(dir: &std::path::Path) -> (crate::service::Hive, Ident) {
    let (hive, _clock) = hive_in(dir, NOW);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    hive.usage()
        .set_budget(Some(&alice), cap("1usd/day"))
        .await
        .unwrap();
    (hive, alice)
}

#[tokio::test]
async fn a_forged_report_turn_of_five_dollars_or_of_nothing_changes_no_spend_figure() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, alice) = alice_with_a_dollar_a_day(dir.path()).await;
    meter(&hive, "alice", NOW, 300_000, 10).await;
    for (forged_usd, forged_tokens) in [(5_000_000, 1_000_000), (0, 0)] {
        hive.usage()
            .report_turn(&alice, report(NOW, forged_usd, forged_tokens))
            .await
            .unwrap();
        let budgets = hive.usage().budgets().await.unwrap();
        assert_eq!(
            (budgets[0].spent, budgets[0].reached),
            (300_000, false),
            "the budget counts the metered request only"
        );
        assert_eq!(budget_words(&hive, "alice").await, None);
        let row = hive.row(&alice).await.unwrap().unwrap();
        assert_eq!(row.spent_today_micro_usd, Some(300_000));
        let counters = hive.usage().turn_counters();
        assert_eq!(counters[&alice].metered.cost_micro_usd, 300_000);
    }
    let sums = hive.usage().sums(None, UsageBy::Agent).await.unwrap();
    let row = sums.iter().find(|r| r.key == "alice").unwrap();
    assert_eq!(
        (row.metered.requests, row.metered.cost_micro_usd),
        (1, 300_000)
    );
    assert_eq!(
        (row.turns, row.cost_micro_usd),
        (2, 5_000_000),
        "the reports are shown, as reported"
    );
    // Reports of nothing do not stop the meter's figure reaching it.
    meter(&hive, "alice", NOW, 800_000, 10).await;
    assert_eq!(
        budget_words(&hive, "alice").await.as_deref(),
        Some("$1.10 of $1.00 today")
    );
}

#[tokio::test]
async fn a_metered_request_reaching_a_budget_mid_turn_holds_the_next_recv_without_any_report() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, alice) = alice_with_a_dollar_a_day(dir.path()).await;
    hive.messaging()
        .send_from_operator(&alice, None, "first".into())
        .await
        .unwrap();
    let popped = hive
        .messaging()
        .recv(&alice, None, None, pending())
        .await
        .unwrap();
    assert_eq!(popped.len(), 1);
    // Mid-turn: the request that reaches the budget, and no report ever
    // (the harness killed, or lying by silence).
    meter(&hive, "alice", NOW, 1_000_000, 10).await;
    hive.messaging().ack_turn(&alice).await.unwrap();
    hive.messaging()
        .send_from_operator(&alice, None, "second".into())
        .await
        .unwrap();
    assert!(poll(&hive, "alice").await.is_empty(), "held");
    assert_eq!(hive.messaging().unread(&alice).await.unwrap(), 1);
    hive.usage()
        .set_budget(Some(&alice), cap("2usd/day"))
        .await
        .unwrap();
    assert_eq!(poll(&hive, "alice").await, ["second"]);
}

#[tokio::test]
async fn a_turn_shows_its_agents_metered_requests_of_its_time_beside_what_it_reported() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _clock) = hive_in(dir.path(), NOW);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    meter(&hive, "alice", NOW - 60, 111, 10).await; // before the turn
    meter(&hive, "alice", NOW, 42_000, 10).await;
    hive.usage()
        .report_turn(&alice, report(NOW, 0, 0))
        .await
        .unwrap();
    let turns = hive.usage().turns(&alice, 10).await.unwrap();
    let metered = turns[0].metered.unwrap();
    assert_eq!((metered.requests, metered.cost_micro_usd), (1, 42_000));
    assert_eq!(turns[0].report.cost_micro_usd, Some(0), "as reported");
}
