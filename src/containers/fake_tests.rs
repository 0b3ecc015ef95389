use super::*;

use crate::testing::id;

fn spec() -> ContainerSpec {
    ContainerSpec {
        runtime_dir: "/run/x".into(),
        state_dir: "/var/x".into(),
        cpu_quota: None,
        memory_max: None,
        tasks_max: None,
        env: vec![],
        repos: None,
        system: None,
    }
}

#[tokio::test]
async fn a_container_that_was_never_created_has_no_unit() {
    let d = FakeDriver::default();
    let err = d.start(&id("ghost")).await.unwrap_err();
    assert_eq!(
        err,
        DriverError::NoSuchUnit {
            unit: "systemd-nspawn@h-ghost.service".into()
        }
    );
}

#[tokio::test]
async fn starting_twice_is_already_in_that_state_and_publishes_one_change() {
    let d = FakeDriver::default();
    let mut rx = d.changes();
    d.create(&id("a"), &spec()).await.unwrap();
    assert_eq!(d.start(&id("a")).await, Ok(Outcome::Done));
    assert_eq!(d.start(&id("a")).await, Ok(Outcome::AlreadyInState));
    assert!(rx.try_recv().unwrap().new.unwrap() == UnitState::inactive());
    assert!(rx.try_recv().unwrap().new.unwrap().is_running());
    assert!(rx.try_recv().is_err());
}

#[tokio::test]
async fn a_hard_stop_leaves_the_unit_failed_and_a_new_start_clears_it() {
    let d = FakeDriver::default();
    d.create(&id("a"), &spec()).await.unwrap();
    d.start(&id("a")).await.unwrap();
    d.stop(&id("a"), StopMode::Hard).await.unwrap();
    assert!(d.view()[&id("a")].is_failed());
    d.start(&id("a")).await.unwrap();
    assert!(d.view()[&id("a")].is_running());
}
