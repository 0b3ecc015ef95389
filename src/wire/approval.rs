//! The approval queue's rows as host.sock carries them (`pending`), with
//! their kind and status words, and one row as `show` reviews it.
//! Re-exported by [`super::host`].

use serde::{Deserialize, Serialize};

use super::ident::Ident;

/// One row of the approval queue (the seed's `Approval`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Approval {
    pub id: i64,
    pub agent: Ident,
    #[serde(default)]
    pub kind: ApprovalKind,
    /// Kind-specific payload: a git sha, an inputs array, a schedule, or empty.
    pub commit_ref: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub fetched_sha: Option<String>,
    /// Unix seconds.
    pub requested_at: i64,
    pub status: ApprovalStatus,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub resolved_at: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// What an approval triggers when granted.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalKind {
    #[default]
    ApplyCommit,
    Spawn,
    InitConfig,
    UpdateMetaInputs,
    SchedulePrompt,
    /// An agent's `request_egress`: `commit_ref` is the `host[:port]`
    /// pattern, `description` the agent's reason.
    Egress,
    /// The manager's `request_budget`: `commit_ref` is the amount
    /// (`20usd/day`), `agent` whose subtree it covers, `description` the
    /// reason.
    Budget,
}

impl ApprovalKind {
    pub const ALL: &'static [Self] = &[
        Self::ApplyCommit,
        Self::Spawn,
        Self::InitConfig,
        Self::UpdateMetaInputs,
        Self::SchedulePrompt,
        Self::Egress,
        Self::Budget,
    ];

    /// The snake_case wire (and database) name.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::ApplyCommit => "apply_commit",
            Self::Spawn => "spawn",
            Self::InitConfig => "init_config",
            Self::UpdateMetaInputs => "update_meta_inputs",
            Self::SchedulePrompt => "schedule_prompt",
            Self::Egress => "egress",
            Self::Budget => "budget",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.as_str() == value)
    }
}

/// Where an approval stands. `Pending` is the only non-terminal status.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ApprovalStatus {
    Pending,
    Approved,
    Denied,
    /// The action ran after approval and failed (see `note`).
    Failed,
    /// Withdrawn (by the manager, or because its agent was destroyed).
    Cancelled,
}

impl ApprovalStatus {
    pub const ALL: &'static [Self] = &[
        Self::Pending,
        Self::Approved,
        Self::Denied,
        Self::Failed,
        Self::Cancelled,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Pending => "pending",
            Self::Approved => "approved",
            Self::Denied => "denied",
            Self::Failed => "failed",
            Self::Cancelled => "cancelled",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|k| k.as_str() == value)
    }

    pub fn is_terminal(self) -> bool {
        self != Self::Pending
    }
}

/// An approval as `show` answers it: the row and, for a fetched config
/// proposal, its diff against the deployed `main`. Text only: control
/// characters but newline and tab are replaced by `?`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Review {
    pub approval: Approval,
    /// `git diff --stat --summary main proposal/<id>` (empty: not a
    /// proposal).
    #[serde(default)]
    pub stat: String,
    /// The patch, cut at the hive's cap (then `truncated`).
    #[serde(default)]
    pub patch: String,
    #[serde(default)]
    pub truncated: bool,
    /// Entries worth a second look: `binary <path>`, `symlink <path>`.
    #[serde(default)]
    pub flagged: Vec<String>,
}
