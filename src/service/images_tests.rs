use super::*;
use crate::testing::{config_in, hive_at, id};
use crate::wire::images::ImageKind;

/// Each row as (version, current, agents), full copies as "full copy".
fn said(rows: &[ImageRow]) -> Vec<(String, bool, Vec<String>)> {
    rows.iter()
        .map(|r| {
            let name = match r.kind {
                ImageKind::Shared => r.version.clone().unwrap_or_default(),
                ImageKind::FullCopy => "full copy".into(),
                ImageKind::Host => "host".into(),
            };
            let agents = r.agents.iter().map(ToString::to_string).collect();
            (name, r.current, agents)
        })
        .collect()
}

#[tokio::test]
async fn image_ls_shows_the_agents_of_each_version_and_a_rebuild_moves_one_to_the_current() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, driver) = hive_at(config_in(dir.path()), 1_000);
    hive.spawn(&id("carol")).await.unwrap();
    driver.share("v1");
    hive.spawn(&id("alice")).await.unwrap();
    driver.share("v2");
    hive.spawn(&id("bob")).await.unwrap();
    let owned = |v: &[&str]| v.iter().map(ToString::to_string).collect::<Vec<_>>();
    assert_eq!(
        said(&hive.images().await.unwrap()),
        [
            ("v1".into(), false, owned(&["alice"])),
            ("v2".into(), true, owned(&["bob"])),
            ("full copy".into(), false, owned(&["carol"])),
        ]
    );
    hive.rebuild(&id("alice")).await.unwrap();
    hive.rebuild(&id("carol")).await.unwrap();
    assert_eq!(
        said(&hive.images().await.unwrap()),
        [
            ("v1".into(), false, owned(&[])),
            ("v2".into(), true, owned(&["alice", "bob", "carol"])),
        ]
    );
}

#[tokio::test]
async fn prune_keeps_the_used_and_the_newest_versions_and_removes_the_rest() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, driver) = hive_at(config_in(dir.path()), 1_000);
    driver.share("v1");
    hive.spawn(&id("alice")).await.unwrap();
    driver.share("v2");
    driver.share("v3");
    driver.share("v4");
    hive.spawn(&id("bob")).await.unwrap();
    assert_eq!(hive.prune_images(true).await.unwrap(), ["v2", "v3"]);
    assert_eq!(
        hive.images().await.unwrap().len(),
        4,
        "a dry run removes nothing"
    );
    assert_eq!(hive.prune_images(false).await.unwrap(), ["v2", "v3"]);
    let left = |rows: Vec<ImageRow>| {
        rows.into_iter()
            .filter_map(|r| r.version)
            .collect::<Vec<_>>()
    };
    assert_eq!(left(hive.images().await.unwrap()), ["v1", "v4"]);
    hive.rebuild(&id("alice")).await.unwrap();
    assert_eq!(hive.prune_images(false).await.unwrap(), ["v1"]);
    assert_eq!(left(hive.images().await.unwrap()), ["v4"]);
    assert!(hive.prune_images(false).await.unwrap().is_empty());
}
