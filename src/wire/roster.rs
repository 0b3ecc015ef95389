//! The roster's rows as host.sock carries them (`agent_status`,
//! `subscribe_agent_status`, `swarm_status`): the spec's keys in the spec's
//! order, then the optional keys this build adds (the hooks' session state,
//! `crashed`, `running_since`), each omitted when absent so clients that
//! ignore unknown keys keep working. Re-exported by [`super::host`].

use serde::{Deserialize, Serialize};

use super::ident::Ident;

/// One roster row. Keys serialize in the spec's order.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentStatusRow {
    pub name: Ident,
    /// The container's unit is active.
    pub running: bool,
    /// The unit is in systemd's failed state (independent of `running`).
    pub failed: bool,
    pub needs_update: bool,
    pub needs_login: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployed_sha: Option<String>,
    pub pending_reminders: u64,
    pub paused: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub parent: Option<Ident>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub active_model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_text: Option<String>,
    /// RFC 3339 UTC; present exactly when `status_text` is.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status_set_at: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub url: Option<String>,
    /// Additive to v1: systemd's `Result` of the failed unit (`signal`,
    /// `exit-code`, `core-dump`, `timeout`, ...); present exactly when
    /// `failed` is true.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub failure: Option<String>,
    /// What the agent's Claude session is doing, from its lifecycle hooks;
    /// omitted until the first hook that sets one.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_state: Option<SessionState>,
    /// The notification's text (e.g. the permission asked for) or why a
    /// turn failed; only with `session_state`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_message: Option<String>,
    /// RFC 3339 UTC: when `session_state` was entered; exactly with it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_since: Option<String>,
    /// Additive to v1: the unit left running without an operator's stop
    /// or signal and has not run since (a crash the daemon saw; one while
    /// it was down is not known). Omitted when false.
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub crashed: bool,
    /// Additive to v1: RFC 3339 UTC, when the running unit became active
    /// (systemd's `ActiveEnterTimestamp`); omitted when not running or not
    /// known.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub running_since: Option<String>,
    /// Additive to v1: a reached spend cap (`hivectl budget`) holds the
    /// agent — no new turn starts, its messages wait — and how far
    /// (`$20.00 of $20.00 today`, `... for ruth and under` when the cap
    /// is an ancestor's or the hive's). Omitted when none holds it.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budget: Option<String>,
    /// Additive to v1: what the agent spent since 00:00 UTC, in
    /// micro-dollars: the list cost of its model requests the gateway
    /// metered (issue 46, step 2; before it, its turns' reported cost);
    /// omitted when it made none today.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub spent_today_micro_usd: Option<u64>,
    /// Additive to v1: the unit is between two states — `starting` (its
    /// container boots: systemd's `activating`) or `stopping`
    /// (`deactivating`); `running` is false meanwhile. Omitted when settled.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub transition: Option<Transition>,
}

/// A unit between two states (the roster's `transition`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Transition {
    Starting,
    Stopping,
}

impl Transition {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Starting => "starting",
            Self::Stopping => "stopping",
        }
    }
}

impl AgentStatusRow {
    /// The agent waits on a person: its session (a permission, a
    /// question, idleness) or a reached budget (`hivectl status
    /// --needs-me`, the dashboard's highlight).
    pub fn needs_person(&self) -> bool {
        self.budget.is_some() || self.session_state.is_some_and(SessionState::needs_person)
    }
}

/// An agent's Claude session as its hooks report it (the roster's
/// `session_state`).
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SessionState {
    /// A session started or a prompt was submitted: a turn is running.
    Working,
    /// Blocked on a person: a tool permission prompt.
    NeedsPermission,
    /// Blocked on a person: a question or input dialog.
    NeedsAnswer,
    /// Blocked on a person: Claude has waited idle for input.
    Idle,
    /// The turn finished (`Stop`); its result is there to look at.
    AwaitingReview,
    /// The turn ended in an API error, or the session ended mid-turn.
    TurnFailed,
    /// The session ended after its turn finished.
    Ended,
}

impl SessionState {
    /// Every state, in the order above.
    pub const ALL: [Self; 7] = [
        Self::Working,
        Self::NeedsPermission,
        Self::NeedsAnswer,
        Self::Idle,
        Self::AwaitingReview,
        Self::TurnFailed,
        Self::Ended,
    ];

    /// The wire name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::NeedsPermission => "needs_permission",
            Self::NeedsAnswer => "needs_answer",
            Self::Idle => "idle",
            Self::AwaitingReview => "awaiting_review",
            Self::TurnFailed => "turn_failed",
            Self::Ended => "ended",
        }
    }

    /// Parse a wire name.
    pub fn parse(name: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|s| s.as_str() == name)
    }

    /// The state in an operator's words (hivectl's STATE column, the
    /// dashboard's attention tag).
    pub fn words(self) -> &'static str {
        match self {
            Self::Working => "working",
            Self::NeedsPermission => "needs you: permission",
            Self::NeedsAnswer => "needs you: question",
            Self::Idle => "needs you: idle",
            Self::AwaitingReview => "turn done",
            Self::TurnFailed => "turn failed",
            Self::Ended => "session ended",
        }
    }

    /// The agent waits on a person (`hivectl status --needs-me`).
    pub fn needs_person(self) -> bool {
        matches!(self, Self::NeedsPermission | Self::NeedsAnswer | Self::Idle)
    }
}

/// The swarm bus's last refusal or error, answered with `swarm_status`
/// (additive): when, in unix seconds, and what the server or client said.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusError {
    pub at: i64,
    pub error: String,
}

/// One agent of some hive, as `hivectl status --swarm` lists it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SwarmAgentRow {
    pub hive: Ident,
    /// Unix seconds (the publishing hive's clock) of the row's last publish;
    /// rows are republished while their hive lives.
    pub published_at: i64,
    /// Not republished for longer than its hive republishes (or the bus is
    /// out of reach): the row is as last heard, maybe out of date. Omitted
    /// when false (additive).
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub stale: bool,
    #[serde(flatten)]
    pub row: AgentStatusRow,
}
