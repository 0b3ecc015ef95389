//! Spawns and destroys a stopped daemon left half done are finished at
//! start-up, as asked, and say so to the manager; while one runs, another
//! spawn or destroy of that agent waits for it instead of racing it.

use std::sync::Arc;
use std::time::Duration;

use crate::containers::ContainerDriver;
use crate::containers::fake::FakeDriver;
use crate::store::agents::{self, Intent};
use crate::store::approvals;
use crate::testing::{config_in, hive_at, id, manager_events};

use super::{Hive, HiveError};

fn hive() -> (Hive, Arc<FakeDriver>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, driver) = hive_at(config_in(dir.path()), 1000);
    (hive, driver, dir)
}

/// A daemon killed after committing `intent` on `name` (and whatever the
/// test did to its container before that).
async fn cut_short(hive: &Hive, name: &str, intent: Intent) {
    let n = id(name);
    hive.store()
        .run(move |c| agents::begin(c, &n, intent, 1000))
        .await
        .unwrap();
}

async fn registered(hive: &Hive, name: &str) -> bool {
    let n = id(name);
    hive.store()
        .read(move |c| agents::get(c, &n))
        .await
        .unwrap()
        .is_some()
}

async fn unfinished(hive: &Hive) -> Vec<(crate::wire::ident::Ident, Intent)> {
    hive.store().read(agents::unfinished).await.unwrap()
}

/// Wait (up to 2 s) for `done`, which the background finish makes true.
async fn eventually<F: AsyncFn() -> bool>(what: &str, done: F) {
    for _ in 0..200 {
        if done().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("never: {what}");
}

#[tokio::test]
async fn a_destroy_cut_short_is_finished_at_start_up_and_the_manager_hears_of_it() {
    let (hive, driver, _dir) = hive();
    hive.spawn(&id("dan")).await.unwrap();
    cut_short(&hive, "dan", Intent::Destroy).await;

    let todo = hive.reconcile_registry().await.unwrap();
    assert_eq!(todo, [(id("dan"), Intent::Destroy)]);
    eventually("dan's row is gone", async || {
        !registered(&hive, "dan").await
    })
    .await;
    assert!(!driver.exists(&id("dan")).await.unwrap());
    assert!(unfinished(&hive).await.is_empty());
    // The event follows the row's removal: wait for it, then count it.
    let dan = [r#""event":"destroyed","agent":"dan""#];
    eventually("the manager hears of dan's destroy", async || {
        !manager_events(&hive, &dan).await.is_empty()
    })
    .await;
    let destroyed = manager_events(&hive, &dan).await;
    assert_eq!(destroyed.len(), 1, "{destroyed:?}");
}

#[tokio::test]
async fn a_purge_cut_short_after_its_container_went_deletes_the_state_at_start_up() {
    let (hive, driver, _dir) = hive();
    hive.spawn(&id("pia")).await.unwrap();
    let state = hive.config().agent_state_dir(&id("pia"));
    std::fs::write(state.join("notes"), "of the first pia").unwrap();
    cut_short(&hive, "pia", Intent::Purge).await;
    driver.destroy(&id("pia"), true).await.unwrap();
    // A plain destroy begun later never narrows the purge.
    cut_short(&hive, "pia", Intent::Destroy).await;

    let todo = hive.reconcile_registry().await.unwrap();
    assert_eq!(todo, [(id("pia"), Intent::Purge)]);
    eventually("pia's row is gone", async || {
        !registered(&hive, "pia").await
    })
    .await;
    assert!(!state.exists(), "the purge deletes the state directory");
}

#[tokio::test]
async fn a_spawn_cut_short_after_its_container_was_made_is_started_at_start_up() {
    let (hive, driver, _dir) = hive();
    let n = id("sam");
    hive.store()
        .run(move |c| {
            agents::insert(c, &n, Some(&id("ruth")), 1000)?;
            agents::begin(c, &n, Intent::Spawn, 1000)
        })
        .await
        .unwrap();
    let spec = hive.container_spec(&id("sam")).await.unwrap();
    driver.create(&id("sam"), &spec).await.unwrap();

    let todo = hive.reconcile_registry().await.unwrap();
    assert_eq!(todo, [(id("sam"), Intent::Spawn)]);
    eventually("sam runs", async || {
        driver.state(&id("sam")).is_some_and(|s| s.is_running())
    })
    .await;
    eventually("the spawn is recorded as over", async || {
        unfinished(&hive).await.is_empty()
    })
    .await;
    // The event follows the record of the spawn's end (it is sent once
    // the container runs): wait for it rather than race it.
    let ok = r#""event":"spawned","agent":"sam","ok":true"#;
    eventually("the manager hears spawned{ok}", async || {
        !manager_events(&hive, &[ok]).await.is_empty()
    })
    .await;
    let spawned = manager_events(&hive, &[ok]).await;
    assert_eq!(spawned.len(), 1, "{spawned:?}");
    let again = hive.spawn(&id("sam")).await.unwrap_err();
    assert!(matches!(again, HiveError::AlreadyManaged(_)), "{again}");
}

#[tokio::test]
async fn an_agent_registered_without_a_container_is_made_and_started_at_start_up() {
    let (hive, driver, _dir) = hive();
    let n = id("old");
    // An older daemon's half-made spawn: a row, no intent, no container.
    hive.store()
        .run(move |c| agents::insert(c, &n, Some(&id("ruth")), 1000).map(drop))
        .await
        .unwrap();

    let todo = hive.reconcile_registry().await.unwrap();
    assert_eq!(todo, [(id("old"), Intent::Spawn)]);
    eventually("old runs", async || {
        driver.state(&id("old")).is_some_and(|s| s.is_running())
    })
    .await;
}

#[tokio::test]
async fn the_spawn_of_an_interrupted_approval_is_left_to_the_approvals_reconciliation() {
    let (hive, _driver, _dir) = hive();
    let row = hive.request_spawn(&id("apa")).await.unwrap();
    let (rid, n) = (row.id, id("apa"));
    hive.store()
        .run(move |c| {
            approvals::claim(c, rid)?;
            agents::insert(c, &n, Some(&id("ruth")), 1000)?;
            agents::begin(c, &n, Intent::Spawn, 1000)
        })
        .await
        .unwrap();
    assert!(hive.reconcile_registry().await.unwrap().is_empty());
}

#[tokio::test]
async fn a_whole_agent_is_left_alone_at_start_up() {
    let (hive, driver, _dir) = hive();
    hive.spawn(&id("ann")).await.unwrap();
    hive.stop(
        &crate::wire::host::LifecycleScope::agents(vec![id("ann")]),
        false,
        None,
    )
    .await
    .unwrap();
    assert!(hive.reconcile_registry().await.unwrap().is_empty());
    assert!(
        !driver.state(&id("ann")).unwrap().is_running(),
        "a stopped agent stays stopped"
    );
}

#[tokio::test]
async fn a_second_spawn_or_destroy_during_a_slow_spawn_answers_in_progress() {
    let dir = tempfile::tempdir().unwrap();
    let delay = Duration::from_millis(500);
    let (hive, driver) = crate::testing::hive_with_slow_starts(config_in(dir.path()), delay);
    let first = tokio::spawn({
        let hive = hive.clone();
        async move { hive.spawn_now(&id("slo")).await }
    });
    eventually("the first spawn registered slo", async || {
        registered(&hive, "slo").await
    })
    .await;
    for second in [
        hive.spawn_now(&id("slo")).await,
        hive.destroy(&id("slo"), false).await,
    ] {
        let err = second.unwrap_err();
        assert!(matches!(err, HiveError::StillRunning { .. }), "{err}");
    }
    first.await.unwrap().unwrap();
    assert!(driver.state(&id("slo")).unwrap().is_running());
    assert!(unfinished(&hive).await.is_empty());
}

#[tokio::test]
async fn the_managers_container_is_never_taken_for_a_spawn_to_finish() {
    let dir = tempfile::tempdir().unwrap();
    // An installation whose manager has no container (yet): not the hive's to make.
    let (hive, driver) = crate::testing::hive_without_containers(config_in(dir.path()), 1000);
    hive.store()
        .run(|c| agents::insert(c, &id("ruth"), None, 1000).map(drop))
        .await
        .unwrap();
    assert!(hive.reconcile_registry().await.unwrap().is_empty());
    assert!(!driver.exists(&id("ruth")).await.unwrap());
}

/// An agent registered before the pause moved into the store (its flag
/// NULL, as migration 16 leaves it).
async fn from_before_the_upgrade(store: &crate::store::Store, name: &str) {
    let n = id(name);
    store
        .run(move |c| {
            agents::insert(c, &n, None, 1000)?;
            c.execute(
                "UPDATE agents SET paused = NULL WHERE name = ?1",
                [n.as_str()],
            )?;
            Ok(())
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn an_old_pause_marker_is_taken_once_a_link_counts_as_none_and_later_files_change_nothing() {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path());
    let store = crate::store::Store::open_in_memory().unwrap();
    for name in ["kept", "linked", "never"] {
        from_before_the_upgrade(&store, name).await;
        std::fs::create_dir_all(config.agent_state_dir(&id(name))).unwrap();
    }
    let marker = |name: &str| config.agent_state_dir(&id(name)).join("paused");
    std::fs::write(marker("kept"), b"").unwrap();
    // A link the agent planted at a host path that exists: not followed.
    std::os::unix::fs::symlink(dir.path(), marker("linked")).unwrap();

    super::import_pause_markers(&store, &config).await.unwrap();
    let paused = |store: &crate::store::Store, name: &str| {
        let (store, n) = (store.clone(), id(name));
        async move {
            store
                .read(move |c| agents::get(c, &n))
                .await
                .unwrap()
                .unwrap()
                .paused
        }
    };
    assert!(paused(&store, "kept").await);
    assert!(!paused(&store, "linked").await);
    assert!(!paused(&store, "never").await);
    assert!(!marker("kept").exists() && marker("linked").symlink_metadata().is_err());
    assert!(dir.path().exists(), "the link's target is untouched");

    // After the import the agent's files decide nothing: a new marker is
    // neither read nor removed.
    std::fs::write(marker("never"), b"").unwrap();
    super::import_pause_markers(&store, &config).await.unwrap();
    assert!(!paused(&store, "never").await);
    assert!(marker("never").exists());
}
