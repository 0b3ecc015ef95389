//! Egress allow-lists from the config and the operator's grants, and
//! `request_egress` through the approval queue, on a hive with a manual
//! clock and the fake driver.

use std::sync::Arc;
use std::time::Duration;

use super::*;
use crate::clock::ManualClock;
use crate::service::grants::Grant;
use crate::store::Store;
use crate::testing::{config_in, hive_on, id};
use crate::wire::codes::ErrorCode;
use crate::wire::host::ApprovalStatus;

fn pattern(p: &str) -> EgressPattern {
    EgressPattern::new(p).unwrap()
}

async fn hive_with(agents: &[&str]) -> (Hive, Arc<ManualClock>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let clock = Arc::new(ManualClock::new(1_000));
    // A hive-wide list of the operator's (the default is empty since the
    // model gateway, issue 46).
    let mut config = config_in(dir.path());
    config.egress_allow = vec![pattern("api.anthropic.com:443")];
    let (hive, _) = hive_on(config, Store::open_in_memory().unwrap(), clock.clone());
    for a in agents {
        hive.spawn(&id(a)).await.unwrap();
    }
    (hive, clock, dir)
}

async fn list(hive: &Hive, agent: &str) -> Vec<String> {
    let patterns = hive.egress_allow(&id(agent)).await.unwrap();
    patterns.iter().map(|p| p.to_string()).collect()
}

#[tokio::test]
async fn a_grant_opens_a_host_to_that_agent_alone_until_it_is_revoked() {
    let (hive, _, _dir) = hive_with(&["alice", "bob"]).await;
    assert_eq!(list(&hive, "alice").await, ["api.anthropic.com:443"]);
    let grant = Grant::Egress(pattern("pypi.org:443"), None);
    hive.set_grant(&id("alice"), grant.clone(), true)
        .await
        .unwrap();
    assert_eq!(
        list(&hive, "alice").await,
        ["api.anthropic.com:443", "pypi.org:443"]
    );
    assert_eq!(list(&hive, "bob").await, ["api.anthropic.com:443"]);
    let rows = hive.grants(Some(&id("alice"))).await.unwrap();
    assert_eq!(rows[0].egress[0].pattern, pattern("pypi.org:443"));
    hive.set_grant(&id("alice"), grant, false).await.unwrap();
    assert_eq!(list(&hive, "alice").await, ["api.anthropic.com:443"]);
}

#[tokio::test]
async fn a_time_boxed_grant_ends_by_itself_and_says_until_when() {
    let (hive, clock, _dir) = hive_with(&["alice"]).await;
    let grant = Grant::Egress(pattern("*.pypi.org"), Some(Duration::from_secs(60)));
    hive.set_grant(&id("alice"), grant, true).await.unwrap();
    let rows = hive.grants(Some(&id("alice"))).await.unwrap();
    assert_eq!(rows[0].egress[0].expires_at, Some(1_060));
    clock.advance(59);
    assert!(
        list(&hive, "alice")
            .await
            .contains(&"*.pypi.org".to_owned())
    );
    clock.advance(1);
    assert_eq!(list(&hive, "alice").await, ["api.anthropic.com:443"]);
    assert!(
        hive.grants(Some(&id("alice"))).await.unwrap()[0]
            .egress
            .is_empty()
    );
}

#[tokio::test]
async fn destroy_forgets_the_agents_egress_grants() {
    let (hive, _, _dir) = hive_with(&["alice"]).await;
    let grant = Grant::Egress(pattern("pypi.org:443"), None);
    hive.set_grant(&id("alice"), grant, true).await.unwrap();
    hive.destroy(&id("alice"), true).await.unwrap();
    hive.spawn(&id("alice")).await.unwrap();
    assert_eq!(list(&hive, "alice").await, ["api.anthropic.com:443"]);
}

#[tokio::test]
async fn request_egress_queues_an_approval_whose_approval_grants_the_host_to_the_asker() {
    let (hive, _, _dir) = hive_with(&["alice", "bob"]).await;
    let row = hive
        .request_egress(&id("alice"), pattern("pypi.org:443"), "pip install")
        .await
        .unwrap()
        .row;
    assert_eq!(row.kind, ApprovalKind::Egress);
    assert_eq!(row.commit_ref, "pypi.org:443");
    assert_eq!(row.description.as_deref(), Some("pip install"));
    assert_eq!(
        list(&hive, "alice").await,
        ["api.anthropic.com:443"],
        "not before approval"
    );
    let done = hive.approve(row.id, None).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Approved);
    assert!(
        list(&hive, "alice")
            .await
            .contains(&"pypi.org:443".to_owned())
    );
    assert_eq!(list(&hive, "bob").await, ["api.anthropic.com:443"]);
}

#[tokio::test]
async fn an_egress_request_approved_for_a_time_is_granted_until_then_only() {
    let (hive, clock, _dir) = hive_with(&["alice"]).await;
    let row = hive
        .request_egress(&id("alice"), pattern("pypi.org:443"), "pip install")
        .await
        .unwrap()
        .row;
    let done = hive
        .approve(row.id, Some(Duration::from_secs(7_200)))
        .await
        .unwrap();
    assert_eq!(done.status, ApprovalStatus::Approved);
    let rows = hive.grants(Some(&id("alice"))).await.unwrap();
    assert_eq!(rows[0].egress[0].expires_at, Some(1_000 + 7_200));
    clock.advance(7_199);
    assert!(
        list(&hive, "alice")
            .await
            .contains(&"pypi.org:443".to_owned())
    );
    clock.advance(1);
    assert_eq!(list(&hive, "alice").await, ["api.anthropic.com:443"]);
}

#[tokio::test]
async fn a_grant_for_longer_than_the_clock_can_count_never_ends_in_the_past() {
    let (hive, _, _dir) = hive_with(&["alice"]).await;
    let grant = Grant::Egress(pattern("pypi.org:443"), Some(Duration::from_secs(u64::MAX)));
    hive.set_grant(&id("alice"), grant, true).await.unwrap();
    let rows = hive.grants(Some(&id("alice"))).await.unwrap();
    assert_eq!(rows[0].egress[0].expires_at, Some(i64::MAX));
    assert!(
        list(&hive, "alice")
            .await
            .contains(&"pypi.org:443".to_owned())
    );
}

#[tokio::test]
async fn a_duration_on_any_other_approval_is_refused_and_leaves_it_pending() {
    let (hive, _, _dir) = hive_with(&["alice"]).await;
    let row = hive.request_spawn(&id("bob")).await.unwrap();
    let err = hive
        .approve(row.id, Some(Duration::from_secs(60)))
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest);
    let text = err.to_string();
    assert!(
        text.contains("is a spawn request") && text.contains("egress request only"),
        "{text}"
    );
    let egress = hive
        .request_egress(&id("alice"), pattern("pypi.org:443"), "pip install")
        .await
        .unwrap()
        .row;
    let zero = hive
        .approve(egress.id, Some(Duration::ZERO))
        .await
        .unwrap_err();
    assert!(zero.to_string().contains("at least 1 second"), "{zero}");
    let pending = hive.approvals().await.unwrap();
    assert!(
        pending
            .iter()
            .filter(|r| r.status == ApprovalStatus::Pending)
            .count()
            == 2
    );
    assert_eq!(list(&hive, "alice").await, ["api.anthropic.com:443"]);
}

#[tokio::test]
async fn a_denied_request_grants_nothing() {
    let (hive, _, _dir) = hive_with(&["alice"]).await;
    let row = hive
        .request_egress(&id("alice"), pattern("evil.example:443"), "trust me")
        .await
        .unwrap()
        .row;
    hive.deny(row.id, None).await.unwrap();
    assert_eq!(list(&hive, "alice").await, ["api.anthropic.com:443"]);
}

#[tokio::test]
async fn asking_for_a_host_already_on_the_list_is_refused_with_already_allowed() {
    let (hive, _, _dir) = hive_with(&["alice"]).await;
    let err = hive
        .request_egress(&id("alice"), pattern("API.anthropic.com:443"), "the API")
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::AlreadyAllowed, "{err}");
    assert!(
        err.to_string()
            .contains("already on agent alice's egress allow-list")
    );
    // A wildcard that merely covers it is a new request.
    assert!(
        hive.request_egress(&id("alice"), pattern("*.anthropic.com"), "docs")
            .await
            .is_ok()
    );
}

#[tokio::test]
async fn a_reason_must_say_something_and_stay_short() {
    let (hive, _, _dir) = hive_with(&["alice"]).await;
    for reason in ["", "  ", &"x".repeat(501), "a\u{1b}[2Jb"] {
        let err = hive
            .request_egress(&id("alice"), pattern("pypi.org"), reason)
            .await
            .unwrap_err();
        assert_eq!(err.code(), ErrorCode::BadRequest, "{reason:?}: {err}");
    }
}
