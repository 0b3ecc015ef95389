//! What the operator's `notify_command` reads on its stdin: one JSON
//! object per run, `{"event": ..., "at": <unix seconds>, ...}`. Additive
//! only: a new event or field never changes an existing one.

use serde::{Deserialize, Serialize};

use super::approval::ApprovalKind;
use super::ident::Ident;
use super::roster::SessionState;

/// Something the operator may want to hear about away from the dashboard.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum NotifyEvent {
    /// An agent's hooks say it waits on a person (a permission prompt, a
    /// question, idleness).
    NeedsPerson {
        agent: Ident,
        state: SessionState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
    },
    /// An approval was queued and waits for the operator.
    ApprovalWaiting {
        id: i64,
        agent: Ident,
        kind: ApprovalKind,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// An agent's container exited without an operator stop.
    Crashed { agent: Ident, result: String },
    /// A budget (spend cap) was reached: no new turn starts for the agents
    /// it covers. `agent` is whose subtree (or own turns) it covers; for
    /// the hive's budget, the manager, with `hive`. `spent` in words
    /// (`$20.00 of $20.00 today`).
    BudgetReached {
        agent: Ident,
        #[serde(default, skip_serializing_if = "super::is_false")]
        hive: bool,
        amount: String,
        spent: String,
    },
}

impl NotifyEvent {
    /// The event's name, as in its JSON.
    pub fn name(&self) -> &'static str {
        match self {
            Self::NeedsPerson { .. } => "needs_person",
            Self::ApprovalWaiting { .. } => "approval_waiting",
            Self::Crashed { .. } => "crashed",
            Self::BudgetReached { .. } => "budget_reached",
        }
    }

    /// The agent it is about.
    pub fn agent(&self) -> &Ident {
        match self {
            Self::NeedsPerson { agent, .. }
            | Self::ApprovalWaiting { agent, .. }
            | Self::Crashed { agent, .. }
            | Self::BudgetReached { agent, .. } => agent,
        }
    }
}

/// One run's stdin: the event and when it happened.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct Notification {
    /// Unix seconds.
    pub at: i64,
    #[serde(flatten)]
    pub event: NotifyEvent,
}
