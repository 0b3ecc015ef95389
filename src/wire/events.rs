//! Events hive-c0re pushes into the manager's inbox, from sender `system`,
//! as the JSON body of a message (the seed's `HelperEvent`).

use serde::{Deserialize, Serialize};

use super::host::{ApprovalStatus, SessionState};

/// The sender name of hive-c0re's own messages to the manager.
pub const SYSTEM_SENDER: &str = "system";

/// One event, tagged by `event`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum HelperEvent {
    /// An approval reached a terminal status.
    ApprovalResolved {
        id: i64,
        agent: String,
        commit_ref: String,
        status: ApprovalStatus,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sha: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
    },
    /// A container was spawned; `ok = false` means the spawn failed.
    Spawned {
        agent: String,
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sha: Option<String>,
    },
    /// A container was rebuilt.
    Rebuilt {
        agent: String,
        ok: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        sha: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tag: Option<String>,
    },
    /// A new agent's proposed config repo was seeded.
    ConfigReady { agent: String },
    /// A container was stopped (state kept).
    Killed { agent: String },
    /// A container was torn down.
    Destroyed { agent: String },
    /// An agent has no Claude session yet.
    NeedsLogin { agent: String },
    /// An agent completed its Claude login.
    LoggedIn { agent: String },
    /// An agent's deployed config is stale.
    NeedsUpdate { agent: String },
    /// A container exited without an operator stop.
    ContainerCrash {
        agent: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// A question was answered (`answerer`: operator, an agent, or
    /// `ttl-watchdog` on expiry).
    QuestionAnswered {
        id: i64,
        question: String,
        answer: String,
        answerer: String,
    },
    /// An agent has waited on a person (a permission prompt, a question,
    /// idleness, as its Claude Code hooks report) for longer than the
    /// hive's `attention_after_secs`; `since` is RFC 3339 UTC. (Not in the
    /// seed: hive-c0re's extension, so the manager can route it.)
    NeedsAttention {
        agent: String,
        state: SessionState,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        message: Option<String>,
        since: String,
    },
    /// A spend cap (`hivectl budget`) was reached: the hive starts no new
    /// turn for the agents it covers (their messages wait in their
    /// inboxes) until the operator raises it or its window moves on.
    /// `agent` is whose subtree (or own turns) it covers, omitted for the
    /// hive's; `spent` in words (`$20.00 of $20.00 today`). (Not in the
    /// seed: hive-c0re's extension.)
    BudgetReached {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
        amount: String,
        spent: String,
    },
    /// Somebody asked this agent a question.
    QuestionAsked {
        id: i64,
        asker: String,
        question: String,
        #[serde(default)]
        options: Vec<String>,
        #[serde(default)]
        multi: bool,
    },
}

impl HelperEvent {
    /// The event as a message body.
    pub fn to_body(&self) -> String {
        serde_json::to_string(self).unwrap_or_default()
    }
}

#[cfg(test)]
#[path = "events_tests.rs"]
mod tests;
