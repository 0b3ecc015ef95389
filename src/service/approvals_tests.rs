use super::*;
use crate::store::Store;
use crate::testing::{id, new_approval};
use crate::wire::codes::ErrorCode;
use crate::wire::host::ApprovalStatus;

#[test]
fn a_claimed_row_refuses_a_second_approve_and_a_deny() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let a = approvals::insert(c, &new_approval("x"), 10)?;
            assert!(matches!(
                decide_row(c, a.id, Decision::Approve, None, &id("ruth"), 11)?,
                Decided::Taken(..)
            ));
            assert_eq!(
                decide_row(c, a.id, Decision::Approve, None, &id("ruth"), 12)?,
                Decided::Refused(Refusal::InProgress)
            );
            assert_eq!(
                decide_row(c, a.id, Decision::Deny, None, &id("ruth"), 12)?,
                Decided::Refused(Refusal::InProgress)
            );
            let (done, _) = finish_row(c, a.id, Ok(None), &id("ruth"), 13)?;
            assert_eq!(
                (done.status, done.resolved_at),
                (ApprovalStatus::Approved, Some(13))
            );
            assert_eq!(
                decide_row(c, a.id, Decision::Deny, None, &id("ruth"), 14)?,
                Decided::Refused(Refusal::AlreadyResolved(ApprovalStatus::Approved))
            );
            Ok(())
        })
        .unwrap();
}

/// A hive with `agents` spawned whose agents may hold `cap` pending
/// approvals each.
async fn hive_capped(dir: &std::path::Path, cap: usize, agents: &[&str]) -> Hive {
    let mut config = crate::testing::config_in(dir);
    config.agent_max_pending_approvals = cap;
    let (hive, _) = crate::testing::hive_at(config, 1_000);
    for a in agents {
        hive.spawn(&id(a)).await.unwrap();
    }
    hive
}

async fn egress(hive: &Hive, agent: &str, host: &str) -> Result<Queued, HiveError> {
    let host = crate::wire::egress::EgressPattern::new(host).unwrap();
    hive.request_egress(&id(agent), host, "a reason").await
}

async fn pending_of(hive: &Hive, agent: &str) -> Vec<Approval> {
    hive.approvals()
        .await
        .unwrap()
        .into_iter()
        .filter(|a| a.status == ApprovalStatus::Pending && a.agent.as_str() == agent)
        .collect()
}

#[test]
fn a_thousand_identical_requests_in_one_store_leave_one_row() {
    // Issue 44: 1,100 identical request_egress were 1,100 rows.
    let store = Store::open_in_memory().unwrap();
    let new = NewApproval {
        agent: id("alice"),
        kind: ApprovalKind::Egress,
        commit_ref: "pypi.org:443".into(),
        description: Some("pip".into()),
    };
    store
        .blocking(move |c| {
            let first = admit_row(c, &new, None, false, &id("ruth"), 16, 1)?;
            let Admitted::New(row) = first else {
                panic!("{first:?}")
            };
            for at in 2..1_001 {
                assert_eq!(
                    admit_row(c, &new, None, false, &id("ruth"), 16, at)?,
                    Admitted::Pending(row.clone())
                );
            }
            assert_eq!(approvals::pending_count(c)?, 1);
            Ok(())
        })
        .unwrap();
}

#[tokio::test]
async fn the_same_host_asked_again_is_answered_with_the_pending_row_until_it_is_decided() {
    let dir = tempfile::tempdir().unwrap();
    let hive = hive_capped(dir.path(), 16, &["alice"]).await;
    let first = egress(&hive, "alice", "pypi.org:443").await.unwrap();
    assert!(!first.already_pending);
    let again = egress(&hive, "alice", "pypi.org:443").await.unwrap();
    assert_eq!((again.row.id, again.already_pending), (first.row.id, true));
    assert_eq!(pending_of(&hive, "alice").await.len(), 1);
    // Decided: asking again is a new request.
    hive.deny(first.row.id, None).await.unwrap();
    let later = egress(&hive, "alice", "pypi.org:443").await.unwrap();
    assert!(!later.already_pending);
    assert_ne!(later.row.id, first.row.id);
}

#[tokio::test]
async fn an_agent_at_its_cap_is_refused_with_too_many_pending_and_no_one_else_is() {
    let dir = tempfile::tempdir().unwrap();
    let hive = hive_capped(dir.path(), 3, &["alice", "bob"]).await;
    let mut ids = Vec::new();
    for host in ["a.example:443", "b.example:443", "c.example:443"] {
        ids.push(egress(&hive, "alice", host).await.unwrap().row.id);
    }
    let err = egress(&hive, "alice", "d.example:443").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::TooManyPending, "{err}");
    let words = err.to_string();
    for part in [
        "alice",
        "3 approval requests pending",
        "agent_max_pending_approvals",
        "wait for the operator",
    ] {
        assert!(words.contains(part), "{words}");
    }
    assert_eq!(pending_of(&hive, "alice").await.len(), 3);
    // Asking one of the three again is still answered with its row.
    assert!(
        egress(&hive, "alice", "b.example:443")
            .await
            .unwrap()
            .already_pending
    );
    // Bob has his own slots; the manager's request about alice is the manager's.
    egress(&hive, "bob", "d.example:443").await.unwrap();
    hive.request_budget(&id("alice"), "5usd/day".parse().unwrap(), "a run")
        .await
        .unwrap();
    // The operator's own requests are not counted.
    for name in ["kid-a", "kid-b", "kid-c", "kid-d"] {
        hive.request_spawn(&id(name)).await.unwrap();
    }
    // Once the operator decides one, alice may ask again.
    hive.deny(ids[0], None).await.unwrap();
    egress(&hive, "alice", "d.example:443").await.unwrap();
}
