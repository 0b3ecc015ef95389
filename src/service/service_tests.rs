//! The service layer against the fake driver and an in-memory store.

use crate::service::RosterChange;
use crate::testing::{config_in, hive_at, id};
use std::sync::Arc;
use std::time::Duration;

use super::Hive;
use crate::config::Config;
use crate::containers::fake::FakeDriver;
use crate::store::agents;
use crate::wire::host::{ApprovalStatus, LifecycleScope, Signal};

fn hive() -> (Hive, Arc<FakeDriver>, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let config = config_in(dir.path());
    let (hive, driver) = hive_at(config, 1000);
    tokio::spawn(hive.clone().watch_units());
    (hive, driver, dir)
}

/// `(sender, body)` of every message to `to`, oldest first.
async fn inbox(hive: &Hive, to: &str) -> Vec<(String, String)> {
    let to = to.to_owned();
    hive.store()
        .run(move |c| {
            let mut stmt =
                c.prepare("SELECT sender, body FROM messages WHERE recipient = ?1 ORDER BY id")?;
            let rows = stmt.query_map([to], |r| Ok((r.get(0)?, r.get(1)?)))?;
            Ok(rows.collect::<Result<Vec<_>, _>>()?)
        })
        .await
        .unwrap()
}

async fn eventually<F: AsyncFn() -> bool>(what: &str, check: F) {
    for _ in 0..200 {
        if check().await {
            return;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    panic!("timed out waiting for {what}");
}

#[tokio::test]
async fn a_container_that_dies_on_its_own_is_recorded_as_a_crash_and_reported() {
    let (hive, driver, _dir) = hive();
    hive.spawn(&id("alice")).await.unwrap();
    driver.crash(&id("alice"));
    eventually("the crash record", async || {
        let h = hive.clone();
        h.store()
            .run(|c| agents::crashes(c, &id("alice")))
            .await
            .unwrap()
            .len()
            == 1
    })
    .await;
    // The report to the manager follows the record (a separate write).
    eventually("the manager's crash event", async || {
        inbox(&hive, "ruth").await.iter().any(|(from, body)| {
            from == "system"
                && body
                    == r#"{"event":"container_crash","agent":"alice","note":"unit result: signal"}"#
        })
    })
    .await;
    let row = hive.row(&id("alice")).await.unwrap().unwrap();
    assert!(row.failed && !row.running);
}

#[tokio::test]
async fn an_operator_stop_is_not_a_crash_even_a_hard_one() {
    let (hive, driver, _dir) = hive();
    hive.spawn(&id("alice")).await.unwrap();
    hive.spawn(&id("bob")).await.unwrap();
    hive.stop(&LifecycleScope::agents(vec![id("alice")]), false, None)
        .await
        .unwrap();
    // The watcher handles changes in order: once bob's later crash is
    // recorded, alice's stop has been judged too.
    driver.crash(&id("bob"));
    eventually("bob's crash record", async || {
        let h = hive.clone();
        !h.store()
            .run(|c| agents::crashes(c, &id("bob")))
            .await
            .unwrap()
            .is_empty()
    })
    .await;
    let crashes = hive
        .store()
        .run(|c| agents::crashes(c, &id("alice")))
        .await
        .unwrap();
    assert!(crashes.is_empty(), "{crashes:?}");
}

async fn crash_count(hive: &Hive, name: &str) -> usize {
    let name = id(name);
    hive.store()
        .run(move |c| agents::crashes(c, &name))
        .await
        .unwrap()
        .len()
}

#[tokio::test]
async fn an_operators_signal_that_ends_a_container_is_not_a_crash_and_leaves_it_stopped() {
    let (hive, driver, _dir) = hive();
    for name in ["alice", "bob", "carol", "dave"] {
        hive.spawn(&id(name)).await.unwrap();
    }
    // KILL ends the init, nspawn exits non-zero (the fake copies it):
    // failed, then reset.
    hive.signal(&id("alice"), Signal::Kill).await.unwrap();
    eventually("alice's failed state cleared", async || {
        let row = hive.row(&id("alice")).await.unwrap().unwrap();
        !row.running && !row.failed
    })
    .await;
    // INT reboots the container: down and up again, no crash.
    hive.signal(&id("dave"), Signal::Int).await.unwrap();
    assert!(hive.row(&id("dave")).await.unwrap().unwrap().running);
    // WINCH ends nothing: a crash after it is still a crash.
    hive.signal(&id("bob"), Signal::Winch).await.unwrap();
    assert!(hive.row(&id("bob")).await.unwrap().unwrap().running);
    driver.crash(&id("bob"));
    eventually("bob's crash record", async || {
        crash_count(&hive, "bob").await == 1
    })
    .await;
    assert_eq!(crash_count(&hive, "alice").await, 0);
    assert_eq!(crash_count(&hive, "dave").await, 0);
    // Nothing to signal in a stopped container: said, not pretended.
    let err = hive.signal(&id("alice"), Signal::Term).await.unwrap_err();
    assert!(matches!(err, super::HiveError::NotRunning(_)), "{err}");
    // TERM makes systemd re-execute itself: the container stays up.
    hive.signal(&id("carol"), Signal::Term).await.unwrap();
    assert!(hive.row(&id("carol")).await.unwrap().unwrap().running);
}

#[tokio::test]
async fn a_crash_marks_the_row_crashed_until_the_agent_runs_again_and_an_operators_kill_does_not() {
    let (hive, driver, _dir) = hive();
    for name in ["alice", "bob"] {
        hive.spawn(&id(name)).await.unwrap();
    }
    driver.crash(&id("alice"));
    // The roster served from memory, as host.sock and the dashboard read it.
    eventually("alice's row crashed", async || {
        hive.roster()
            .rows()
            .iter()
            .any(|r| r.name == id("alice") && r.crashed && r.failed)
    })
    .await;
    hive.start(&LifecycleScope::agents(vec![id("alice")]))
        .await
        .unwrap();
    let row = hive.row(&id("alice")).await.unwrap().unwrap();
    assert!(row.running && !row.crashed, "{row:?}");
    hive.stop(&LifecycleScope::agents(vec![id("bob")]), false, None)
        .await
        .unwrap();
    assert!(!hive.row(&id("bob")).await.unwrap().unwrap().crashed);
}

#[tokio::test]
async fn a_hard_stop_leaves_the_agent_stopped_and_never_pushes_a_failed_row() {
    // What used to break: `hivectl stop` (SIGKILL) left the unit failed, and
    // dashboards raised "container failed" for an operator's stop.
    let (hive, driver, _dir) = hive();
    hive.spawn(&id("alice")).await.unwrap();
    let mut rows = hive.subscribe_roster();
    hive.stop(&LifecycleScope::agents(vec![id("alice")]), false, None)
        .await
        .unwrap();
    assert!(!crate::containers::ContainerDriver::view(&*driver)[&id("alice")].is_failed());
    let row = hive.row(&id("alice")).await.unwrap().unwrap();
    assert!(!row.failed && !row.running, "{row:?}");
    loop {
        let pushed = tokio::time::timeout(Duration::from_secs(2), rows.recv())
            .await
            .expect("the stopped row on the stream")
            .unwrap();
        let RosterChange::Row(pushed) = pushed else {
            panic!("alice is still managed: {pushed:?}");
        };
        assert!(!pushed.failed, "a failed row was pushed: {pushed:?}");
        if !pushed.running {
            break;
        }
    }
}

#[tokio::test]
async fn purge_after_a_plain_destroy_deletes_the_kept_state_and_then_nothing_is_left() {
    let (hive, _driver, _dir) = hive();
    hive.spawn(&id("alice")).await.unwrap();
    let state = hive.config().agent_state_dir(&id("alice"));
    assert!(state.exists());
    hive.destroy(&id("alice"), false).await.unwrap();
    assert!(state.exists(), "a plain destroy keeps the state");
    hive.destroy(&id("alice"), true).await.unwrap();
    assert!(!state.exists());
    // Nothing left: the name is unknown again (a typo is refused too).
    let again = hive.destroy(&id("alice"), true).await;
    assert!(
        matches!(again, Err(super::HiveError::UnknownAgent(_))),
        "{again:?}"
    );
    let plain = hive.destroy(&id("zed"), false).await;
    assert!(
        matches!(plain, Err(super::HiveError::UnknownAgent(_))),
        "{plain:?}"
    );
}

#[tokio::test]
async fn destroying_an_agent_cancels_its_pending_approvals_and_tells_the_manager() {
    let (hive, _driver, dir) = hive();
    hive.spawn(&id("alice")).await.unwrap();
    hive.seed_missing_configs().await.unwrap();
    let main = hive.repos().rev(&id("alice"), "main").await.unwrap();
    let row = hive
        .request_approval(crate::store::approvals::NewApproval {
            agent: id("alice"),
            kind: crate::wire::host::ApprovalKind::ApplyCommit,
            commit_ref: main,
            description: None,
        })
        .await
        .unwrap();
    hive.destroy(&id("alice"), true).await.unwrap();
    let after = hive
        .store()
        .run(move |c| crate::store::approvals::get(c, row.id))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(after.status, ApprovalStatus::Cancelled);
    assert!(
        !dir.path().join("state/agents/alice").exists(),
        "purge keeps no state"
    );
    assert!(!hive.repos().has_any(&id("alice")), "nor config repos");
    let bodies: Vec<String> = inbox(&hive, "ruth")
        .await
        .into_iter()
        .map(|(_, b)| b)
        .collect();
    assert!(
        bodies
            .iter()
            .any(|b| b.contains(r#""event":"approval_resolved""#)
                && b.contains(r#""status":"cancelled""#)),
        "{bodies:?}"
    );
    assert!(
        bodies
            .iter()
            .any(|b| b == r#"{"event":"destroyed","agent":"alice"}"#),
        "{bodies:?}"
    );
    assert!(hive.row(&id("alice")).await.unwrap().is_none());
}

#[tokio::test]
async fn a_failed_start_at_spawn_keeps_the_agent_and_tells_the_manager() {
    let (hive, driver, _dir) = hive();
    driver.fail_starts(&id("bob"));
    let err = hive.spawn(&id("bob")).await.unwrap_err();
    assert!(
        err.to_string()
            .contains("start of systemd-nspawn@h-bob.service failed"),
        "{err}"
    );
    // The container exists (create succeeded), so the agent stays managed
    // and a start can be retried; the manager hears that the spawn failed.
    assert!(hive.row(&id("bob")).await.unwrap().unwrap().failed);
    let bodies: Vec<String> = inbox(&hive, "ruth")
        .await
        .into_iter()
        .map(|(_, b)| b)
        .collect();
    assert!(
        bodies
            .iter()
            .any(|b| b.contains(r#""event":"spawned","agent":"bob","ok":false"#)),
        "{bodies:?}"
    );
}

#[tokio::test]
async fn the_managers_container_sees_the_manager_socket_directory_as_run_hive() {
    let (hive, _driver, dir) = hive();
    let spec = hive.container_spec(&id("ruth")).await.unwrap();
    assert_eq!(spec.runtime_dir, dir.path().join("run/manager"));
    let spec = hive.container_spec(&id("alice")).await.unwrap();
    assert_eq!(spec.runtime_dir, dir.path().join("run/agents/alice"));
}

/// Only the manager sees the config repos (issue 28); no agent sees its
/// own.
#[tokio::test]
async fn only_the_managers_container_binds_the_config_repos() {
    let (hive, _driver, dir) = hive();
    let spec = hive.container_spec(&id("ruth")).await.unwrap();
    let repos = spec.repos.expect("the manager's repo binds");
    assert_eq!(repos.proposed, dir.path().join("state/proposed"));
    assert_eq!(repos.applied, dir.path().join("state/applied"));
    let spec = hive.container_spec(&id("alice")).await.unwrap();
    assert_eq!(spec.repos, None);
}

#[tokio::test]
async fn update_meta_inputs_in_the_nspawn_profile_is_refused_naming_the_profile_and_leaves_no_row()
{
    let (hive, _driver, _dir) = hive();
    let err = hive
        .request_approval(crate::store::approvals::NewApproval {
            agent: id("ruth"),
            kind: crate::wire::host::ApprovalKind::UpdateMetaInputs,
            commit_ref: r#"["nixpkgs"]"#.into(),
            description: None,
        })
        .await
        .unwrap_err();
    assert!(matches!(err, super::HiveError::NotOffered(_)), "{err:?}");
    assert!(err.to_string().contains("nspawn profile"), "{err}");
    assert!(hive.approvals().await.unwrap().is_empty());
}

#[tokio::test]
async fn starting_a_managed_agent_without_a_container_creates_it_first() {
    let dir = tempfile::tempdir().unwrap();
    // A new host: the registry has the manager, the host has no container.
    let (hive, driver) = crate::testing::hive_without_containers(config_in(dir.path()), 1);
    hive.start(&LifecycleScope::default()).await.unwrap();
    use crate::containers::ContainerDriver;
    assert!(driver.view()[&id("ruth")].is_running());
}

#[tokio::test]
async fn a_stop_deadline_from_the_request_replaces_the_configured_one_within_limits() {
    use crate::containers::StopMode;
    let (hive, _driver, _dir) = hive();
    let configured = StopMode::Graceful {
        deadline: hive.config().stop_deadline(),
    };
    assert_eq!(hive.stop_mode(true, None), configured);
    assert_eq!(
        hive.stop_mode(true, Some(7)),
        StopMode::Graceful {
            deadline: Duration::from_secs(7)
        }
    );
    assert_eq!(hive.stop_mode(true, Some(0)), StopMode::Hard);
    assert_eq!(hive.stop_mode(false, Some(7)), StopMode::Hard);
    assert_eq!(
        hive.stop_mode(true, Some(u64::MAX)),
        StopMode::Graceful {
            deadline: Duration::from_secs(crate::wire::host::MAX_STOP_DEADLINE_SECS)
        }
    );
}

#[tokio::test]
async fn the_roster_is_one_version_until_a_change_and_follows_spawn_pause_crash_and_destroy() {
    let (hive, driver, _dir) = hive();
    let before = hive.roster();
    assert!(
        Arc::ptr_eq(&before, &hive.roster()),
        "no change, same version"
    );
    assert!(
        std::ptr::eq(before.json(), hive.roster().json()),
        "serialized once"
    );
    hive.spawn(&id("alice")).await.unwrap();
    let row = |name: &str| {
        hive.roster()
            .rows()
            .iter()
            .find(|r| r.name.as_str() == name)
            .cloned()
    };
    assert!(row("alice").unwrap().running);
    hive.set_paused(&id("alice"), true).await.unwrap();
    assert!(row("alice").unwrap().paused);
    assert!(hive.roster().json().contains("\"paused\":true"));
    driver.crash(&id("alice"));
    eventually("the crashed row", async || !row("alice").unwrap().running).await;
    hive.destroy(&id("alice"), false).await.unwrap();
    assert!(row("alice").is_none());
    assert_eq!(hive.agent_status().await.unwrap(), hive.roster().rows());
}

#[tokio::test]
async fn a_spawn_past_max_agents_is_refused_naming_the_key_and_frees_up_after_a_destroy() {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        max_agents: 2,
        ..config_in(dir.path())
    };
    let (hive, _driver) = hive_at(config, 1000);
    hive.spawn(&id("alice")).await.unwrap();
    let err = hive.spawn(&id("bob")).await.unwrap_err();
    assert!(
        matches!(err, super::HiveError::HiveFull { max: 2, .. }),
        "{err}"
    );
    let text = err.to_string();
    assert!(
        text.contains("\"bob\"") && text.contains("max_agents"),
        "{text}"
    );
    assert!(
        hive.require(&id("bob")).await.is_err(),
        "no row left behind"
    );
    hive.destroy(&id("alice"), false).await.unwrap();
    hive.spawn(&id("bob")).await.unwrap();
}

/// Used to be: after a SIGKILL during approved actions, rows were marked
/// `failed` with no `approval_resolved` to the manager, some although
/// their agent had been spawned.
#[tokio::test]
async fn approvals_a_crash_interrupted_end_truthfully_with_exactly_one_event_each() {
    let (hive, _driver, _dir) = hive();
    let spawned = hive.request_spawn(&id("bob")).await.unwrap();
    let not_spawned = hive.request_spawn(&id("carl")).await.unwrap();
    let command = hive
        .request_approval(crate::testing::new_approval("alice"))
        .await
        .unwrap();
    let untouched = hive.request_spawn(&id("dora")).await.unwrap();
    // The crashed daemon had claimed three rows; bob's spawn had happened.
    for row in [&spawned, &not_spawned, &command] {
        let id = row.id;
        hive.store()
            .run(move |c| crate::store::approvals::claim(c, id))
            .await
            .unwrap();
    }
    hive.spawn_now(&id("bob")).await.unwrap();

    let ended = hive.reconcile_interrupted().await.unwrap();
    let status = |id: i64| ended.iter().find(|r| r.id == id).map(|r| r.status);
    assert_eq!(status(spawned.id), Some(ApprovalStatus::Approved));
    assert_eq!(status(not_spawned.id), Some(ApprovalStatus::Failed));
    assert_eq!(status(command.id), Some(ApprovalStatus::Failed));
    assert_eq!(status(untouched.id), None, "an unclaimed row waits on");
    assert!(hive.reconcile_interrupted().await.unwrap().is_empty());

    let events: Vec<String> = inbox(&hive, "ruth")
        .await
        .into_iter()
        .map(|(_, b)| b)
        .filter(|b| b.contains(r#""event":"approval_resolved""#))
        .collect();
    for row in [&spawned, &not_spawned, &command] {
        let needle = format!(r#""id":{},"#, row.id);
        let n = events.iter().filter(|b| b.contains(&needle)).count();
        assert_eq!(n, 1, "approval {}: {events:?}", row.id);
    }
    assert_eq!(events.len(), 3, "{events:?}");
}

#[tokio::test]
async fn deny_and_approve_each_leave_exactly_one_event_for_the_manager() {
    let (hive, _driver, _dir) = hive();
    let a = hive.request_spawn(&id("bob")).await.unwrap();
    let b = hive.request_spawn(&id("carl")).await.unwrap();
    hive.approve(a.id, None).await.unwrap();
    hive.deny(b.id, None).await.unwrap();
    assert!(hive.deny(b.id, None).await.is_err());
    let events = inbox(&hive, "ruth").await;
    let resolved = events
        .iter()
        .filter(|(from, b)| from == "system" && b.contains(r#""event":"approval_resolved""#))
        .count();
    assert_eq!(resolved, 2, "{events:?}");
}

/// The rules on a request's values hold for every door, because the
/// service applies them: before, only the manager socket checked a commit
/// ref or a flake input, and `Hive::request_approval` took anything.
#[tokio::test]
async fn the_service_refuses_bad_values_whichever_door_asked() {
    use super::HiveError;
    use crate::store::approvals::NewApproval;
    use crate::wire::host::ApprovalKind;
    let (hive, _driver, _dir) = hive();
    let ask = |kind, agent: &str, commit_ref: &str| NewApproval {
        agent: id(agent),
        kind,
        commit_ref: commit_ref.into(),
        description: None,
    };
    for bad in [
        ask(ApprovalKind::ApplyCommit, "ruth", "--force"),
        ask(
            ApprovalKind::UpdateMetaInputs,
            "ruth",
            r#"["--override-input"]"#,
        ),
        ask(ApprovalKind::UpdateMetaInputs, "ruth", "nixpkgs"),
    ] {
        let err = hive.request_approval(bad).await.unwrap_err();
        assert!(matches!(err, HiveError::BadArgument(_)), "{err:?}");
    }
    let ghost = ask(ApprovalKind::ApplyCommit, "ghost", "0123abc");
    let err = hive.request_approval(ghost).await.unwrap_err();
    assert!(matches!(err, HiveError::UnknownAgent(_)), "{err:?}");
    hive.spawn(&id("alice")).await.unwrap();
    for kind in [ApprovalKind::InitConfig, ApprovalKind::Spawn] {
        let err = hive
            .request_approval(ask(kind, "alice", ""))
            .await
            .unwrap_err();
        assert!(matches!(err, HiveError::AlreadyManaged(_)), "{err:?}");
    }
    let err = hive
        .messaging()
        .wake(&id("alice"), String::new(), "hi".into(), false)
        .await
        .unwrap_err();
    assert!(matches!(err, HiveError::BadArgument(_)), "{err:?}");
    let err = hive
        .report_session(&id("alice"), None, Some("a\nb".into()))
        .await
        .unwrap_err();
    assert!(matches!(err, HiveError::BadArgument(_)), "{err:?}");
    assert!(inbox(&hive, "alice").await.is_empty());
}

/// Used to be: `restart-all` started every stopped agent, the manager too.
#[tokio::test]
async fn restart_all_restarts_what_runs_and_leaves_a_stopped_agent_stopped() {
    use crate::containers::{ContainerDriver, UnitState};
    let (hive, driver, _dir) = hive();
    for name in ["alice", "bob"] {
        hive.spawn(&id(name)).await.unwrap();
    }
    hive.stop(&LifecycleScope::agents(vec![id("bob")]), false, None)
        .await
        .unwrap();
    let mut changes = driver.changes();
    hive.restart_all().await.unwrap();
    let mut went_down = Vec::new();
    while let Ok(change) = changes.try_recv() {
        let was_up = change.old.as_ref().is_some_and(UnitState::is_running);
        if was_up && !change.new.as_ref().is_some_and(UnitState::is_running) {
            went_down.push(change.agent.to_string());
        }
    }
    assert_eq!(went_down, ["alice"]);
    let running = |n: &str| driver.view().get(&id(n)).is_some_and(UnitState::is_running);
    assert!(running("alice"));
    assert!(!running("bob"));
    assert!(!running("ruth"), "the manager was never started here");
}
