//! The roster: how one agent's row is put together, and what counts as a
//! crash. Pure functions over the registry record and the driver's view.

use super::hooks::Attention;
use super::unit::{ActiveState, UnitState};
use crate::clock::rfc3339;
use crate::wire::host::{AgentStatusRow, HiveUrls};
use crate::wire::ident::Ident;
use crate::wire::roster::Transition;

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
    /// The operator paused its turns: `recv` pops nothing for it.
    pub paused: bool,
}

/// Everything a row is built from.
#[derive(Debug, Clone)]
pub struct RowInputs<'a> {
    pub record: &'a AgentRecord,
    /// The container unit's state; `None` when systemd does not know it.
    pub unit: Option<&'a UnitState>,
    pub pending_reminders: u64,
    pub domain: Option<&'a str>,
    /// The crash watcher saw the unit crash, and it has not run since.
    pub crashed: bool,
    /// A reached spend cap holds the agent: why, in words.
    pub budget: Option<String>,
    /// What the agent's turns cost since 00:00 UTC, in micro-dollars.
    pub spent_today: Option<u64>,
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
        paused: i.record.paused,
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
        budget: i.budget,
        spent_today_micro_usd: i.spent_today,
        transition: i.unit.and_then(|u| match u.active {
            ActiveState::Activating => Some(Transition::Starting),
            ActiveState::Deactivating => Some(Transition::Stopping),
            _ => None,
        }),
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
#[path = "roster_tests.rs"]
mod tests;
