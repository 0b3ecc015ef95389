//! `needs_update` and `auto_update` on the fake driver, across restarts
//! (a restart is a new `Hive` on the same database file and state).

use std::path::Path;
use std::sync::Arc;

use super::*;
use crate::clock::ManualClock;
use crate::config::Config;
use crate::containers::ContainerDriver as _;
use crate::containers::fake::FakeDriver;
use crate::hive::approvals::NewApproval;
use crate::service::grants::Grant;
use crate::store::Store;
use crate::testing::{commit, config_in, id, manager_events};
use crate::wire::agenda::Capability;
use crate::wire::egress::EgressPattern;
use crate::wire::host::ApprovalKind;

const NEEDS_UPDATE: &str = r#"{"event":"needs_update","agent":"alice"}"#;

/// A hive on the database under `dir` whose host has the containers of
/// `ruth` and `alice` (stopped), as a restarted daemon finds them.
fn restarted(config: Config) -> (Hive, Arc<FakeDriver>) {
    let store = Store::open(&config.database()).unwrap();
    let driver = Arc::new(FakeDriver::with_containers(
        config.profile,
        [id("ruth"), id("alice")],
    ));
    let clock = Arc::new(ManualClock::new(1000));
    let hive = Hive::new(config, store, driver.clone(), clock).unwrap();
    (hive, driver)
}

async fn needs_update(hive: &Hive) -> bool {
    hive.row(&id("alice")).await.unwrap().unwrap().needs_update
}

/// Alice spawned, then running a deployed `agent.json` that sets no
/// limits (so the hive's `agent_memory_max` is hers).
async fn alice_on_the_hive_defaults(dir: &Path) -> (Hive, Arc<FakeDriver>) {
    let config = config_in(dir);
    let store = Store::open(&config.database()).unwrap();
    let (hive, driver) = crate::testing::hive_on(config, store, Arc::new(ManualClock::new(1000)));
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    let sha = commit(
        &hive.repos().proposed(&alice),
        &[("agent.json", r#"{"model":"claude-x"}"#)],
    );
    let row = hive
        .request_approval(NewApproval {
            agent: alice.clone(),
            kind: ApprovalKind::ApplyCommit,
            commit_ref: sha,
            description: None,
        })
        .await
        .unwrap();
    hive.approve(row.id, None).await.unwrap();
    assert!(!needs_update(&hive).await);
    (hive, driver)
}

#[tokio::test]
async fn a_base_changed_across_a_restart_flags_the_agent_once_and_auto_update_rebuilds_it() {
    let dir = tempfile::tempdir().unwrap();
    drop(alice_on_the_hive_defaults(dir.path()).await);
    let alice = id("alice");
    // Same config: nothing changed, nothing flagged.
    let (hive, _driver) = restarted(config_in(dir.path()));
    assert!(hive.check_bases().await.unwrap().is_empty());
    drop(hive);
    // The operator raises the hive's default memory limit and restarts.
    let eight = Config {
        agent_memory_max: Some("8G".into()),
        ..config_in(dir.path())
    };
    let (hive, _driver) = restarted(eight.clone());
    assert_eq!(hive.check_bases().await.unwrap(), vec![alice.clone()]);
    assert!(needs_update(&hive).await);
    assert_eq!(
        manager_events(&hive, &["needs_update"]).await,
        [NEEDS_UPDATE]
    );
    // Without auto_update nothing is rebuilt.
    assert!(hive.auto_update(vec![alice.clone()]).is_none());
    drop(hive);
    // Still stale after another restart, but the manager heard it once.
    let auto = Config {
        auto_update: true,
        ..eight
    };
    let (hive, driver) = restarted(auto);
    let stale = hive.check_bases().await.unwrap();
    assert_eq!(stale, vec![alice.clone()]);
    assert_eq!(manager_events(&hive, &["needs_update"]).await.len(), 1);
    // auto_update rebuilds it against the new base; it was stopped and
    // stays stopped.
    hive.auto_update(stale).unwrap().await.unwrap();
    let spec = driver.spec_of(&alice).unwrap();
    assert_eq!(spec.memory_max.as_deref(), Some("8G"));
    assert!(
        spec.env
            .contains(&("HIVE_CLAUDE_ENV".into(), "ANTHROPIC_MODEL=claude-x".into()))
    );
    assert!(!driver.state(&alice).unwrap().is_running());
    assert!(!needs_update(&hive).await);
    // The deploy's rebuilt, then the auto_update's (no tag: no proposal).
    let rebuilt = manager_events(&hive, &["\"rebuilt\""]).await;
    assert_eq!(rebuilt.len(), 2, "{rebuilt:?}");
    assert!(rebuilt[1].starts_with(r#"{"event":"rebuilt","agent":"alice","ok":true,"sha":"#));
    assert!(!rebuilt[1].contains("tag"), "{rebuilt:?}");
    drop(hive);
    let (hive, _driver) = restarted(config_in(dir.path()));
    // Back on 4G: stale again, and heard again (it turned true again).
    assert_eq!(hive.check_bases().await.unwrap(), [alice]);
    assert_eq!(manager_events(&hive, &["needs_update"]).await.len(), 2);
}

#[tokio::test]
async fn a_grant_flags_the_agent_and_a_rebuild_clears_it() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, driver) = alice_on_the_hive_defaults(dir.path()).await;
    let alice = id("alice");
    let journal = Grant::Capability(Capability::ReadHostJournal);
    hive.set_grant(&alice, journal.clone(), true).await.unwrap();
    assert!(needs_update(&hive).await);
    // A second change while it is flagged: no second event.
    let state = Grant::Capability(Capability::QueryAgentState);
    hive.set_grant(&alice, state, true).await.unwrap();
    assert_eq!(
        manager_events(&hive, &["needs_update"]).await,
        [NEEDS_UPDATE]
    );
    // An egress host is not in the container: no flag from it.
    hive.rebuild(&alice).await.unwrap();
    assert!(!needs_update(&hive).await);
    let egress = Grant::Egress(EgressPattern::new("example.org:443").unwrap(), None);
    hive.set_grant(&alice, egress, true).await.unwrap();
    assert!(!needs_update(&hive).await);
    // The rebuild (the manager's `update`) put the grants in its
    // container's environment.
    let driver_env = driver.spec_of(&alice).unwrap().env;
    assert!(
        driver_env
            .iter()
            .any(|(k, v)| k == "HIVE_CAPABILITIES" && v.contains("read_host_journal")),
        "{driver_env:?}"
    );
    hive.set_grant(&alice, journal, false).await.unwrap();
    assert!(needs_update(&hive).await);
    assert_eq!(manager_events(&hive, &["needs_update"]).await.len(), 2);
}
