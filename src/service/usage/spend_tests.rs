//! Budgets through the service: a turn whose metered requests reach one
//! holds the next message in the inbox (nothing popped, the row says why,
//! the manager told), raising it or the window moving on lets the turn
//! run, nothing is lost — also across a restart of the hive on the same
//! database. Spend is the meter's: every turn here reports that it spent
//! nothing (as a forged report could), and its requests are what count.

use std::future::pending;
use std::sync::Arc;
use std::time::Duration;

use crate::clock::ManualClock;
use crate::store::Store;
use crate::testing::{config_in, hive_on, id, manager_events};
use crate::wire::model_log::{MeterRow, Tokens};
use crate::wire::spend::{SpendCap, SpendScope, SpendSource};
use crate::wire::turns::{TurnOutcome, TurnReport, TurnUsage};

use crate::service::{Hive, HiveError};

/// 01:00 UTC on day 20,000.
pub(super) const NOW: i64 = 20_000 * 86_400 + 3600;

pub(super) fn cap(text: &str) -> SpendCap {
    text.parse().unwrap()
}

/// One model request of `agent` at `at` (Unix s) as the gateway meters it:
/// `tokens` output tokens at a list cost of `micro` millionths; committed,
/// and the budgets evaluated, when this returns.
pub(super) async fn meter(hive: &Hive, agent: &str, at: i64, micro: u64, tokens: u64) {
    let row = MeterRow {
        at_ms: at * 1000,
        route: "POST /v1/messages".into(),
        model: Some("claude-haiku-4-5".into()),
        status: 200,
        tokens: Tokens {
            output: tokens,
            ..Tokens::default()
        },
        cost_micro_usd: Some(micro),
        ms: 5,
        request_id: None,
        error: None,
    };
    hive.meter(&id(agent), row).await.unwrap();
}

pub(super) fn report(at: i64, micro_usd: u64, tokens: u64) -> TurnReport {
    TurnReport {
        started_at_ms: at * 1000 - 500,
        ended_at_ms: at * 1000,
        message_ids: vec![],
        session_id: None,
        model: None,
        outcome: TurnOutcome::Ok,
        error: None,
        tools: vec![],
        usage: Some(TurnUsage {
            output_tokens: tokens,
            ..TurnUsage::default()
        }),
        cost_micro_usd: Some(micro_usd),
        num_turns: Some(1),
        duration_ms: None,
        duration_api_ms: None,
    }
}

/// A hive on the database file in `dir`, its clock at `now`.
pub(super) fn hive_in(dir: &std::path::Path, now: i64) -> (Hive, Arc<ManualClock>) {
    let clock = Arc::new(ManualClock::new(now));
    let store = Store::open(&dir.join("hive.db")).unwrap();
    let (hive, _driver) = hive_on(config_in(dir), store, clock.clone());
    (hive, clock)
}

/// One turn of `agent`: pop what waits, make one model request metered at
/// `micro_usd` and 10 tokens, report the turn as having cost nothing, ack.
/// The bodies it took.
pub(super) async fn turn(hive: &Hive, agent: &str, at: i64, micro_usd: u64) -> Vec<String> {
    let popped = hive
        .messaging()
        .recv(&id(agent), None, None, pending())
        .await
        .unwrap();
    meter(hive, agent, at, micro_usd, 10).await;
    hive.usage()
        .report_turn(&id(agent), report(at, 0, 0))
        .await
        .unwrap();
    hive.messaging().ack_turn(&id(agent)).await.unwrap();
    popped.into_iter().map(|m| m.body).collect()
}

/// What a short long poll of `agent` pops now.
pub(super) async fn poll(hive: &Hive, agent: &str) -> Vec<String> {
    let wait = Some(Duration::from_millis(50));
    let popped = hive
        .messaging()
        .recv(&id(agent), wait, None, pending())
        .await
        .unwrap();
    popped.into_iter().map(|m| m.body).collect()
}

/// alice, under a budget of 1usd/day, takes "first" in a turn that costs
/// `micro_usd`; the bodies it took.
async fn alices_costly_turn(hive: &Hive, micro_usd: u64) -> Vec<String> {
    hive.spawn(&id("alice")).await.unwrap();
    hive.usage()
        .set_budget(Some(&id("alice")), cap("1usd/day"))
        .await
        .unwrap();
    hive.messaging()
        .send_from_operator(&id("alice"), None, "first".into())
        .await
        .unwrap();
    turn(hive, "alice", NOW, micro_usd).await
}

pub(super) async fn budget_words(hive: &Hive, agent: &str) -> Option<String> {
    hive.row(&id(agent)).await.unwrap().unwrap().budget
}

#[tokio::test]
async fn a_budget_reached_by_one_turns_metered_request_holds_the_next_message_until_it_is_raised() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _clock) = hive_in(dir.path(), NOW);
    assert_eq!(alices_costly_turn(&hive, 1_000_000).await, ["first"]);

    // The turn's request reached the budget before the turn was acked.
    assert_eq!(
        budget_words(&hive, "alice").await.as_deref(),
        Some("$1.00 of $1.00 today")
    );
    let events = manager_events(&hive, &["budget_reached"]).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        events[0].contains(r#""agent":"alice""#) && events[0].contains("$1.00 of $1.00 today"),
        "{events:?}"
    );
    hive.messaging()
        .send_from_operator(&id("alice"), None, "second".into())
        .await
        .unwrap();
    assert!(poll(&hive, "alice").await.is_empty(), "no turn starts");
    assert_eq!(
        hive.messaging().unread(&id("alice")).await.unwrap(),
        1,
        "still pending"
    );

    // A long poll waiting now is woken by the raise, and gets the message.
    let waiting = {
        let hive = hive.clone();
        tokio::spawn(async move {
            hive.messaging()
                .recv(&id("alice"), Some(Duration::from_secs(20)), None, pending())
                .await
        })
    };
    tokio::time::sleep(Duration::from_millis(50)).await;
    assert!(!waiting.is_finished(), "held, not answered");
    hive.usage()
        .set_budget(Some(&id("alice")), cap("2usd/day"))
        .await
        .unwrap();
    let got = tokio::time::timeout(Duration::from_secs(5), waiting)
        .await
        .expect("the raise woke the poll")
        .unwrap()
        .unwrap();
    assert_eq!(
        got.iter().map(|m| m.body.as_str()).collect::<Vec<_>>(),
        ["second"]
    );
    assert_eq!(budget_words(&hive, "alice").await, None);
    assert_eq!(
        manager_events(&hive, &["budget_reached"]).await.len(),
        1,
        "told once"
    );
}

#[tokio::test]
async fn a_held_message_survives_a_restart_still_held_and_runs_once_raised() {
    let dir = tempfile::tempdir().unwrap();
    {
        let (hive, _clock) = hive_in(dir.path(), NOW);
        alices_costly_turn(&hive, 1_500_000).await;
        hive.messaging()
            .send_from_operator(&id("alice"), None, "second".into())
            .await
            .unwrap();
        assert!(poll(&hive, "alice").await.is_empty());
    }
    // The daemon evaluates the budgets at start, before any socket serves.
    let (hive, _clock) = hive_in(dir.path(), NOW + 60);
    hive.usage().check_spend(false).await.unwrap();
    assert_eq!(
        budget_words(&hive, "alice").await.as_deref(),
        Some("$1.50 of $1.00 today")
    );
    assert!(poll(&hive, "alice").await.is_empty(), "still held");
    assert_eq!(hive.messaging().unread(&id("alice")).await.unwrap(), 1);
    let rows = hive.usage().budgets().await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (
            &rows[0].scope,
            rows[0].source,
            rows[0].spent,
            rows[0].reached
        ),
        (
            &SpendScope::Subtree(id("alice")),
            SpendSource::Operator,
            1_500_000,
            true
        )
    );
    hive.usage()
        .set_budget(Some(&id("alice")), cap("5usd/day"))
        .await
        .unwrap();
    assert_eq!(poll(&hive, "alice").await, ["second"]);
}

#[tokio::test]
async fn the_next_utc_day_or_a_rolling_window_moving_on_lets_the_turns_resume() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, clock) = hive_in(dir.path(), NOW);
    hive.spawn(&id("alice")).await.unwrap();
    hive.usage()
        .set_budget(Some(&id("alice")), cap("1usd/day"))
        .await
        .unwrap();
    hive.usage()
        .set_budget(None, cap("30tokens/2h"))
        .await
        .unwrap();
    turn(&hive, "alice", NOW, 1_000_000).await;
    hive.messaging()
        .send_from_operator(&id("alice"), None, "tomorrow".into())
        .await
        .unwrap();
    assert!(poll(&hive, "alice").await.is_empty());
    // Next day, 00:30: the day's cap is fresh, but the hive's rolling 2h
    // window (10 tokens of 30) is not reached either way.
    clock.set(NOW + 23 * 3600 + 1800);
    hive.usage().check_spend(true).await.unwrap();
    assert_eq!(poll(&hive, "alice").await, ["tomorrow"]);

    // Three turns of 10 tokens reach the hive's 30 tokens in 2h: everyone
    // is held, the manager too, until they fall out of the window.
    let at = NOW + 24 * 3600;
    clock.set(at);
    for _ in 0..3 {
        turn(&hive, "alice", at, 0).await;
    }
    let words = budget_words(&hive, "ruth").await.unwrap();
    assert_eq!(words, "30 of 30 tokens in 2h for the hive");
    clock.set(at + 2 * 3600 + 1);
    hive.usage().check_spend(true).await.unwrap();
    assert_eq!(budget_words(&hive, "ruth").await, None);
}

#[tokio::test]
async fn a_parents_budget_holds_its_children_and_a_budget_set_below_the_spend_holds_at_once() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _clock) = hive_in(dir.path(), NOW);
    for name in ["lead", "dev", "other"] {
        hive.spawn(&id(name)).await.unwrap();
    }
    hive.set_parent(&id("dev"), Some(&id("lead")))
        .await
        .unwrap();
    // Spent before any budget: it counts.
    turn(&hive, "dev", NOW, 700_000).await;
    hive.usage()
        .set_budget(Some(&id("lead")), cap("0.5usd/day"))
        .await
        .unwrap();
    assert_eq!(
        budget_words(&hive, "dev").await.as_deref(),
        Some("$0.70 of $0.50 today for lead and under")
    );
    assert!(budget_words(&hive, "lead").await.is_some());
    assert_eq!(budget_words(&hive, "other").await, None);
    // Unset: nothing holds them (no config default).
    hive.usage().unset_budget(Some(&id("lead"))).await.unwrap();
    assert_eq!(budget_words(&hive, "dev").await, None);
    assert!(hive.usage().budgets().await.unwrap().is_empty());
    let err = hive
        .usage()
        .set_budget(Some(&id("nobody")), cap("1usd/day"))
        .await
        .unwrap_err();
    assert!(matches!(err, HiveError::UnknownAgent(_)), "{err}");
}

#[tokio::test]
async fn request_budget_queues_an_approval_and_approving_it_sets_the_budget() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _clock) = hive_in(dir.path(), NOW);
    hive.spawn(&id("alice")).await.unwrap();
    let row = hive
        .request_budget(
            &id("alice"),
            cap("3usd/day"),
            "the migration needs a long run",
        )
        .await
        .unwrap()
        .row;
    assert_eq!(
        (row.kind.as_str(), row.commit_ref.as_str()),
        ("budget", "3usd/day")
    );
    assert!(
        hive.usage().budgets().await.unwrap().is_empty(),
        "not before approval"
    );
    hive.approve(row.id, None).await.unwrap();
    let rows = hive.usage().budgets().await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(
        (&rows[0].scope, rows[0].amount, rows[0].source),
        (
            &SpendScope::Subtree(id("alice")),
            cap("3usd/day"),
            SpendSource::Operator
        )
    );
    let err = hive
        .request_budget(&id("alice"), cap("3usd/day"), " ")
        .await
        .unwrap_err();
    assert!(matches!(err, HiveError::BadArgument(_)), "{err}");
    let err = hive
        .request_budget(&id("nobody"), cap("3usd/day"), "why")
        .await
        .unwrap_err();
    assert!(matches!(err, HiveError::UnknownAgent(_)), "{err}");
}

#[tokio::test]
async fn the_configs_defaults_apply_where_the_operator_set_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.budget_hive = vec![cap("100usd/day")];
    config.budget_each_agent = vec![cap("1usd/day")];
    let clock = Arc::new(ManualClock::new(NOW));
    let (hive, _driver) = hive_on(config, Store::open_in_memory().unwrap(), clock);
    hive.spawn(&id("alice")).await.unwrap();
    turn(&hive, "alice", NOW, 1_000_000).await;
    assert_eq!(
        budget_words(&hive, "alice").await.as_deref(),
        Some("$1.00 of $1.00 today")
    );
    assert_eq!(
        budget_words(&hive, "ruth").await,
        None,
        "its own spend only"
    );
    hive.usage()
        .set_budget(Some(&id("alice")), cap("2usd/day"))
        .await
        .unwrap();
    assert_eq!(
        budget_words(&hive, "alice").await,
        None,
        "the operator's replaces it"
    );
    let sources: Vec<(String, SpendSource)> = hive
        .usage()
        .budgets()
        .await
        .unwrap()
        .into_iter()
        .map(|r| (format!("{} {}", r.scope.words(), r.amount), r.source))
        .collect();
    assert_eq!(
        sources,
        [
            ("the hive 100usd/day".into(), SpendSource::Config),
            ("alice and under 2usd/day".into(), SpendSource::Operator),
            ("ruth 1usd/day".into(), SpendSource::Config),
        ]
    );
}

#[tokio::test]
async fn a_reached_budget_runs_the_operators_notify_command_once() {
    let dir = tempfile::tempdir().unwrap();
    let out = dir.path().join("events");
    let mut config = config_in(dir.path());
    config.notify_command = vec!["tee".into(), "-a".into(), out.to_string_lossy().into()];
    let clock = Arc::new(ManualClock::new(NOW));
    let (hive, _driver) = hive_on(config, Store::open_in_memory().unwrap(), clock);
    tokio::spawn(
        hive.clone()
            .messaging()
            .clone()
            .run_notifier(tokio_util::sync::CancellationToken::new()),
    );
    hive.spawn(&id("alice")).await.unwrap();
    hive.usage()
        .set_budget(None, cap("1usd/day"))
        .await
        .unwrap();
    turn(&hive, "alice", NOW, 1_000_000).await;
    turn(&hive, "alice", NOW, 1_000_000).await; // still reached: no second run
    for _ in 0..300 {
        if std::fs::read_to_string(&out).is_ok_and(|t| !t.is_empty()) {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    // Time for a second run, were there one.
    tokio::time::sleep(Duration::from_millis(100)).await;
    let lines: Vec<String> = std::fs::read_to_string(&out)
        .unwrap()
        .lines()
        .map(str::to_owned)
        .collect();
    assert_eq!(lines.len(), 1, "{lines:?}");
    assert!(
        lines[0].contains(r#""event":"budget_reached","agent":"ruth","hive":true,"amount":"1usd/day","spent":"$1.00 of $1.00 today""#),
        "{lines:?}"
    );
}

/// A hive whose config has `budget_hard_cap` as given, alice and bob
/// under ruth, a hive budget of 1usd/day and a token budget on bob.
async fn capped_hive(dir: &std::path::Path, hard_cap: bool) -> Hive {
    let mut config = config_in(dir);
    config.budget_hard_cap = hard_cap;
    config.budget_hive = vec![cap("1usd/day")];
    let clock = Arc::new(ManualClock::new(NOW));
    let (hive, _driver) = hive_on(config, Store::open_in_memory().unwrap(), clock);
    hive.spawn(&id("alice")).await.unwrap();
    hive.spawn(&id("bob")).await.unwrap();
    hive.usage()
        .set_budget(Some(&id("bob")), cap("1000tokens/day"))
        .await
        .unwrap();
    hive
}

/// `name`'s harness through a turn, as `hive-agent run` does it: the
/// turn's start reported, then its wait; `true` when it was ended.
fn in_turn(hive: &Hive, name: &str) -> tokio::task::JoinHandle<bool> {
    use crate::wire::live::TurnProgress;
    let started = TurnProgress::Started {
        started_at_ms: NOW * 1000,
        messages: vec![],
        total_messages: 1,
    };
    hive.usage().turn_progress(&id(name), started, 0).unwrap();
    let (hive, name) = (hive.clone(), id(name));
    tokio::spawn(async move {
        hive.usage()
            .await_interrupt(&name, pending())
            .await
            .unwrap()
    })
}

#[tokio::test]
async fn under_the_hard_cap_a_turns_last_request_metered_after_its_report_gets_no_note() {
    let dir = tempfile::tempdir().unwrap();
    let hive = capped_hive(dir.path(), true).await;
    // alice's harness still waits when its finished turn's report arrives,
    // and the row of the turn's last request comes after the report (the
    // gateway sends it when the answer ends; the harness may be quicker).
    let alices_wait = in_turn(&hive, "alice");
    tokio::time::sleep(Duration::from_millis(20)).await;
    hive.messaging()
        .recv(&id("alice"), None, None, pending())
        .await
        .unwrap();
    hive.usage()
        .report_turn(&id("alice"), report(NOW, 0, 0))
        .await
        .unwrap();
    hive.messaging().ack_turn(&id("alice")).await.unwrap();
    meter(&hive, "alice", NOW, 1_000_000, 10).await;
    let _ = tokio::time::timeout(Duration::from_secs(5), alices_wait).await;
    assert!(budget_words(&hive, "alice").await.is_some(), "held");
    hive.usage()
        .set_budget(None, cap("10usd/day"))
        .await
        .unwrap();
    assert_eq!(
        poll(&hive, "alice").await,
        Vec::<String>::new(),
        "no note for a turn that ended by itself"
    );
}

#[tokio::test]
async fn under_the_hard_cap_a_request_reaching_the_budget_mid_turn_ends_that_turn_with_a_note() {
    let dir = tempfile::tempdir().unwrap();
    let hive = capped_hive(dir.path(), true).await;
    let alices_turn = in_turn(&hive, "alice");
    tokio::time::sleep(Duration::from_millis(20)).await;
    meter(&hive, "alice", NOW, 1_000_000, 10).await;
    let ended = tokio::time::timeout(Duration::from_secs(5), alices_turn).await;
    assert!(ended.unwrap().unwrap(), "alice's own turn is ended");
    hive.usage()
        .set_budget(None, cap("10usd/day"))
        .await
        .unwrap();
    let note = poll(&hive, "alice").await;
    assert_eq!(note.len(), 1, "{note:?}");
    assert!(note[0].contains("a budget was reached"), "{note:?}");
}

#[tokio::test]
async fn under_the_hard_cap_a_reached_budget_ends_the_turns_it_covers_and_says_why() {
    let dir = tempfile::tempdir().unwrap();
    let hive = capped_hive(dir.path(), true).await;
    let bobs_turn = in_turn(&hive, "bob");
    tokio::time::sleep(Duration::from_millis(20)).await;
    turn(&hive, "alice", NOW, 1_000_000).await;
    let ended = tokio::time::timeout(Duration::from_secs(5), bobs_turn).await;
    assert!(ended.unwrap().unwrap(), "bob's turn in progress is ended");
    hive.usage()
        .set_budget(None, cap("10usd/day"))
        .await
        .unwrap();
    let note = poll(&hive, "bob").await;
    assert_eq!(note.len(), 1, "{note:?}");
    assert!(
        note[0].contains(
            "ended by the hive: a budget was reached ($1.00 of $1.00 today for the hive)"
        ),
        "{note:?}"
    );
}

#[tokio::test]
async fn without_the_hard_cap_a_reached_budget_lets_the_turn_in_progress_finish() {
    let dir = tempfile::tempdir().unwrap();
    let hive = capped_hive(dir.path(), false).await;
    let bobs_turn = in_turn(&hive, "bob");
    tokio::time::sleep(Duration::from_millis(20)).await;
    turn(&hive, "alice", NOW, 1_000_000).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!bobs_turn.is_finished(), "bob's turn goes on");
    bobs_turn.abort();
    assert_eq!(
        budget_words(&hive, "bob").await.as_deref(),
        Some("$1.00 of $1.00 today for the hive"),
        "bob is held for its next turn"
    );
}

#[tokio::test]
async fn under_the_hard_cap_a_running_turns_metered_requests_reach_its_token_budget_not_its_reports()
 {
    use crate::wire::live::TurnProgress;
    let dir = tempfile::tempdir().unwrap();
    let hive = capped_hive(dir.path(), true).await;
    let bobs_turn = in_turn(&hive, "bob");
    tokio::time::sleep(Duration::from_millis(20)).await;
    // Its harness says 1200 tokens so far: a report, not the spend.
    let so_far = TurnProgress::Usage {
        usage: TurnUsage {
            output_tokens: 1200,
            ..TurnUsage::default()
        },
        cost_micro_usd: None,
        is_final: false,
    };
    hive.usage().turn_progress(&id("bob"), so_far, 0).unwrap();
    meter(&hive, "bob", NOW, 0, 400).await;
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!bobs_turn.is_finished(), "400 of 1000 tokens: it goes on");
    meter(&hive, "bob", NOW, 0, 800).await;
    let ended = tokio::time::timeout(Duration::from_secs(5), bobs_turn).await;
    assert!(
        ended.unwrap().unwrap(),
        "1200 of 1000 tokens metered: ended"
    );
}
