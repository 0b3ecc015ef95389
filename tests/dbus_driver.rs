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
/// Creating, destroying and listing containers (images, settings files,
/// the nixos profile) and connecting to a bus without systemd.
#[path = "support/dbus_driver_images.rs"]
mod images;

use std::collections::BTreeSet;
use std::sync::Arc;
use std::time::Duration;

use fake::bus::PrivateBus;
use fake::rig::{Rig, bounded, host, id, nspawn, settings_at, state, until, up};
use fake::systemd::{FakeSystemd, JobMode, State, Unit};
use hive_c0re::containers::{
    ActiveState, ContainerDriver, DriverError, Outcome, Profile, StopMode, UnitState,
};
use hive_c0re::systemd::dbus::SystemdDriver;
use hive_c0re::systemd::dbus::builder::RecordingBuilder;
use hive_c0re::wire::host::Signal;

#[tokio::test]
async fn a_start_is_done_when_its_job_is_removed_and_the_view_already_shows_it_running() {
    bounded(async {
        let rig = Rig::new(host(&["a"])).await;
        let driver = rig.driver(&["a"]).await;
        assert_eq!(driver.view().get(&id("a")), Some(&UnitState::inactive()));
        assert_eq!(driver.start(&id("a")).await, Ok(Outcome::Done));
        // systemd sends the unit's PropertiesChanged before JobRemoved, and
        // the driver applies them in order.
        // ActiveEnterTimestamp comes with ActiveState: the roster's uptime.
        assert_eq!(driver.view()[&id("a")], up());
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
async fn a_job_that_outlives_the_wait_limit_is_pending_not_an_error_and_the_view_follows_it() {
    bounded(async {
        let rig = Rig::new(host(&["a"])).await;
        rig.fake.set_mode(JobMode::Manual);
        let mut settings = rig.settings(&["a"]);
        settings.job_wait_limit = Duration::from_millis(300);
        let driver = SystemdDriver::connect(Profile::Nspawn, settings)
            .await
            .unwrap();
        // Was: `DriverError::StillRunning` after the driver's own 4 s
        // budget, which an approved spawn recorded as a failure.
        assert_eq!(driver.start(&id("a")).await, Ok(Outcome::Pending));
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
        // Read at resync (Get ActiveEnterTimestamp of a listed active unit).
        assert_eq!(first.old, Some(up()));
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
async fn a_signal_is_one_kill_machine_of_the_leader_and_a_stopped_unit_gets_none() {
    bounded(async {
        let mut st = host(&["a", "b", "c"]);
        st.units
            .insert(nspawn("a"), Unit::new(true, "active", "running"));
        st.units
            .insert(nspawn("b"), Unit::new(true, "inactive", "dead"));
        let rig = Rig::new(st).await;
        let driver = rig.driver(&["a", "b", "c"]).await;
        assert_eq!(
            driver.signal(&id("a"), Signal::Hup).await,
            Ok(Outcome::Done)
        );
        assert_eq!(
            driver.signal(&id("b"), Signal::Term).await,
            Ok(Outcome::AlreadyInState)
        );
        assert_eq!(
            rig.fake.calls(),
            vec!["KillMachine h-a leader 1".to_owned()]
        );
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
