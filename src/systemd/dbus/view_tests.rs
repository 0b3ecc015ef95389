use super::*;

use crate::testing::id;

fn active(a: ActiveState, sub: &str) -> Update {
    Update {
        active: Some(a),
        sub: Some(sub.into()),
        result: None,
        since: None,
    }
}

#[test]
fn a_signal_changes_only_the_fields_it_carries() {
    let mut v = View::default();
    v.track(&id("a"));
    let c = v
        .update(&id("a"), active(ActiveState::Failed, "failed"))
        .unwrap();
    assert_eq!(c.old, Some(UnitState::inactive()));
    let c = v
        .update(
            &id("a"),
            Update {
                result: Some("signal".into()),
                ..Update::default()
            },
        )
        .unwrap();
    let s = c.new.unwrap();
    assert_eq!(
        (s.active, s.sub.as_str(), s.result.as_str()),
        (ActiveState::Failed, "failed", "signal")
    );
}

#[test]
fn a_repeated_signal_is_not_a_change() {
    let mut v = View::default();
    v.unit_new(&id("a"));
    assert!(
        v.update(&id("a"), active(ActiveState::Active, "running"))
            .is_some()
    );
    assert!(
        v.update(&id("a"), active(ActiveState::Active, "running"))
            .is_none()
    );
}

#[test]
fn an_unloaded_unit_of_a_known_agent_stays_as_inactive_and_others_go() {
    let mut v = View::default();
    v.track(&id("known"));
    v.update(&id("known"), active(ActiveState::Active, "running"));
    v.unit_new(&id("stray"));
    v.update(&id("stray"), active(ActiveState::Active, "running"));
    let c = v.unit_removed(&id("known")).unwrap();
    assert_eq!(c.new, Some(UnitState::inactive()));
    let c = v.unit_removed(&id("stray")).unwrap();
    assert_eq!(c.new, None);
    assert_eq!(v.snapshot().len(), 1);
}

#[test]
fn a_resync_does_not_overwrite_a_newer_signal() {
    let mut v = View::default();
    v.track(&id("a"));
    v.begin_resync();
    v.update(&id("a"), active(ActiveState::Failed, "failed"));
    let listed = HashMap::from([
        (id("a"), UnitState::running()),
        (id("b"), UnitState::running()),
    ]);
    let changes = v.finish_resync(listed);
    assert_eq!(changes.len(), 1, "{changes:?}");
    assert!(v.get(&id("a")).unwrap().is_failed());
    assert!(v.get(&id("b")).unwrap().is_running());
}

#[test]
fn a_resync_shows_known_unlisted_agents_as_inactive_and_drops_stray_ones() {
    let mut v = View::default();
    v.track(&id("known"));
    v.update(&id("known"), active(ActiveState::Active, "running"));
    v.unit_new(&id("stray"));
    v.update(&id("stray"), active(ActiveState::Active, "running"));
    v.begin_resync();
    let changes = v.finish_resync(HashMap::new());
    assert_eq!(changes.len(), 2);
    assert_eq!(
        v.snapshot(),
        HashMap::from([(id("known"), UnitState::inactive())])
    );
}

#[test]
fn a_signal_for_a_unit_outside_the_view_is_ignored() {
    let mut v = View::default();
    v.track(&id("gone"));
    v.forget(&id("gone"));
    assert_eq!(
        v.update(&id("gone"), active(ActiveState::Inactive, "dead")),
        None
    );
    assert!(v.snapshot().is_empty());
}

#[test]
fn a_state_read_after_unit_new_yields_to_a_newer_signal() {
    let mut v = View::default();
    v.unit_new(&id("a"));
    let seq = v.seq(&id("a"));
    let failed = UnitState {
        active: ActiveState::Failed,
        sub: "failed".into(),
        result: "exit-code".into(),
        since: None,
    };
    assert!(v.fetched(&id("a"), seq, failed.clone()).is_some());
    assert!(v.get(&id("a")).unwrap().is_failed());
    let seq = v.seq(&id("a"));
    v.update(&id("a"), active(ActiveState::Active, "running"));
    assert_eq!(v.fetched(&id("a"), seq, failed), None);
    assert!(v.get(&id("a")).unwrap().is_running());
}
