//! The real `SystemdDriver` against a private `dbus-daemon` serving a fake
//! systemd1/machine1 (tests/support/dbus_fake). Fast tier: no root, no
//! systemd; the real-systemd tier lives in tests/system/.
//!
//! Every test runs under `fake::rig::LIMIT`; waits are on signals and change events,
//! never on sleeps.

// The whole file is test code; clippy.toml's allow-unwrap-in-tests does not
// reach helpers that are not `#[test]` functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

#[path = "support/dbus_fake/mod.rs"]
mod fake;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use fake::bus::PrivateBus;
use fake::rig::{Rig, bounded, host, id, nspawn, settings_at, state, until};
use fake::systemd::{FakeSystemd, JobMode, State, Unit};
use hive_c0re::containers::{
    ActiveState, ContainerDriver, DriverError, Outcome, Profile, StopMode, UnitState,
};
use hive_c0re::systemd::dbus::SystemdDriver;
use hive_c0re::systemd::dbus::builder::RecordingBuilder;

#[tokio::test]
async fn a_start_is_done_when_its_job_is_removed_and_the_view_already_shows_it_running() {
    bounded(async {
        let rig = Rig::new(host(&["a"])).await;
        let driver = rig.driver(&["a"]).await;
        assert_eq!(driver.view().get(&id("a")), Some(&UnitState::inactive()));
        assert_eq!(driver.start(&id("a")).await, Ok(Outcome::Done));
        // systemd sends the unit's PropertiesChanged before JobRemoved, and
        // the driver applies them in order.
        assert_eq!(driver.view()[&id("a")], UnitState::running());
        assert_eq!(rig.fake.calls(), vec![format!("StartUnit {}", nspawn("a"))]);
    })
    .await;
}

#[tokio::test]
async fn jobs_that_complete_out_of_order_each_reach_their_own_caller() {
    bounded(async {
        let rig = Rig::new(host(&["a", "b"])).await;
        rig.fake.set_mode(JobMode::Manual);
        let driver = rig.driver(&["a", "b"]).await;
        let (a, b) = (id("a"), id("b"));
        let (ra, rb, ()) = tokio::join!(driver.start(&a), driver.start(&b), async {
            let jobs = rig.fake.wait_pending(2).await;
            let job_of = |n: &str| jobs.iter().find(|j| j.unit == nspawn(n)).unwrap().clone();
            rig.fake.finish(&job_of("b"), "failed").await;
            rig.fake.finish(&job_of("a"), "done").await;
        });
        assert_eq!(ra, Ok(Outcome::Done));
        assert_eq!(
            rb,
            Err(DriverError::JobFailed {
                verb: "start",
                unit: nspawn("b"),
                outcome: "failed".into()
            })
        );
        assert!(driver.view()[&id("a")].is_running());
        assert_eq!(
            driver.view()[&id("b")],
            state(ActiveState::Failed, "failed", "exit-code")
        );
    })
    .await;
}

#[tokio::test]
async fn a_job_removed_before_the_start_reply_is_not_missed() {
    bounded(async {
        let rig = Rig::new(host(&["a"])).await;
        rig.fake.set_mode(JobMode::BeforeReply);
        let driver = rig.driver(&["a"]).await;
        assert_eq!(driver.start(&id("a")).await, Ok(Outcome::Done));
        assert!(driver.view()[&id("a")].is_running());
    })
    .await;
}

#[tokio::test]
async fn a_timed_out_job_is_reported_in_words_a_user_understands() {
    bounded(async {
        let rig = Rig::new(host(&["a"])).await;
        rig.fake.set_mode(JobMode::Manual);
        let driver = rig.driver(&["a"]).await;
        let a = id("a");
        let (r, ()) = tokio::join!(driver.restart(&a), async {
            let job = rig.fake.wait_pending(1).await.remove(0);
            rig.fake.finish(&job, "timeout").await;
        });
        let err = r.unwrap_err();
        assert!(
            matches!(
                err,
                DriverError::JobFailed {
                    verb: "restart",
                    ..
                }
            ),
            "{err:?}"
        );
        let text = err.to_string();
        assert!(
            text.contains("restart of systemd-nspawn@h-a.service timed out"),
            "{text}"
        );
        assert!(
            text.contains("journalctl -u systemd-nspawn@h-a.service"),
            "{text}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_job_still_running_after_the_answer_budget_is_still_running() {
    bounded(async {
        let rig = Rig::new(host(&["a"])).await;
        rig.fake.set_mode(JobMode::Manual);
        let mut settings = rig.settings(&["a"]);
        settings.answer_budget = Duration::from_millis(300);
        let driver = SystemdDriver::connect(Profile::Nspawn, settings)
            .await
            .unwrap();
        let err = driver.start(&id("a")).await.unwrap_err();
        assert_eq!(
            err,
            DriverError::StillRunning {
                verb: "start",
                unit: nspawn("a")
            }
        );
        // The job goes on; when it ends, the view follows.
        let mut changes = driver.changes();
        let job = rig.fake.wait_pending(1).await.remove(0);
        rig.fake.finish(&job, "done").await;
        until(&driver, &mut changes, "a", |s| {
            s.is_some_and(UnitState::is_running)
        })
        .await;
    })
    .await;
}

#[tokio::test]
async fn a_unit_changed_by_properties_changed_updates_the_view_and_the_changes() {
    bounded(async {
        let mut st = host(&["a"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["a"]).await;
        assert!(driver.view()[&id("a")].is_running());
        let mut changes = driver.changes();
        // The container dies on its own: systemd sends the Unit interface's
        // change, then the Service interface's Result.
        rig.fake
            .set_unit(&nspawn("a"), "failed", "failed", "signal")
            .await;
        let first = changes.recv().await.unwrap();
        assert_eq!(first.agent, id("a"));
        assert_eq!(first.old, Some(UnitState::running()));
        assert_eq!(
            first.new,
            Some(state(ActiveState::Failed, "failed", "success"))
        );
        let second = changes.recv().await.unwrap();
        assert_eq!(
            second.new,
            Some(state(ActiveState::Failed, "failed", "signal"))
        );
        assert_eq!(
            driver.view()[&id("a")],
            state(ActiveState::Failed, "failed", "signal")
        );
    })
    .await;
}

#[tokio::test]
async fn a_daemon_reload_does_not_show_a_running_container_as_stopped() {
    bounded(async {
        let mut st = host(&["a", "b"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        st.units
            .insert(nspawn("b"), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["a", "b"]).await;
        let mut changes = driver.changes();
        // systemd frees and re-creates every unit: UnitRemoved for running
        // ones too, then UnitNew, between Reloading(true) and (false).
        rig.fake.daemon_reload().await;
        // Signals arrive in order: once b's crash is seen, the reload was too.
        rig.fake
            .set_unit(&nspawn("b"), "failed", "failed", "signal")
            .await;
        loop {
            let change = changes.recv().await.unwrap();
            if change.agent == id("a") {
                assert!(
                    change.new.as_ref().is_some_and(UnitState::is_running),
                    "a changed to {:?} during the reload",
                    change.new
                );
            } else if change.new.as_ref().is_some_and(UnitState::is_failed) {
                break;
            }
        }
        assert!(driver.view()[&id("a")].is_running());
    })
    .await;
}

#[tokio::test]
async fn the_driver_reconnects_resubscribes_and_resyncs_after_the_bus_restarts() {
    bounded(async {
        let mut st = host(&["a", "b"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        let mut rig = Rig::new(st).await;
        let driver = rig.driver(&["a", "b"]).await;
        let mut changes = driver.changes();
        assert!(driver.view()[&id("a")].is_running());

        rig.bus.restart().await;
        // While the bus was away, a crashed and b was started.
        let mut st = host(&["a", "b"]);
        let mut crashed = Unit::new(true, "failed", "failed");
        crashed.result = "core-dump".into();
        st.units.insert(nspawn("a"), crashed);
        st.units
            .insert(nspawn("b"), Unit::new(true, "active", "running"));
        rig.fake = FakeSystemd::serve(&rig.bus.address(), st).await;

        until(&driver, &mut changes, "b", |s| {
            s.is_some_and(UnitState::is_running)
        })
        .await;
        until(&driver, &mut changes, "a", |s| {
            s.is_some_and(UnitState::is_failed)
        })
        .await;
        assert_eq!(driver.view()[&id("a")].result, "core-dump");
        // And signals flow again on the new connection: it subscribed.
        rig.fake
            .set_unit(&nspawn("b"), "inactive", "dead", "success")
            .await;
        until(&driver, &mut changes, "b", |s| {
            s == Some(&UnitState::inactive())
        })
        .await;
        assert_eq!(
            driver.stop(&id("b"), StopMode::Hard).await,
            Ok(Outcome::AlreadyInState)
        );
    })
    .await;
}

#[tokio::test]
async fn starting_a_running_unit_and_stopping_a_stopped_one_are_already_in_that_state() {
    bounded(async {
        let mut st = host(&["up", "down"]);
        st.units
            .insert(nspawn("up"), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["up", "down"]).await;
        assert_eq!(driver.start(&id("up")).await, Ok(Outcome::AlreadyInState));
        let graceful = StopMode::Graceful {
            deadline: Duration::from_secs(1),
        };
        assert_eq!(
            driver.stop(&id("down"), graceful).await,
            Ok(Outcome::AlreadyInState)
        );
        assert_eq!(
            driver.stop(&id("down"), StopMode::Hard).await,
            Ok(Outcome::AlreadyInState)
        );
        assert!(rig.fake.calls().is_empty(), "{:?}", rig.fake.calls());
    })
    .await;
}

#[tokio::test]
async fn an_agent_that_was_never_created_is_no_such_unit_for_every_verb() {
    bounded(async {
        let rig = Rig::new(host(&[])).await;
        let driver = rig.driver(&[]).await;
        let ghost = id("ghost");
        let want = Err(DriverError::NoSuchUnit {
            unit: nspawn("ghost"),
        });
        assert_eq!(driver.start(&ghost).await, want);
        assert_eq!(driver.restart(&ghost).await, want);
        assert_eq!(driver.stop(&ghost, StopMode::Hard).await, want);
        assert_eq!(driver.rebuild(&ghost, &rig.spec("ghost")).await, want);
        assert_eq!(
            driver.destroy(&ghost, true).await.map(|()| Outcome::Done),
            want
        );
    })
    .await;
}

#[tokio::test]
async fn a_unit_systemd_does_not_know_is_no_such_unit() {
    bounded(async {
        // The image exists but the unit does not (e.g. the template unit is
        // missing): systemd's own NoSuchUnit error.
        let mut st = host(&[]);
        st.images.insert("h-a".into());
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["a"]).await;
        assert_eq!(
            driver.start(&id("a")).await,
            Err(DriverError::NoSuchUnit { unit: nspawn("a") })
        );
    })
    .await;
}

#[tokio::test]
async fn a_graceful_stop_that_outlives_its_deadline_ends_with_sigkill() {
    bounded(async {
        let mut st = host(&["a"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        st.mode = JobMode::Manual; // the container ignores SIGTERM
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["a"]).await;
        let deadline = Duration::from_millis(300);
        let r = driver.stop(&id("a"), StopMode::Graceful { deadline }).await;
        assert_eq!(r, Ok(Outcome::Done));
        assert_eq!(
            rig.fake.calls(),
            vec![
                format!("StopUnit {}", nspawn("a")),
                format!("KillUnit {} all 9", nspawn("a"))
            ]
        );
        assert_eq!(
            driver.view()[&id("a")],
            state(ActiveState::Failed, "failed", "signal")
        );
    })
    .await;
}

#[tokio::test]
async fn a_graceful_stop_within_its_deadline_sends_no_kill() {
    bounded(async {
        let mut st = host(&["a"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["a"]).await;
        let deadline = Duration::from_secs(5);
        let r = driver.stop(&id("a"), StopMode::Graceful { deadline }).await;
        assert_eq!(r, Ok(Outcome::Done));
        assert_eq!(rig.fake.calls(), vec![format!("StopUnit {}", nspawn("a"))]);
        assert_eq!(driver.view()[&id("a")], UnitState::inactive());
    })
    .await;
}

#[tokio::test]
async fn a_hard_stop_sends_sigkill_and_returns_once_the_unit_is_down() {
    bounded(async {
        let mut st = host(&["a"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["a"]).await;
        assert_eq!(
            driver.stop(&id("a"), StopMode::Hard).await,
            Ok(Outcome::Done)
        );
        assert_eq!(
            rig.fake.calls(),
            vec![format!("KillUnit {} all 9", nspawn("a"))]
        );
        assert!(driver.view()[&id("a")].is_failed());
        // A graceful stop of the failed unit clears the failed state.
        let graceful = StopMode::Graceful {
            deadline: Duration::from_secs(1),
        };
        assert_eq!(driver.stop(&id("a"), graceful).await, Ok(Outcome::Done));
        let mut changes = driver.changes();
        until(&driver, &mut changes, "a", |s| {
            s == Some(&UnitState::inactive())
        })
        .await;
    })
    .await;
}

#[tokio::test]
async fn a_unit_announced_only_by_unit_new_is_read_from_systemd() {
    bounded(async {
        let rig = Rig::new(host(&["x"])).await;
        let driver = rig.driver(&[]).await;
        assert!(driver.view().is_empty());
        let mut changes = driver.changes();
        // Loaded and failed within one systemd event loop turn: no
        // PropertiesChanged comes, only UnitNew.
        rig.fake
            .load_quietly(&nspawn("x"), "failed", "failed", "exit-code")
            .await;
        until(&driver, &mut changes, "x", |s| {
            s.is_some_and(UnitState::is_failed)
        })
        .await;
        assert_eq!(
            driver.view()[&id("x")],
            state(ActiveState::Failed, "failed", "exit-code")
        );
    })
    .await;
}

#[tokio::test]
async fn create_clones_the_template_writes_the_nspawn_file_and_sets_limits() {
    bounded(async {
        let mut st = host(&[]);
        st.units.insert(nspawn("a"), Unit::new(false, "inactive", "dead"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&[]).await;
        let mut changes = driver.changes();
        let spec = rig.spec("a");
        driver.create(&id("a"), &spec).await.unwrap();

        assert!(rig.fake.has_image("h-a"));
        assert_eq!(
            rig.fake.calls(),
            vec![
                "CloneImage hive-template h-a false".to_string(),
                format!(
                    "SetUnitProperties {} runtime=false CPUQuotaPerSecUSec=2000000 MemoryMax=4294967296",
                    nspawn("a")
                ),
            ]
        );
        let file = std::fs::read_to_string(rig.dir.path().join("nspawn/h-a.nspawn")).unwrap();
        let runtime = format!("Bind={}:/run/hive\n", spec.runtime_dir.display());
        assert!(file.contains(&runtime), "{file}");
        assert!(file.contains("Environment=\"HIVE_CAPABILITIES=spawn\"\n"), "{file}");
        assert!(spec.runtime_dir.is_dir() && spec.state_dir.is_dir());
        let change = changes.recv().await.unwrap();
        assert_eq!((change.agent, change.old, change.new), (id("a"), None, Some(UnitState::inactive())));

        // A second create keeps the existing image.
        driver.create(&id("a"), &spec).await.unwrap();
        assert_eq!(rig.fake.calls().iter().filter(|c| c.starts_with("CloneImage")).count(), 1);
        assert_eq!(driver.start(&id("a")).await, Ok(Outcome::Done));
    })
    .await;
}

#[tokio::test]
async fn a_missing_template_image_is_a_setup_error_naming_it() {
    bounded(async {
        let mut st = host(&[]);
        st.images.clear();
        let rig = Rig::new(st).await;
        let driver = rig.driver(&[]).await;
        let err = driver.create(&id("a"), &rig.spec("a")).await.unwrap_err();
        assert!(
            matches!(&err, DriverError::Setup(m) if m.contains("\"hive-template\"")),
            "{err}"
        );
        assert!(!rig.dir.path().join("nspawn/h-a.nspawn").exists());
    })
    .await;
}

#[tokio::test]
async fn a_spec_that_cannot_be_written_is_refused_before_anything_is_cloned() {
    bounded(async {
        let rig = Rig::new(host(&[])).await;
        let driver = rig.driver(&[]).await;
        let mut spec = rig.spec("a");
        spec.memory_max = Some("lots".into());
        let err = driver.create(&id("a"), &spec).await.unwrap_err();
        assert!(err.to_string().contains("\"lots\""), "{err}");
        let mut spec = rig.spec("a");
        spec.env = vec![("X".into(), "line\nbreak".into())];
        assert!(matches!(
            driver.create(&id("a"), &spec).await,
            Err(DriverError::Setup(_))
        ));
        assert!(rig.fake.calls().is_empty(), "{:?}", rig.fake.calls());
    })
    .await;
}

#[tokio::test]
async fn destroy_stops_the_unit_removes_its_file_and_with_purge_its_image() {
    bounded(async {
        let mut st = host(&["keep", "purge"]);
        st.units
            .insert(nspawn("keep"), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["keep", "purge"]).await;
        for n in ["keep", "purge"] {
            driver.rebuild(&id(n), &rig.spec(n)).await.unwrap();
        }
        let keep_file = rig.dir.path().join("nspawn/h-keep.nspawn");
        assert!(keep_file.exists());

        driver.destroy(&id("keep"), false).await.unwrap();
        assert!(!keep_file.exists());
        assert!(rig.fake.has_image("h-keep"));
        assert_eq!(rig.fake.unit(&nspawn("keep")).active, "inactive");
        assert!(!driver.view().contains_key(&id("keep")));

        driver.destroy(&id("purge"), true).await.unwrap();
        assert!(!rig.fake.has_image("h-purge"));
        assert!(!rig.dir.path().join("nspawn/h-purge.nspawn").exists());
        let calls: BTreeSet<String> = rig.fake.calls().into_iter().collect();
        assert!(
            calls.contains(&format!("RevertUnitFiles {}", nspawn("purge"))),
            "{calls:?}"
        );
        assert!(calls.contains("RemoveImage h-purge"), "{calls:?}");
        assert!(!calls.contains("RemoveImage h-keep"), "{calls:?}");
        assert!(driver.view().is_empty());
    })
    .await;
}

#[tokio::test]
async fn the_view_holds_the_profiles_units_and_known_agents_only() {
    bounded(async {
        let mut st = host(&["a", "known"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        st.units.insert(
            "systemd-nspawn@other.service".into(),
            Unit::new(true, "active", "running"),
        );
        st.units.insert(
            "container@h-b.service".into(),
            Unit::new(true, "active", "running"),
        );
        st.units
            .insert("sshd.service".into(), Unit::new(true, "active", "running"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["known"]).await;
        let view = driver.view();
        assert_eq!(view.len(), 2, "{view:?}");
        assert!(view[&id("a")].is_running());
        assert_eq!(view[&id("known")], UnitState::inactive());

        // systemd unloads a stopped known unit: it stays, as inactive; a
        // stray unit that is unloaded leaves the view.
        let mut changes = driver.changes();
        rig.fake
            .set_unit(&nspawn("a"), "inactive", "dead", "success")
            .await;
        rig.fake.unload(&nspawn("a")).await;
        until(&driver, &mut changes, "a", |s| s.is_none()).await;
        assert_eq!(driver.view()[&id("known")], UnitState::inactive());
    })
    .await;
}

#[tokio::test]
async fn a_nixos_container_is_built_through_the_builder_and_runs_as_container_unit() {
    bounded(async {
        let mut st = State::default();
        st.units.insert(
            "container@h-a.service".into(),
            Unit::new(false, "inactive", "dead"),
        );
        let rig = Rig::new(st).await;
        let builder = Arc::new(RecordingBuilder::new("/nix/store"));
        let mut settings = rig.settings(&[]);
        settings.builder = builder.clone();
        let driver = SystemdDriver::connect(Profile::Nixos, settings)
            .await
            .unwrap();

        // Not created yet: no config file, no unit to start.
        assert!(matches!(
            driver.start(&id("a")).await,
            Err(DriverError::NoSuchUnit { .. })
        ));
        driver.create(&id("a"), &rig.spec("a")).await.unwrap();
        assert_eq!(builder.calls(), vec![id("a")]);
        let conf = std::fs::read_to_string(rig.dir.path().join("nixos/h-a.conf")).unwrap();
        assert!(
            conf.contains("SYSTEM_PATH=/nix/store/h-a-system\n"),
            "{conf}"
        );
        assert_eq!(driver.start(&id("a")).await, Ok(Outcome::Done));
        assert!(
            rig.fake
                .calls()
                .contains(&"StartUnit container@h-a.service".to_string())
        );
        assert!(driver.view()[&id("a")].is_running());
    })
    .await;
}

#[tokio::test]
async fn no_bus_at_the_address_is_unavailable() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let address = format!("unix:path={}", dir.path().join("nobus").display());
        let err = SystemdDriver::connect(Profile::Nspawn, settings_at(dir.path(), address))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, DriverError::Unavailable(m) if m.contains("nobus")),
            "{err}"
        );
    })
    .await;
}

#[tokio::test]
async fn a_bus_without_systemd_on_it_is_unavailable() {
    bounded(async {
        let dir = tempfile::tempdir().unwrap();
        let bus = PrivateBus::start(dir.path()).await;
        let err = SystemdDriver::connect(Profile::Nspawn, settings_at(dir.path(), bus.address()))
            .await
            .unwrap_err();
        assert!(
            matches!(&err, DriverError::Unavailable(m) if m.contains("systemd is not on")),
            "{err}"
        );
    })
    .await;
}
