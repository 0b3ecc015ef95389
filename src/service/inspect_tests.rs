//! `inspect_agent` on a hive with a manual clock and the fake driver: each
//! section carries what the agent's seeded state says.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::clock::ManualClock;
use crate::service::grants::Grant;
use crate::store::Store;
use crate::testing::{config_in, hive_on, id};
use crate::wire::agenda::Capability;
use crate::wire::egress::EgressPattern;
use crate::wire::inspect::InboxDepth;
use crate::wire::turns::{TurnOutcome, TurnReport};

fn pattern(p: &str) -> EgressPattern {
    EgressPattern::new(p).unwrap()
}

async fn hive() -> (Hive, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.agent_memory_max = Some("8G".into());
    config.agent_disk_quota = Some(1 << 30);
    // A hive-wide egress list of the operator's (the default is empty since
    // the model gateway, issue 46).
    config.egress_allow =
        vec![crate::wire::egress::EgressPattern::new("api.anthropic.com:443").unwrap()];
    let (hive, _) = hive_on(
        config,
        Store::open_in_memory().unwrap(),
        Arc::new(ManualClock::new(1_000)),
    );
    hive.spawn(&id("alice")).await.unwrap();
    (hive, dir)
}

/// Alice's deployed `agent.json` replaced, as a deploy leaves it.
fn deploy(hive: &Hive, agent_json: &str) {
    let tree = hive.deployed_tree(&id("alice"));
    std::fs::create_dir_all(&tree).unwrap();
    std::fs::write(tree.join("agent.json"), agent_json).unwrap();
}

fn turn(ended_at_ms: i64) -> TurnReport {
    TurnReport {
        started_at_ms: ended_at_ms - 2_000,
        ended_at_ms,
        message_ids: vec![],
        session_id: None,
        model: Some("claude-test".into()),
        outcome: TurnOutcome::Ok,
        error: None,
        tools: vec![],
        usage: None,
        cost_micro_usd: Some(1_500),
        num_turns: Some(1),
        duration_ms: None,
        duration_api_ms: None,
    }
}

#[tokio::test]
async fn inspect_answers_every_section_from_the_agents_seeded_state() {
    let (hive, _dir) = hive().await;
    let alice = id("alice");
    deploy(
        &hive,
        r#"{"model":"claude-x","tasks_max":64,"egress":["pypi.org:443"]}"#,
    );
    let grant = Grant::Egress(pattern("crates.io:443"), Some(Duration::from_secs(60)));
    hive.set_grant(&alice, grant, true).await.unwrap();
    hive.set_grant(&alice, Grant::Capability(Capability::ReadHostJournal), true)
        .await
        .unwrap();
    hive.request_egress(&alice, pattern("example.org:443"), "docs")
        .await
        .unwrap();
    let messaging = hive.messaging();
    for body in ["one", "two"] {
        messaging
            .send_from_operator(&alice, None, body.into())
            .await
            .unwrap();
    }
    let taken = messaging
        .recv(&alice, None, Some(1), std::future::pending())
        .await
        .unwrap();
    assert_eq!(taken.len(), 1);
    hive.usage()
        .report_turn(&alice, turn(900_000))
        .await
        .unwrap();
    hive.usage()
        .report_turn(&alice, turn(950_000))
        .await
        .unwrap();

    let facts = hive.inspect_agent(&alice).await.unwrap();

    assert_eq!(facts.name, alice);
    assert_eq!(facts.status.as_ref().map(|r| &r.name), Some(&alice));
    assert_eq!(facts.config.model.as_deref(), Some("claude-x"));
    let record = hive.require(&alice).await.unwrap();
    assert!(record.deployed_sha.is_some());
    assert_eq!(facts.config.deployed_sha, record.deployed_sha);
    assert_eq!(facts.limits.memory_max.as_deref(), Some("8G"));
    assert_eq!(
        facts.limits.tasks_max,
        Some(64),
        "agent.json's over the hive's"
    );
    assert_eq!(facts.limits.disk_quota_bytes, Some(1 << 30));
    assert!(facts.limits.disk_inodes.is_some());
    let egress: Vec<(String, &str, Option<&str>)> = facts
        .egress
        .iter()
        .map(|e| {
            (
                e.pattern.to_string(),
                e.source.as_str(),
                e.expires_at.as_deref(),
            )
        })
        .collect();
    assert_eq!(
        egress,
        [
            ("api.anthropic.com:443".to_owned(), "hive", None),
            ("pypi.org:443".to_owned(), "agent_json", None),
            (
                "crates.io:443".to_owned(),
                "grant",
                Some("1970-01-01T00:17:40Z")
            ),
        ]
    );
    assert_eq!(facts.capabilities, [Capability::ReadHostJournal]);
    assert!(!facts.tool_groups.is_empty());
    assert_eq!(
        facts.inbox,
        InboxDepth {
            waiting: 1,
            in_flight: 1
        }
    );
    assert_eq!(facts.pending_approvals, 1);
    assert_eq!((facts.questions_asked, facts.questions_to_answer), (0, 0));
    let ends: Vec<&str> = facts.turns.iter().map(|t| t.ended_at.as_str()).collect();
    assert_eq!(ends, ["1970-01-01T00:15:50Z", "1970-01-01T00:15:00Z"]);
    assert_eq!(facts.turns[0].cost_micro_usd, Some(1_500));
}

#[tokio::test]
async fn inspect_of_an_agent_whose_config_sets_no_model_omits_it_and_has_only_the_hives_egress() {
    let (hive, _dir) = hive().await;
    let facts = hive.inspect_agent(&id("alice")).await.unwrap();
    assert_eq!(facts.config.model, None);
    assert_eq!(facts.egress.len(), 1, "the hive's entry alone");
    assert_eq!(facts.inbox, InboxDepth::default());
    assert!(facts.turns.is_empty());
}

#[tokio::test]
async fn inspect_of_an_unknown_agent_is_the_unknown_agent_error() {
    let (hive, _dir) = hive().await;
    let err = hive.inspect_agent(&id("nobody")).await.unwrap_err();
    assert!(matches!(err, HiveError::UnknownAgent(n) if n == id("nobody")));
}
