//! Wire types of the agents' agenda: loose ends, reminders, schedules,
//! capabilities and tool groups (the seed's shapes, field for field).

use serde::{Deserialize, Serialize};

/// One open thread of an agent, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum LooseEnd {
    /// A pending approval row.
    Approval {
        id: i64,
        agent: String,
        commit_ref: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
        age_seconds: u64,
    },
    /// An unanswered question.
    Question {
        id: i64,
        asker: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        target: Option<String>,
        question: String,
        age_seconds: u64,
    },
    /// A reminder not yet delivered.
    Reminder {
        id: i64,
        owner: String,
        message: String,
        due_at: i64,
        age_seconds: u64,
    },
    /// Unread matrix notifications (added by the in-container harness,
    /// never by hive-c0re).
    UnreadMatrix {
        rooms: u32,
        #[serde(default)]
        summary: String,
    },
}

/// What `cancel_loose_end` cancels.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum CancelLooseEndKind {
    Question,
    Reminder,
    /// A pending approval (manager socket only).
    Approval,
}

/// When a reminder fires.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "timing_type", rename_all = "snake_case")]
pub enum ReminderTiming {
    /// This many seconds from now.
    InSeconds { seconds: u64 },
    /// At this unix time.
    At { unix_timestamp: i64 },
}

/// Reminder counts over a window.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ReminderStats {
    pub scheduled: u64,
    pub delivered: u64,
    pub pending: u64,
}

/// A scheduled prompt as requested (also stored in the approval's
/// `commit_ref` as JSON until approved).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct SchedulePromptPayload {
    /// Recipient agents; `operator` allowed.
    pub targets: Vec<String>,
    pub body: String,
    pub first_fire_at_unix: i64,
    /// `None` = one-shot; `Some(n > 0)` = every `n` seconds.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_seconds: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
}

/// A schedule as listed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireSchedule {
    pub id: i64,
    pub owner: String,
    pub body: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub interval_seconds: Option<u64>,
    pub next_fire_at_unix: i64,
    pub created_at_unix: i64,
    pub source: WireScheduleSource,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_at_unix: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub description: Option<String>,
    pub targets: Vec<WireScheduleTarget>,
}

/// Who created a schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum WireScheduleSource {
    Operator,
    Approval { id: i64 },
}

/// One target of a schedule.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireScheduleTarget {
    pub target: String,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cancelled_at_unix: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_fired_at_unix: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub last_result: Option<String>,
}

/// An open question as the operator sees it (host.sock `questions`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct WireQuestion {
    pub id: i64,
    pub asker: String,
    /// The agent asked; omitted when the operator is asked.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    pub question: String,
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub options: Vec<String>,
    #[serde(default)]
    pub multi: bool,
    /// Unix seconds.
    pub asked_at: i64,
    /// Unix seconds; omitted when the question has no TTL.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
}

/// One agent's grants (host.sock `grants`).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentGrants {
    pub name: String,
    pub capabilities: Vec<Capability>,
    pub tool_groups: Vec<ToolGroup>,
    /// Hosts the operator opened to this agent beyond the config's
    /// `egress_allow` (in force now); omitted when none, so earlier
    /// clients' lines are unchanged.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub egress: Vec<EgressGrant>,
}

/// One egress grant: a `host[:port]` pattern, until `expires_at` (unix
/// seconds) if time-boxed.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressGrant {
    pub pattern: super::egress::EgressPattern,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<i64>,
}

/// A named group of the harness's MCP tools.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ToolGroup {
    Messaging,
    Meta,
    Inbox,
    Lifecycle,
    Approvals,
    Scheduling,
    Diagnostics,
    Execution,
    WebTools,
}

impl ToolGroup {
    /// Groups an agent gets when none are configured.
    pub const AGENT_DEFAULT: &'static [Self] =
        &[Self::Messaging, Self::Meta, Self::Inbox, Self::Execution];

    /// Every group but `web_tools` (the last of [`Self::ALL`]): the
    /// manager's tools.
    pub const MANAGER_DEFAULT: &'static [Self] = match Self::ALL.split_last() {
        Some((Self::WebTools, rest)) => rest,
        _ => panic!("ToolGroup::ALL must end with WebTools"),
    };

    pub const ALL: &'static [Self] = &[
        Self::Messaging,
        Self::Meta,
        Self::Inbox,
        Self::Lifecycle,
        Self::Approvals,
        Self::Scheduling,
        Self::Diagnostics,
        Self::Execution,
        Self::WebTools,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Messaging => "messaging",
            Self::Meta => "meta",
            Self::Inbox => "inbox",
            Self::Lifecycle => "lifecycle",
            Self::Approvals => "approvals",
            Self::Scheduling => "scheduling",
            Self::Diagnostics => "diagnostics",
            Self::Execution => "execution",
            Self::WebTools => "web_tools",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|g| g.as_str() == value)
    }

    /// The MCP tool names of this group, without the `mcp__hyperhive__`
    /// prefix (`execution`'s are served as `mcp__bash__*`).
    pub fn tools(self) -> &'static [&'static str] {
        match self {
            Self::Messaging => &["send", "recv", "ask", "answer"],
            Self::Meta => &["set_status", "get_agent_meta", "request_egress"],
            Self::Inbox => &[
                "get_loose_ends",
                "cancel_loose_end",
                "remind",
                "request_next_turn",
            ],
            Self::Lifecycle => &["kill", "start", "restart", "update", "list_containers"],
            Self::Approvals => &[
                "request_init_config",
                "request_apply_commit",
                "request_update_meta_inputs",
                "request_budget",
            ],
            Self::Scheduling => &[
                "request_schedule_prompt",
                "fire_schedule_now",
                "cancel_schedule",
                "edit_schedule",
                "list_schedules",
            ],
            Self::Diagnostics => &["get_logs"],
            Self::Execution => &["run", "status"],
            Self::WebTools => &[],
        }
    }

    /// The Claude built-in tools this group enables (`WebFetch`,
    /// `WebSearch` for `web_tools`; none for the others).
    pub fn builtin_tools(self) -> &'static [&'static str] {
        match self {
            Self::WebTools => &["WebFetch", "WebSearch"],
            _ => &[],
        }
    }
}

/// A system-level grant hive-c0re enforces at dispatch.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Capability {
    /// Lifecycle-manage the root agent when it has crashed.
    ManageRootAgent,
    /// Read the host journal with `get_host_journal`.
    ReadHostJournal,
    /// Query non-child agents' loose ends and reminders.
    QueryAgentState,
}

impl Capability {
    pub const ALL: &'static [Self] = &[
        Self::ManageRootAgent,
        Self::ReadHostJournal,
        Self::QueryAgentState,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::ManageRootAgent => "manage_root_agent",
            Self::ReadHostJournal => "read_host_journal",
            Self::QueryAgentState => "query_agent_state",
        }
    }

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|c| c.as_str() == value)
    }
}

/// The filters of the host journal (`get_host_journal` on the agent socket,
/// `journal` on host.sock); every one optional. Validated by
/// `crate::systemd::journal` before anything runs.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HostJournalFilters {
    /// A unit, e.g. `hive-c0re.service`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// An agent container's machine name, `h-<agent>`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub container: Option<String>,
    /// How many of the newest entries (default 30, at most 100).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub lines: Option<u32>,
    /// This priority and more severe.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<JournalPriority>,
    /// A regular expression the message must match.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grep: Option<String>,
    /// journalctl `--since` (ISO 8601 or relative, e.g. `-1h`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub since: Option<String>,
    /// journalctl `--until`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub until: Option<String>,
}

/// Syslog priority for `get_host_journal`, as journalctl's `-p` takes it.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum JournalPriority {
    Emerg,
    Alert,
    Crit,
    Err,
    Warning,
    Notice,
    Info,
    Debug,
}

impl JournalPriority {
    /// Most severe first, as journalctl orders them.
    pub const ALL: &'static [Self] = &[
        Self::Emerg,
        Self::Alert,
        Self::Crit,
        Self::Err,
        Self::Warning,
        Self::Notice,
        Self::Info,
        Self::Debug,
    ];

    pub fn parse(value: &str) -> Option<Self> {
        Self::ALL.iter().copied().find(|p| p.as_str() == value)
    }

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Emerg => "emerg",
            Self::Alert => "alert",
            Self::Crit => "crit",
            Self::Err => "err",
            Self::Warning => "warning",
            Self::Notice => "notice",
            Self::Info => "info",
            Self::Debug => "debug",
        }
    }
}

/// The mutable fields of a schedule (`edit_schedule`); `None` leaves a
/// field as it is, `Some(None)` (a JSON `null`) clears it.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct ScheduleEdit {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub body: Option<String>,
    /// `Some(None)` clears the description.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    pub description: Option<Option<String>>,
    /// `Some(None)` makes the schedule one-shot.
    #[serde(
        default,
        skip_serializing_if = "Option::is_none",
        with = "double_option"
    )]
    pub interval_seconds: Option<Option<u64>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub next_fire_at_unix: Option<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_add: Option<Vec<String>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub targets_remove: Option<Vec<String>>,
}

/// `Option<Option<T>>` where an absent key is `None` and `null` is
/// `Some(None)` ("clear it"), which plain serde folds together.
mod double_option {
    use serde::{Deserialize, Deserializer, Serialize, Serializer};

    pub fn serialize<S: Serializer, T: Serialize>(
        value: &Option<Option<T>>,
        s: S,
    ) -> Result<S::Ok, S::Error> {
        match value {
            Some(inner) => inner.serialize(s),
            None => s.serialize_none(),
        }
    }

    pub fn deserialize<'de, D: Deserializer<'de>, T: Deserialize<'de>>(
        d: D,
    ) -> Result<Option<Option<T>>, D::Error> {
        Option::<T>::deserialize(d).map(Some)
    }
}

#[cfg(test)]
#[path = "agenda_tests.rs"]
mod tests;
