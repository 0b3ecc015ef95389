use std::sync::Arc;

use super::*;
use crate::containers::fake::FakeDriver;
use crate::containers::{ContainerDriver as _, ContainerSpec};
use crate::testing::{config_in, id};
use crate::wire::host::LifecycleScope;

/// A hive whose manager container was made by an older daemon: its
/// settings have no config repo binds.
async fn hive_with_an_old_manager_container() -> (Hive, Arc<FakeDriver>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, driver) = crate::testing::hive_without_containers(config_in(dir.path()), 1);
    let ruth = id("ruth");
    let old = ContainerSpec {
        repos: None,
        ..hive.container_spec(&ruth).await.unwrap()
    };
    driver.create(&ruth, &old).await.unwrap();
    (hive, driver, dir)
}

#[tokio::test]
async fn a_plain_start_gives_an_older_manager_container_its_repo_binds() {
    let (hive, driver, dir) = hive_with_an_old_manager_container().await;
    let ruth = id("ruth");
    assert_eq!(driver.has_repo_binds(&ruth).await.unwrap(), Some(false));
    hive.start(&LifecycleScope::default()).await.unwrap();
    let spec = driver.spec_of(&ruth).unwrap();
    let repos = spec.repos.expect("the binds, rendered at start");
    assert_eq!(repos.proposed, dir.path().join("state/proposed"));
    assert_eq!(repos.applied, dir.path().join("state/applied"));
    assert!(driver.state(&ruth).unwrap().is_running());
}

#[tokio::test]
async fn a_start_leaves_a_manager_with_its_binds_and_other_agents_settings_alone() {
    let (hive, driver, _dir) = hive_with_an_old_manager_container().await;
    let ruth = id("ruth");
    hive.start(&LifecycleScope::default()).await.unwrap();
    hive.stop(&LifecycleScope::default(), false, None)
        .await
        .unwrap();
    // A later change to the rendered spec is not applied by a start.
    let mut marked = driver.spec_of(&ruth).unwrap();
    marked.memory_max = Some("1G".into());
    driver.rebuild(&ruth, &marked).await.unwrap();
    hive.start(&LifecycleScope::default()).await.unwrap();
    assert_eq!(driver.spec_of(&ruth).unwrap(), marked);
}
