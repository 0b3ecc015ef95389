//! The roster: how one agent's row is put together, and what counts as a
//! crash. Pure functions over the registry record and the driver's view.

use super::hooks::Attention;
use super::unit::UnitState;
use crate::clock::rfc3339;
use crate::wire::host::{AgentStatusRow, HiveUrls};
use crate::wire::ident::Ident;

/// One managed agent, as the registry (`store::agents`) persists it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentRecord {
    pub name: Ident,
    pub parent: Option<Ident>,
    pub created_at: i64,
    pub status_text: Option<String>,
    pub status_set_at: Option<i64>,
    pub deployed_sha: Option<String>,
    pub needs_update: bool,
    pub needs_login: bool,
    pub active_model: Option<String>,
    /// The session state its hooks reported last, if any.
    pub session: Option<Attention>,
}

/// Everything a row is built from.
#[derive(Debug, Clone, Copy)]
pub struct RowInputs<'a> {
    pub record: &'a AgentRecord,
    /// The container unit's state; `None` when systemd does not know it.
    pub unit: Option<&'a UnitState>,
    pub paused: bool,
    pub pending_reminders: u64,
    pub domain: Option<&'a str>,
    /// The crash watcher saw the unit crash, and it has not run since.
    pub crashed: bool,
}

/// One row of `agent_status`.
pub fn row(i: RowInputs<'_>) -> AgentStatusRow {
    let running = i.unit.is_some_and(UnitState::is_running);
    // The status text describes a live agent: hidden while it is not running,
    // and the two fields travel together.
    let status = match (&i.record.status_text, i.record.status_set_at) {
        (Some(text), Some(at)) if running => Some((text.clone(), rfc3339(at))),
        _ => None,
    };
    let (status_text, status_set_at) = status.unzip();
    AgentStatusRow {
        name: i.record.name.clone(),
        running,
        failed: i.unit.is_some_and(UnitState::is_failed),
        failure: i.unit.filter(|u| u.is_failed()).map(|u| u.result.clone()),
        needs_update: i.record.needs_update,
        needs_login: i.record.needs_login,
        deployed_sha: i
            .record
            .deployed_sha
            .as_ref()
            .map(|s| s.chars().take(12).collect()),
        pending_reminders: i.pending_reminders,
        paused: i.paused,
        parent: i.record.parent.clone(),
        active_model: i.record.active_model.clone(),
        status_text,
        status_set_at,
        url: i
            .domain
            .map(|d| format!("https://{d}/agent/{}/", i.record.name)),
        session_state: i.record.session.as_ref().map(|s| s.state),
        session_message: i.record.session.as_ref().and_then(|s| s.message.clone()),
        session_since: i.record.session.as_ref().map(|s| rfc3339(s.since)),
        crashed: i.crashed && !running,
        running_since: i
            .unit
            .filter(|u| u.is_running())
            .and_then(|u| u.since)
            .map(rfc3339),
    }
}

/// A unit that leaves `active` while no operator stop is in progress is a
/// crash.
pub fn is_crash(old: Option<&UnitState>, new: Option<&UnitState>, operator_stopping: bool) -> bool {
    let was_running = old.is_some_and(UnitState::is_running);
    let still_running = new.is_some_and(UnitState::is_running);
    was_running && !still_running && !operator_stopping
}

/// The `urls` answer.
pub fn urls(domain: Option<&str>, forge: Option<&str>, matrix: Option<&str>) -> HiveUrls {
    HiveUrls {
        domain: domain.map(str::to_owned),
        home: domain.map(|d| format!("https://{d}/")),
        forge: forge.map(str::to_owned),
        matrix: matrix.map(str::to_owned),
    }
}

#[cfg(test)]
mod tests {
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
        }
    }

    #[test]
    fn a_running_agent_shows_its_status_text_url_and_short_sha() {
        let rec = record();
        let unit = UnitState::running();
        let r = row(RowInputs {
            record: &rec,
            unit: Some(&unit),
            paused: false,
            pending_reminders: 2,
            domain: Some("hive.example"),
            crashed: false,
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
        let r = row(RowInputs {
            record: &rec,
            unit: None,
            paused: false,
            pending_reminders: 0,
            domain: None,
            crashed: false,
        });
        let line = serde_json::to_string(&r).unwrap();
        assert!(
            line.ends_with(r#""parent":"ruth","session_state":"needs_permission","session_message":"Claude needs your permission to use Edit","session_since":"2026-11-30T12:00:00Z"}"#),
            "{line}"
        );
    }

    #[test]
    fn a_stopped_agent_hides_its_status_text_and_time_together() {
        let rec = record();
        let unit = UnitState::inactive();
        let r = row(RowInputs {
            record: &rec,
            unit: Some(&unit),
            paused: true,
            pending_reminders: 0,
            domain: None,
            crashed: false,
        });
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
            record: &rec,
            unit,
            paused: false,
            pending_reminders: 0,
            domain: None,
            crashed,
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
        let inputs = |unit| RowInputs {
            record: &rec,
            unit,
            paused: false,
            pending_reminders: 0,
            domain: None,
            crashed: false,
        };
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
}
