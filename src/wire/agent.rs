//! The agent and manager sockets' unified `Request`/`Response` (the seed's
//! shapes). Requests are tagged `cmd`, responses `kind`, both snake_case.
//! The sender of a request is the socket it arrived on, never a field.
//! The byte-exact contract is the tests at the end of this file and
//! `src/server/agent_tests.rs`.

use serde::{Deserialize, Serialize};

use super::agenda::{
    CancelLooseEndKind, HostJournalFilters, LooseEnd, ReminderStats, ReminderTiming, ScheduleEdit,
    SchedulePromptPayload, WireSchedule,
};
use super::codes::ErrorCode;
use super::egress::EgressPattern;
use super::ident::Ident;

/// The largest hook payload `hook_event` accepts, in bytes. Claude Code's
/// lifecycle payloads are a few hundred bytes; the cap keeps the escaped
/// request well inside the socket's 1 MiB line.
pub const MAX_HOOK_PAYLOAD: usize = 256 * 1024;

/// The request line's optional field naming its idempotency key:
/// `{"cmd":"send",...,"idempotency_key":"<key>"}`. Beside the `cmd`, not a
/// field of each variant: one field for every request that acts
/// ([`Request::keyed`]), read by the door before the request is served, and
/// ignored by a daemon that predates it (serde skips unknown fields), so
/// the wire stays additive both ways.
pub const IDEMPOTENCY_KEY: &str = "idempotency_key";
/// The longest key accepted.
pub const MAX_IDEMPOTENCY_KEY: usize = 64;

/// Whether `key` is one the daemon keeps: 1 to [`MAX_IDEMPOTENCY_KEY`]
/// characters of `[A-Za-z0-9_-]`.
pub fn valid_idempotency_key(key: &str) -> bool {
    !key.is_empty()
        && key.len() <= MAX_IDEMPOTENCY_KEY
        && key
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-')
}

/// One request on an agent or the manager socket.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum Request {
    /// Send a message: `to` is an agent, `operator`, `<parent>` or `<children>`.
    Send {
        to: String,
        body: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        in_reply_to: Option<i64>,
    },
    /// Pop pending messages (long-poll with `wait_seconds`).
    Recv {
        #[serde(default)]
        wait_seconds: Option<u64>,
        #[serde(default)]
        max: Option<u32>,
    },
    /// How many messages are pending for me.
    Status,
    /// A message to me from `operator` (my own web UI).
    OperatorMsg { body: String },
    /// A message to me from a caller-chosen sender; `transient` = memory only.
    Wake {
        from: String,
        body: String,
        #[serde(default)]
        transient: bool,
    },
    /// My newest `limit` messages, without delivering them.
    Recent { limit: u64 },
    /// Ask the operator (`to` absent) or an agent a question.
    Ask {
        question: String,
        #[serde(default)]
        options: Vec<String>,
        #[serde(default)]
        multi: bool,
        #[serde(default)]
        ttl_seconds: Option<u64>,
        #[serde(default)]
        to: Option<Ident>,
    },
    /// Answer a question routed to me.
    Answer { id: i64, answer: String },
    /// Remind me later.
    Remind {
        message: String,
        timing: ReminderTiming,
        #[serde(default)]
        file_path: Option<String>,
    },
    /// Open threads of me, a child, another agent, or (`*`, manager) all.
    GetLooseEnds {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// Undelivered reminders of me or another agent.
    CountPendingReminders {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// Reminder statistics over the last `since_secs` (0 = all).
    ReminderRollup {
        #[serde(default)]
        since_secs: u64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        agent: Option<String>,
    },
    /// Set my free-text status (empty clears it).
    SetStatus { text: String },
    /// Identity and status of me (`None`) or another agent.
    GetAgentMeta {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<Ident>,
    },
    /// Cancel an open thread I own.
    CancelLooseEnd { kind: CancelLooseEndKind, id: i64 },
    /// Every message popped since the last ack is handled.
    AckTurn,
    /// Every popped-unacked message goes back to pending, marked redelivered.
    RequeueInflight,
    /// Recent host journal lines (needs `read_host_journal`).
    GetHostJournal(HostJournalFilters),
    /// The harness reports its Claude session: whether it needs a login,
    /// the model in use. An absent field is left as it was. (Not in the
    /// seed: hive-c0re's own verb, so `needs_login` and `active_model` on
    /// the roster come from the one process that can see them.)
    ReportSession {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        needs_login: Option<bool>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        active_model: Option<String>,
    },
    /// One Claude Code lifecycle hook, forwarded by `hive-agent hook`:
    /// `payload` is the hook's stdin, kept whole (at most
    /// [`MAX_HOOK_PAYLOAD`] bytes, a JSON object with `hook_event_name`).
    /// (Not in the seed: hive-c0re's own verb, so the roster shows when an
    /// agent needs a person.)
    /// `headless`: sent from a harness turn's Claude (whose spend
    /// `report_turn` counts), so its transcript is not read.
    HookEvent {
        payload: String,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        headless: bool,
    },
    /// The harness reports one finished turn for the turn journal (its
    /// messages, outcome, tool calls, and Claude Code's usage and cost).
    /// Sent before the turn's `ack_turn`, so the next message already sees
    /// the spend. (Not in the seed: hive-c0re's own verb.)
    ReportTurn {
        turn: crate::wire::turns::TurnReport,
    },
    /// The harness, for the length of a turn: answered `interrupted` when
    /// the operator interrupts it (`hivectl interrupt`), `ok` when the
    /// hive stops first (watch again). (Not in the seed: hive-c0re's own.)
    AwaitInterrupt,
    /// The harness, during a turn: one bounded progress event (the turn
    /// began, a tool call started or ended, the reply so far, tokens so
    /// far), kept in the daemon's memory for the live view until the
    /// turn's `report_turn`; `dropped` counts events the harness dropped
    /// before this one. (Not in the seed: hive-c0re's own verb.)
    TurnProgress {
        progress: crate::wire::live::TurnProgress,
        #[serde(default, skip_serializing_if = "is_zero")]
        dropped: u64,
    },
    /// Ask the operator to open `host` (`host[:port]` or `*.domain[:port]`)
    /// to me through the egress proxy: queues an `egress` approval with
    /// `reason`; approving it grants the host to me.
    RequestEgress { host: EgressPattern, reason: String },
    /// *(privileged)* Seed a new agent's config and queue an approval.
    RequestInitConfig {
        name: Ident,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// *(privileged)* Stop a sub-agent (graceful).
    Kill { name: Ident },
    /// *(privileged)* Start a stopped sub-agent.
    Start { name: Ident },
    /// *(privileged)* Restart a sub-agent.
    Restart { name: Ident },
    /// *(privileged)* Rebuild a sub-agent.
    Update { name: Ident },
    /// *(privileged)* Submit a config commit (7-40 hex) for approval.
    RequestApplyCommit {
        agent: Ident,
        commit_ref: String,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// *(privileged)* Ask the operator for a budget (spend cap) of
    /// `amount` (`20usd/day`, `2000000tokens/day`, `5usd/5h`) on `agent`
    /// and every agent under it: queues a `budget` approval with `reason`;
    /// approving it sets that budget.
    RequestBudget {
        agent: Ident,
        amount: crate::wire::spend::SpendCap,
        reason: String,
    },
    /// *(privileged)* Recent journal lines of a sub-agent's container.
    GetLogs {
        agent: Ident,
        #[serde(default)]
        lines: Option<u32>,
    },
    /// *(privileged)* Queue a `nix flake update` of the meta inputs.
    RequestUpdateMetaInputs {
        #[serde(default)]
        inputs: Vec<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        description: Option<String>,
    },
    /// *(privileged)* Queue a scheduled prompt for approval.
    RequestSchedulePrompt(SchedulePromptPayload),
    /// *(privileged)* Cancel a schedule, or some of its targets.
    CancelSchedule {
        id: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        targets: Option<Vec<String>>,
    },
    /// *(privileged)* Every schedule.
    ListSchedules,
    /// My descendants in the topology (needs the `lifecycle` tool group).
    ListDescendants,
    /// *(privileged)* Fire a schedule now.
    FireScheduleNow { id: i64 },
    /// *(privileged)* Edit a schedule; `Some(None)` clears a field.
    EditSchedule {
        id: i64,
        #[serde(flatten)]
        edit: ScheduleEdit,
    },
}

impl Request {
    /// Every `cmd` this build knows.
    pub const COMMANDS: &'static [&'static str] = &[
        "send",
        "recv",
        "status",
        "operator_msg",
        "wake",
        "recent",
        "ask",
        "answer",
        "remind",
        "get_loose_ends",
        "count_pending_reminders",
        "reminder_rollup",
        "set_status",
        "get_agent_meta",
        "cancel_loose_end",
        "ack_turn",
        "requeue_inflight",
        "get_host_journal",
        "report_session",
        "hook_event",
        "report_turn",
        "await_interrupt",
        "turn_progress",
        "request_egress",
        "request_init_config",
        "kill",
        "start",
        "restart",
        "update",
        "request_apply_commit",
        "request_budget",
        "get_logs",
        "request_update_meta_inputs",
        "request_schedule_prompt",
        "cancel_schedule",
        "list_schedules",
        "list_descendants",
        "fire_schedule_now",
        "edit_schedule",
    ];

    /// Whether the request acts (sends, queues, asks, starts, cancels ...)
    /// so that a repeat of it would act twice: such a request may carry an
    /// [`IDEMPOTENCY_KEY`], and the daemon answers a repeat of the key with
    /// the first answer. A key on any other request is ignored: reads
    /// (`recv`, `recent`, the `get_*` and `list_*`), the harness's own
    /// bookkeeping (`ack_turn`, `requeue_inflight`, the reports, hooks,
    /// progress, `await_interrupt`), and `set_status`, whose newest text is
    /// the one that matters (a repeat kept from acting would leave a later
    /// text in place of the one the repeating turn means). One exhaustive
    /// match, so a new variant must decide.
    pub fn keyed(&self) -> bool {
        match self {
            Self::Send { .. }
            | Self::OperatorMsg { .. }
            | Self::Wake { .. }
            | Self::Ask { .. }
            | Self::Answer { .. }
            | Self::Remind { .. }
            | Self::CancelLooseEnd { .. }
            | Self::RequestEgress { .. }
            | Self::RequestInitConfig { .. }
            | Self::Kill { .. }
            | Self::Start { .. }
            | Self::Restart { .. }
            | Self::Update { .. }
            | Self::RequestApplyCommit { .. }
            | Self::RequestBudget { .. }
            | Self::RequestUpdateMetaInputs { .. }
            | Self::RequestSchedulePrompt(_)
            | Self::CancelSchedule { .. }
            | Self::FireScheduleNow { .. }
            | Self::EditSchedule { .. } => true,
            Self::Recv { .. }
            | Self::Status
            | Self::Recent { .. }
            | Self::GetLooseEnds { .. }
            | Self::CountPendingReminders { .. }
            | Self::ReminderRollup { .. }
            | Self::SetStatus { .. }
            | Self::GetAgentMeta { .. }
            | Self::AckTurn
            | Self::RequeueInflight
            | Self::GetHostJournal(_)
            | Self::ReportSession { .. }
            | Self::HookEvent { .. }
            | Self::ReportTurn { .. }
            | Self::AwaitInterrupt
            | Self::TurnProgress { .. }
            | Self::ListDescendants
            | Self::GetLogs { .. }
            | Self::ListSchedules => false,
        }
    }

    /// The request's `cmd` and the agent it acts on, if it names one: what
    /// the access policy (`hive::access`) decides on. One exhaustive match.
    pub fn describe(&self) -> (&'static str, Option<&Ident>) {
        match self {
            Self::Send { .. } => ("send", None),
            Self::Recv { .. } => ("recv", None),
            Self::Status => ("status", None),
            Self::OperatorMsg { .. } => ("operator_msg", None),
            Self::Wake { .. } => ("wake", None),
            Self::Recent { .. } => ("recent", None),
            Self::Ask { .. } => ("ask", None),
            Self::Answer { .. } => ("answer", None),
            Self::Remind { .. } => ("remind", None),
            Self::GetLooseEnds { .. } => ("get_loose_ends", None),
            Self::CountPendingReminders { .. } => ("count_pending_reminders", None),
            Self::ReminderRollup { .. } => ("reminder_rollup", None),
            Self::SetStatus { .. } => ("set_status", None),
            Self::GetAgentMeta { .. } => ("get_agent_meta", None),
            Self::CancelLooseEnd { .. } => ("cancel_loose_end", None),
            Self::AckTurn => ("ack_turn", None),
            Self::RequeueInflight => ("requeue_inflight", None),
            Self::GetHostJournal(_) => ("get_host_journal", None),
            Self::ReportSession { .. } => ("report_session", None),
            Self::HookEvent { .. } => ("hook_event", None),
            Self::ReportTurn { .. } => ("report_turn", None),
            Self::AwaitInterrupt => ("await_interrupt", None),
            Self::TurnProgress { .. } => ("turn_progress", None),
            Self::RequestEgress { .. } => ("request_egress", None),
            Self::ListDescendants => ("list_descendants", None),
            Self::RequestInitConfig { .. } => ("request_init_config", None),
            Self::Kill { name, .. } => ("kill", Some(name)),
            Self::Start { name, .. } => ("start", Some(name)),
            Self::Restart { name, .. } => ("restart", Some(name)),
            Self::Update { name, .. } => ("update", Some(name)),
            Self::RequestApplyCommit { agent, .. } => ("request_apply_commit", Some(agent)),
            Self::RequestBudget { agent, .. } => ("request_budget", Some(agent)),
            Self::GetLogs { agent, .. } => ("get_logs", Some(agent)),
            Self::RequestUpdateMetaInputs { .. } => ("request_update_meta_inputs", None),
            Self::RequestSchedulePrompt(_) => ("request_schedule_prompt", None),
            Self::CancelSchedule { .. } => ("cancel_schedule", None),
            Self::ListSchedules => ("list_schedules", None),
            Self::FireScheduleNow { .. } => ("fire_schedule_now", None),
            Self::EditSchedule { .. } => ("edit_schedule", None),
        }
    }
}

/// One response, tagged by `kind`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case")]
pub enum Response {
    /// Done. A `send` says how many inboxes it reached (`delivered`; 0
    /// for a `<children>` send from an agent without children); a
    /// `request_*` the id of its approval row (`approval`), and
    /// `already_pending: true` when the same request was pending already
    /// (that row is the answer; nothing new was queued). Absent otherwise:
    /// both additive, so `{"kind":"ok"}` clients read these answers as
    /// before.
    Ok {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        delivered: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        approval: Option<i64>,
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        already_pending: bool,
    },
    Err {
        message: String,
        /// What the refusal means to a program ([`ErrorCode`]); additive,
        /// absent from older daemons.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        code: Option<ErrorCode>,
    },
    Messages {
        messages: Vec<DeliveredMessage>,
    },
    Status {
        unread: u64,
    },
    Recent {
        rows: Vec<InboxRow>,
        /// Older rows were left out to keep the answer within the agent's
        /// byte budget (`agent_max_answer_bytes`); absent when false.
        #[serde(default, skip_serializing_if = "std::ops::Not::not")]
        truncated: bool,
    },
    QuestionQueued {
        id: i64,
    },
    LooseEnds {
        loose_ends: Vec<LooseEnd>,
    },
    PendingRemindersCount {
        count: u64,
    },
    ReminderRollup(ReminderStats),
    AgentMeta {
        name: String,
        #[serde(default = "default_true")]
        running: bool,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hyperhive_rev: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status_text: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        status_set_at: Option<i64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hive_name: Option<String>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        swarm_name: Option<String>,
    },
    Logs {
        content: String,
    },
    HostJournal {
        content: String,
    },
    Schedules {
        schedules: Vec<WireSchedule>,
    },
    Containers {
        containers: Vec<ContainerInfo>,
    },
    /// `await_interrupt`: the operator interrupted the turn.
    Interrupted,
}

fn default_true() -> bool {
    true
}

fn is_zero(n: &u64) -> bool {
    *n == 0
}

impl Response {
    /// `{"kind":"ok"}`.
    pub fn ok() -> Self {
        Self::Ok {
            delivered: None,
            approval: None,
            already_pending: false,
        }
    }

    /// `{"kind":"ok","delivered":n}`: a send that reached `n` inboxes.
    pub fn sent(n: usize) -> Self {
        Self::Ok {
            delivered: Some(u64::try_from(n).unwrap_or(u64::MAX)),
            approval: None,
            already_pending: false,
        }
    }

    /// `{"kind":"ok","approval":id}` for a queued request, with
    /// `"already_pending":true` when row `id` was that request already.
    pub fn queued(id: i64, already_pending: bool) -> Self {
        Self::Ok {
            delivered: None,
            approval: Some(id),
            already_pending,
        }
    }

    pub fn err(code: ErrorCode, message: impl Into<String>) -> Self {
        Self::Err {
            message: message.into(),
            code: Some(code),
        }
    }
}

/// One message handed out by `recv`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DeliveredMessage {
    pub from: String,
    pub body: String,
    /// Broker row id, for `ack_turn` bookkeeping in the harness.
    #[serde(default)]
    pub id: i64,
    /// Popped before and never acked: it may already be handled.
    #[serde(default)]
    pub redelivered: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<i64>,
}

/// One row of `recent` or the operator's inbox.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxRow {
    pub id: i64,
    pub from: String,
    pub body: String,
    pub at: i64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub in_reply_to: Option<i64>,
}

/// One entry of `list_descendants`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ContainerInfo {
    pub name: String,
    pub running: bool,
}

#[cfg(test)]
#[path = "agent_tests.rs"]
pub(crate) mod tests;
