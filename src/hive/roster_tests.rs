use super::*;
use crate::hive::unit::ActiveState;

fn record() -> AgentRecord {
    AgentRecord {
        name: Ident::new("alice").unwrap(),
        parent: Some(Ident::new("ruth").unwrap()),
        created_at: 0,
        status_text: Some("triaging".into()),
        status_set_at: Some(1_796_040_000),
        deployed_sha: Some("0123456789abcdef".into()),
        needs_update: false,
        needs_login: false,
        active_model: None,
        session: None,
        paused: false,
    }
}

/// The inputs of a row with nothing but its record and unit.
fn bare<'a>(record: &'a AgentRecord, unit: Option<&'a UnitState>) -> RowInputs<'a> {
    RowInputs {
        record,
        unit,
        pending_reminders: 0,
        domain: None,
        crashed: false,
        budget: None,
        spent_today: None,
    }
}

#[test]
fn a_running_agent_shows_its_status_text_url_and_short_sha() {
    let rec = record();
    let unit = UnitState::running();
    let r = row(RowInputs {
        record: &rec,
        unit: Some(&unit),
        pending_reminders: 2,
        domain: Some("hive.example"),
        crashed: false,
        budget: None,
        spent_today: None,
    });
    let line = serde_json::to_string(&r).unwrap();
    assert_eq!(
        line,
        r#"{"name":"alice","running":true,"failed":false,"needs_update":false,"needs_login":false,"deployed_sha":"0123456789ab","pending_reminders":2,"paused":false,"parent":"ruth","status_text":"triaging","status_set_at":"2026-11-30T12:00:00Z","url":"https://hive.example/agent/alice/"}"#
    );
}

#[test]
fn a_session_state_appends_its_three_keys_after_the_spec_ones() {
    let mut rec = record();
    rec.session = Some(Attention {
        state: crate::wire::host::SessionState::NeedsPermission,
        message: Some("Claude needs your permission to use Edit".into()),
        since: 1_796_040_000,
    });
    let r = row(bare(&rec, None));
    let line = serde_json::to_string(&r).unwrap();
    assert!(
            line.ends_with(r#""parent":"ruth","session_state":"needs_permission","session_message":"Claude needs your permission to use Edit","session_since":"2026-11-30T12:00:00Z"}"#),
            "{line}"
        );
}

#[test]
fn a_stopped_agent_hides_its_status_text_and_time_together() {
    let rec = AgentRecord {
        paused: true,
        ..record()
    };
    let unit = UnitState::inactive();
    let r = row(bare(&rec, Some(&unit)));
    assert_eq!((r.status_text, r.status_set_at, r.url), (None, None, None));
    assert!(r.paused && !r.running && !r.failed);
}

#[test]
fn a_failed_unit_carries_its_result_and_only_a_failed_one() {
    let rec = record();
    let failed = UnitState {
        active: ActiveState::Failed,
        sub: "failed".into(),
        result: "core-dump".into(),
        since: None,
    };
    let inputs = |unit, crashed| RowInputs {
        crashed,
        ..bare(&rec, unit)
    };
    let r = row(inputs(Some(&failed), false));
    assert_eq!((r.failed, r.failure.as_deref()), (true, Some("core-dump")));
    let line = serde_json::to_string(&r).unwrap();
    assert!(line.ends_with(r#","failure":"core-dump"}"#), "{line}");
    let stopped = UnitState::inactive();
    assert_eq!(row(inputs(Some(&stopped), false)).failure, None);
    assert_eq!(row(inputs(None, false)).failure, None);
    // A crash is its own key after the others; a running unit is not
    // crashed whatever the watcher remembers.
    let line = serde_json::to_string(&row(inputs(Some(&failed), true))).unwrap();
    assert!(
        line.ends_with(r#","failure":"core-dump","crashed":true}"#),
        "{line}"
    );
    let up = UnitState::running();
    assert!(!row(inputs(Some(&up), true)).crashed);
}

#[test]
fn a_running_unit_says_since_when_and_a_stopped_one_does_not() {
    let rec = record();
    let inputs = |unit| bare(&rec, unit);
    let up = UnitState {
        since: Some(1_796_040_000),
        ..UnitState::running()
    };
    let line = serde_json::to_string(&row(inputs(Some(&up)))).unwrap();
    assert!(
        line.ends_with(r#","running_since":"2026-11-30T12:00:00Z"}"#),
        "{line}"
    );
    let down = UnitState {
        since: Some(1_796_040_000),
        ..UnitState::inactive()
    };
    assert_eq!(row(inputs(Some(&down))).running_since, None);
}

#[test]
fn leaving_active_without_an_operator_stop_is_a_crash() {
    let up = UnitState::running();
    let failed = UnitState {
        active: ActiveState::Failed,
        sub: "failed".into(),
        result: "signal".into(),
        since: None,
    };
    assert!(is_crash(Some(&up), Some(&failed), false));
    assert!(is_crash(Some(&up), Some(&UnitState::inactive()), false));
    assert!(!is_crash(Some(&up), Some(&failed), true));
    assert!(!is_crash(Some(&UnitState::inactive()), Some(&up), false));
    assert!(!is_crash(None, Some(&failed), false));
}

/// Used to be: a booting agent read `stopped` until its container was up.
#[test]
fn a_unit_between_two_states_is_starting_or_stopping_and_not_running() {
    let rec = record();
    let between = |active| UnitState {
        active,
        sub: "start-post".into(),
        result: "success".into(),
        since: None,
    };
    let transition = |active| {
        let unit = between(active);
        let r = row(bare(&rec, Some(&unit)));
        assert!(!r.running);
        (r.transition, serde_json::to_string(&r).unwrap())
    };
    let (starting, line) = transition(ActiveState::Activating);
    assert_eq!(starting, Some(Transition::Starting));
    assert!(line.ends_with(r#","transition":"starting"}"#), "{line}");
    assert_eq!(
        transition(ActiveState::Deactivating).0,
        Some(Transition::Stopping)
    );
    assert_eq!(transition(ActiveState::Inactive).0, None);
    assert!(!transition(ActiveState::Failed).1.contains("transition"));
}
