//! Wire types: serde only, no IO.
//!
//! - [`ident`]: the one validated name type.
//! - [`host`]: host.sock v1, the operator's socket; [`approval`] and
//!   [`roster`] hold its row types, [`scope`] its lifecycle scope
//!   (re-exported by `host`).
//! - [`agent`]: the agent and manager sockets' `Request`/`Response`.
//! - [`egress`]: an egress allow-list pattern, validated once.
//! - [`egress_audit`]: the egress service's verdict line and the egress
//!   audit's rows.
//! - [`model_log`]: the model gateway's meter row, the frames carrying it
//!   from the egress service to the daemon, the model log's rows.
//! - [`claude_env`]: the agent's own variables for Claude, in one container
//!   variable from the daemon to the harness.
//! - [`agenda`]: loose ends, reminders, schedules, capabilities, tool groups.
//! - [`journal`]: a journal entry and its short text rendering (pure).
//! - [`events`]: `HelperEvent`s pushed to the manager.
//! - [`notify`]: the event the operator's `notify_command` reads.
//! - [`turns`]: the turn journal's report, rows and usage sums.
//! - [`inspect`]: one agent's facts in one answer (`inspect_agent`).
//! - [`version`]: which daemon answers and how it runs (`version`).
//! - [`images`]: the agent images the hive has and who uses them (`images`).
//! - [`live`]: the turn in progress: the harness's progress events, the
//!   daemon's current turn and the changes streamed to the operator.
//! - [`spend`]: spend caps (the operator's budgets): the amount, its
//!   window, its scope.
//! - [`swarm`]: what hives say to each other over the swarm's bus, and the
//!   swarm roster row.

pub mod agenda;
pub mod agent;
pub mod approval;
pub mod claude_env;
pub mod codes;
pub mod egress;
pub mod egress_audit;
pub mod events;
pub mod host;
mod host_answers;
pub mod ident;
pub mod images;
pub mod inspect;
pub mod journal;
pub mod live;
pub mod model_log;
pub mod notify;
pub mod roster;
pub mod scope;
pub mod signal;
pub mod spend;
pub mod swarm;
pub mod turns;
pub mod version;

#[cfg(test)]
mod host_tests;

/// `skip_serializing_if` for optional flags: omitted when false.
fn is_false(b: &bool) -> bool {
    !*b
}
