//! Spawns a restart cut short are finished, and the approval's note says
//! what was checked. Used to be: the note said "the agent was spawned"
//! whenever the name was registered, also for an agent with no container,
//! and a retried spawn of such an agent answered "already exists".

use std::time::Duration;

use crate::containers::ContainerDriver;
use crate::store::{agents, approvals};
use crate::testing::{config_in, hive_at, id};
use crate::wire::host::ApprovalStatus;

use super::{Hive, HiveError};

fn hive() -> (
    Hive,
    std::sync::Arc<crate::containers::fake::FakeDriver>,
    tempfile::TempDir,
) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, driver) = hive_at(config_in(dir.path()), 1000);
    (hive, driver, dir)
}

/// A spawn killed after registering `name` and before making its
/// container: the row is there, the container is not.
async fn register_only(hive: &Hive, name: &str) {
    let (n, ruth) = (id(name), id("ruth"));
    hive.store()
        .run(move |c| agents::insert(c, &n, Some(&ruth), 1000))
        .await
        .unwrap();
}

async fn manager_bodies(hive: &Hive) -> Vec<String> {
    hive.store()
        .run(|c| {
            let mut stmt = c.prepare("SELECT body FROM messages WHERE recipient = 'ruth'")?;
            let rows = stmt.query_map([], |r| r.get(0))?;
            Ok(rows.collect::<Result<Vec<String>, _>>()?)
        })
        .await
        .unwrap()
}

#[tokio::test]
async fn an_interrupted_approved_spawn_without_a_container_is_finished_at_start_up() {
    let (hive, driver, _dir) = hive();
    let row = hive.request_spawn(&id("erin")).await.unwrap();
    let rid = row.id;
    hive.store()
        .run(move |c| approvals::claim(c, rid))
        .await
        .unwrap();
    register_only(&hive, "erin").await;
    assert!(!driver.exists(&id("erin")).await.unwrap());

    let ended = hive.reconcile_interrupted().await.unwrap();
    assert!(ended.is_empty(), "its outcome is not known yet: {ended:?}");
    let mut status = ApprovalStatus::Pending;
    for _ in 0..200 {
        let got = hive
            .store()
            .read(move |c| approvals::get(c, rid))
            .await
            .unwrap()
            .unwrap();
        if got.status != ApprovalStatus::Pending {
            status = got.status;
            assert!(
                got.note
                    .as_deref()
                    .is_some_and(|n| n.ends_with("the spawn was finished at start-up")),
                "{got:?}"
            );
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    assert_eq!(status, ApprovalStatus::Approved);
    assert!(driver.state(&id("erin")).unwrap().is_running());
    let bodies = manager_bodies(&hive).await;
    assert!(
        bodies
            .iter()
            .any(|b| b.contains(r#""event":"spawned","agent":"erin","ok":true"#)),
        "{bodies:?}"
    );
    let resolved = bodies
        .iter()
        .filter(|b| b.contains(r#""event":"approval_resolved""#))
        .count();
    assert_eq!(resolved, 1, "{bodies:?}");
}

#[tokio::test]
async fn a_retried_spawn_finishes_a_half_made_agent_and_refuses_a_whole_one() {
    let (hive, driver, _dir) = hive();
    register_only(&hive, "fay").await;
    hive.spawn(&id("fay")).await.unwrap();
    assert!(driver.state(&id("fay")).unwrap().is_running());
    let again = hive.spawn(&id("fay")).await.unwrap_err();
    assert!(matches!(again, HiveError::AlreadyManaged(_)), "{again}");
}
