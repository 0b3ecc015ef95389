//! host.sock v1: the operator's socket. The byte-exact contract is the
//! golden lines in `src/wire/host_tests.rs` (one per `cmd` and per answer
//! shape, checked both ways); change a line there only with the protocol.
//!
//! Types only, no IO. Requests are tagged by `cmd`; responses are one
//! envelope whose keys serialize in the order existing clients expect:
//! `version`, `ok`, `error`, then the verb's one answer field. Absent
//! optionals are omitted, never `null`. Unknown request keys are ignored
//! (serde's default), and so are unknown response keys on the client side.

use serde::{Deserialize, Serialize};

use super::agenda::{
    AgentGrants, Capability, HostJournalFilters, ToolGroup, WireQuestion, WireSchedule,
};
use super::agent::InboxRow;
pub use super::approval::{Approval, ApprovalKind, ApprovalStatus, Review};
use super::codes::ErrorCode;
use super::egress::EgressPattern;
use super::egress_audit::EgressLogRow;
use super::ident::Ident;
use super::images::ImageRow;
use super::inspect::AgentInspect;
use super::journal::JournalEntry;
use super::live::{LiveChange, LiveTurn};
pub use super::roster::{AgentStatusRow, BusError, SessionState, SwarmAgentRow};
pub use super::scope::LifecycleScope;
pub use super::signal::Signal;
use super::spend::{BudgetRow, SpendCap};
use super::turns::{TurnRow, UsageBy, UsageRow};
use super::version::DaemonVersion;

/// The protocol version this build speaks. Bumped only by a breaking change.
pub const VERSION: u32 = 1;

/// One request on host.sock.
#[derive(Debug, Clone, PartialEq, Serialize, Deserialize)]
#[serde(tag = "cmd", rename_all = "snake_case")]
pub enum HostRequest {
    /// Managed agents by logical name.
    List,
    /// The roster: one row per managed agent.
    AgentStatus,
    /// Streaming: an ack, then one single-row line per change.
    SubscribeAgentStatus,
    /// The swarm roster: every hive's agents (this hive's alone when it is
    /// not in a swarm).
    SwarmStatus,
    /// The hive's domain and browser URLs.
    Urls,
    /// Pause or resume an agent's turns (a flag in the store: a paused
    /// agent's `recv` pops nothing).
    SetPaused { name: Ident, paused: bool },
    /// Start the containers the scope selects.
    Start { scope: LifecycleScope },
    /// Stop the containers the scope selects.
    Stop {
        scope: LifecycleScope,
        #[serde(default)]
        graceful: bool,
        /// Additive to v1: how long a graceful stop may take before the
        /// SIGKILL, in seconds (at most [`MAX_STOP_DEADLINE_SECS`]); the
        /// hive's configured deadline when omitted. Ignored for a hard stop.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        deadline_secs: Option<u64>,
    },
    /// Stop and start one container without rebuilding its config.
    Restart { name: Ident },
    /// Restart every managed container in sequence.
    RestartAll,
    /// Create and start a sub-agent directly (no approval).
    Spawn { name: Ident },
    /// Queue a `spawn` approval for the operator.
    RequestSpawn { name: Ident },
    /// Stop a managed container, gracefully.
    Kill { name: Ident },
    /// Tear a container down; state is kept unless `purge`.
    Destroy {
        name: Ident,
        #[serde(default)]
        purge: bool,
    },
    /// Apply pending config to a container.
    Rebuild { name: Ident },
    /// Approval rows (every pending one, then the recent resolved ones).
    Pending,
    /// Approve a pending row: its action runs now. An `egress` row's host
    /// may be granted for `expires_in_secs` (additive; no expiry without).
    Approve {
        id: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expires_in_secs: Option<u64>,
    },
    /// Deny a pending row; `note` (additive) is kept on the row and, for a
    /// config proposal, annotates its `denied/<id>` tag.
    Deny {
        id: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// Move an agent in the topology; `null` makes it a root.
    SetParent {
        child: Ident,
        new_parent: Option<Ident>,
    },
    // ---- additive to v1 -------------------------------------------------
    /// An agent's container journal (`journalctl -M h-<name>`); with
    /// `follow`, a stream: an ack, then one line per new entry.
    Logs {
        name: Ident,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        lines: Option<u32>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        unit: Option<String>,
        #[serde(default)]
        follow: bool,
    },
    /// The host's journal, filtered (the filters of `get_host_journal`);
    /// with `follow` (additive to v1, omitted when false), a stream like
    /// `logs`'s: an ack, then one line per new entry.
    Journal {
        #[serde(flatten)]
        filters: HostJournalFilters,
        #[serde(default, skip_serializing_if = "super::is_false")]
        follow: bool,
    },
    /// Open questions (asked of the operator or of an agent).
    Questions,
    /// Answer a question as the operator.
    Answer { id: i64, answer: String },
    /// Every scheduled prompt, cancelled and finished ones too.
    Schedules,
    /// Cancel a schedule, or some of its targets.
    CancelSchedule {
        id: i64,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        targets: Option<Vec<String>>,
    },
    /// Grants of one agent, or of every agent.
    Grants {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<Ident>,
    },
    /// Grant an agent one capability, one tool group or one egress host
    /// (exactly one); an egress host for `expires_in_secs` if given.
    Grant {
        name: Ident,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capability: Option<Capability>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_group: Option<ToolGroup>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress: Option<EgressPattern>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        expires_in_secs: Option<u64>,
    },
    /// Revoke one capability, one tool group or one egress host (exactly
    /// one).
    Revoke {
        name: Ident,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        capability: Option<Capability>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        tool_group: Option<ToolGroup>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        egress: Option<EgressPattern>,
    },
    /// An approval row and, for a config proposal, what it changes against
    /// what is deployed (`main..proposal/<id>`): `review` in the answer.
    Show { id: i64 },
    /// Deploy agent `name`'s config as it was at `deployed/<id>`: a new
    /// commit on `main` with that tree, deployed as an `apply_commit` row
    /// of its own, approved by the operator.
    Rollback { name: Ident, id: i64 },
    /// The operator's inbox: messages agents sent to `operator`, newest
    /// first (default [`DEFAULT_INBOX_LIMIT`]). Additive to v1: with `id`,
    /// that one message, whole (`messages: [row]`; `unknown_item` when the
    /// inbox holds no such id); `limit` is then ignored.
    Inbox {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u64>,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        id: Option<i64>,
    },
    /// A message from `operator` to an agent.
    Send {
        to: Ident,
        body: String,
        /// Additive to v1: the agent's hive when it is another hive of the
        /// swarm (`hivectl send bob@hive-b`); this hive when omitted.
        #[serde(default, skip_serializing_if = "Option::is_none")]
        hive: Option<Ident>,
    },
    /// Send a signal to an agent's container's init (machined's
    /// `KillMachine` with `leader`, as `podman kill`); what the init does
    /// with it is its own affair. A stopped container is left alone.
    Signal { name: Ident, signal: Signal },
    /// End agent `name`'s turn in progress: its harness stops Claude, the
    /// turn is recorded `interrupted` and its messages count as handled;
    /// `note`, if any, is the agent's next message (from `operator`).
    Interrupt {
        name: Ident,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        note: Option<String>,
    },
    /// An agent's newest turns from the turn journal, newest first
    /// (default [`DEFAULT_TURNS_LIMIT`]). With `follow` (additive, omitted
    /// when false) a stream instead: an ack, the turn in progress if any
    /// (`live_turn`), then one `live` line per change of its live turn.
    Turns {
        name: Ident,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
        #[serde(default, skip_serializing_if = "super::is_false")]
        follow: bool,
    },
    /// What turns cost: sums over the turns that ended in the last
    /// `since_secs` (all of them when omitted), grouped `by`.
    Usage {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        since_secs: Option<u64>,
        #[serde(default)]
        by: UsageBy,
    },
    /// Spend caps in force, each with what its window holds now.
    Budgets,
    /// Put the cap `amount` on `name`'s subtree, or with `hive` on the
    /// whole hive (exactly one of them); it replaces the cap of its unit
    /// there.
    SetBudget {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<Ident>,
        #[serde(default, skip_serializing_if = "super::is_false")]
        hive: bool,
        amount: SpendCap,
    },
    /// Remove the operator's caps on `name`'s subtree or (`hive`) the hive.
    UnsetBudget {
        #[serde(default, skip_serializing_if = "Option::is_none")]
        name: Option<Ident>,
        #[serde(default, skip_serializing_if = "super::is_false")]
        hive: bool,
    },
    /// The egress audit of agent `name`: its newest `limit` connections
    /// through the egress proxy (default
    /// [`super::egress_audit::DEFAULT_EGRESS_LOG_LIMIT`], at most
    /// [`super::egress_audit::MAX_EGRESS_LOG_LIMIT`]), oldest first.
    EgressLog {
        name: Ident,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// One agent's facts in one answer (`inspect`: [`AgentInspect`]).
    InspectAgent { name: Ident },
    /// The daemon's release, protocol, driver and uptime (`daemon`: [`DaemonVersion`]).
    Version,
    /// The model requests of agent `name` as the model gateway metered
    /// them: its newest `limit` (default
    /// [`super::model_log::DEFAULT_MODEL_LOG_LIMIT`], at most
    /// [`super::model_log::MAX_MODEL_LOG_LIMIT`]), oldest first.
    ModelLog {
        name: Ident,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        limit: Option<u32>,
    },
    /// The agent images and the agents of each (`images`: [`ImageRow`]).
    Images,
    /// Remove the image versions no agent uses but the newest (`pruned`:
    /// their names); with `dry_run` only name them.
    PruneImages {
        #[serde(default, skip_serializing_if = "super::is_false")]
        dry_run: bool,
    },
}

/// The longest stop deadline a `stop` request may ask for (an hour).
pub const MAX_STOP_DEADLINE_SECS: u64 = 3600;

/// How many turns `turns` returns without a `limit`.
pub const DEFAULT_TURNS_LIMIT: u32 = 20;

/// How many rows `inbox` returns without a `limit`.
pub const DEFAULT_INBOX_LIMIT: u64 = 50;

impl HostRequest {
    /// Every `cmd` this build knows, so an unknown one gets its own error
    /// instead of serde's list of variants.
    pub const COMMANDS: &'static [&'static str] = &[
        "list",
        "agent_status",
        "subscribe_agent_status",
        "swarm_status",
        "urls",
        "set_paused",
        "start",
        "stop",
        "restart",
        "restart_all",
        "spawn",
        "request_spawn",
        "kill",
        "destroy",
        "rebuild",
        "pending",
        "approve",
        "deny",
        "set_parent",
        "logs",
        "journal",
        "questions",
        "answer",
        "schedules",
        "cancel_schedule",
        "grants",
        "grant",
        "revoke",
        "inbox",
        "send",
        "signal",
        "interrupt",
        "turns",
        "usage",
        "show",
        "rollback",
        "budgets",
        "set_budget",
        "unset_budget",
        "egress_log",
        "inspect_agent",
        "version",
        "model_log",
        "images",
        "prune_images",
    ];

    /// The request's `cmd` and the agent it acts on, if it names one: what
    /// the access policy (`hive::access`) decides on. One exhaustive match.
    pub fn describe(&self) -> (&'static str, Option<&Ident>) {
        match self {
            Self::List => ("list", None),
            Self::AgentStatus => ("agent_status", None),
            Self::SubscribeAgentStatus => ("subscribe_agent_status", None),
            Self::SwarmStatus => ("swarm_status", None),
            Self::Urls => ("urls", None),
            Self::SetPaused { name, .. } => ("set_paused", Some(name)),
            Self::Start { .. } => ("start", None),
            Self::Stop { .. } => ("stop", None),
            Self::Restart { name } => ("restart", Some(name)),
            Self::RestartAll => ("restart_all", None),
            Self::Spawn { name } => ("spawn", Some(name)),
            Self::RequestSpawn { name } => ("request_spawn", Some(name)),
            Self::Kill { name } => ("kill", Some(name)),
            Self::Destroy { name, .. } => ("destroy", Some(name)),
            Self::Rebuild { name } => ("rebuild", Some(name)),
            Self::Pending => ("pending", None),
            Self::Approve { .. } => ("approve", None),
            Self::Deny { .. } => ("deny", None),
            Self::SetParent { child, .. } => ("set_parent", Some(child)),
            Self::Logs { name, .. } => ("logs", Some(name)),
            Self::Journal { .. } => ("journal", None),
            Self::Questions => ("questions", None),
            Self::Answer { .. } => ("answer", None),
            Self::Schedules => ("schedules", None),
            Self::CancelSchedule { .. } => ("cancel_schedule", None),
            Self::Grants { name } => ("grants", name.as_ref()),
            Self::Grant { name, .. } => ("grant", Some(name)),
            Self::Revoke { name, .. } => ("revoke", Some(name)),
            Self::Inbox { .. } => ("inbox", None),
            Self::Send { to, .. } => ("send", Some(to)),
            Self::Signal { name, .. } => ("signal", Some(name)),
            Self::Interrupt { name, .. } => ("interrupt", Some(name)),
            Self::Turns { name, .. } => ("turns", Some(name)),
            Self::Usage { .. } => ("usage", None),
            Self::Show { .. } => ("show", None),
            Self::Rollback { name, .. } => ("rollback", Some(name)),
            Self::Budgets => ("budgets", None),
            Self::SetBudget { name, .. } => ("set_budget", name.as_ref()),
            Self::UnsetBudget { name, .. } => ("unset_budget", name.as_ref()),
            Self::EgressLog { name, .. } => ("egress_log", Some(name)),
            Self::InspectAgent { name } => ("inspect_agent", Some(name)),
            Self::Version => ("version", None),
            Self::ModelLog { name, .. } => ("model_log", Some(name)),
            Self::Images => ("images", None),
            Self::PruneImages { .. } => ("prune_images", None),
        }
    }
}

/// The one response envelope. `Default` is only the base of
/// [`HostResponse::success`] (its version 0 is no answer to send).
#[derive(Debug, Clone, Default, PartialEq, Serialize, Deserialize)]
pub struct HostResponse {
    #[serde(default = "default_version")]
    pub version: u32,
    pub ok: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    /// With `error`: what it means to a program ([`ErrorCode`]); additive.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub code: Option<ErrorCode>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agents: Option<Vec<Ident>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub agent_statuses: Option<Vec<AgentStatusRow>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub urls: Option<HiveUrls>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub approvals: Option<Vec<Approval>>,
    /// Journal entries (`logs`, `journal`), oldest first.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub entries: Option<Vec<JournalEntry>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub questions: Option<Vec<WireQuestion>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub schedules: Option<Vec<WireSchedule>>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub grants: Option<Vec<AgentGrants>>,
    /// The operator's inbox, newest first (`inbox`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub messages: Option<Vec<InboxRow>>,
    /// Every hive's agents, by hive then name (`swarm_status`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub swarm_statuses: Option<Vec<SwarmAgentRow>>,
    /// With `swarm_statuses`: the bus's last refusal or error, if any.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub bus_error: Option<BusError>,
    /// Turns from the turn journal, newest first (`turns`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turns: Option<Vec<TurnRow>>,
    /// Usage sums by key (`usage`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<Vec<UsageRow>>,
    /// One approval and what it changes (`show`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub review: Option<Review>,
    /// Spend caps in force and their windows' spend (`budgets`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub budgets: Option<Vec<BudgetRow>>,
    /// `turns` with `follow`: the turn in progress when the stream began.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live_turn: Option<LiveTurn>,
    /// `turns` with `follow`: one change of the live turn.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub live: Option<LiveChange>,
    /// An agent's egress audit, oldest first (`egress_log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub egress_log: Option<Vec<EgressLogRow>>,
    /// One agent's facts (`inspect_agent`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub inspect: Option<Box<AgentInspect>>,
    /// Which daemon answers and how it runs (`version`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub daemon: Option<DaemonVersion>,
    /// With a success: what the operator should know because the request
    /// did less or more than it reads (`grant`, `revoke`, `send`: nothing
    /// changed, an expiry dropped, the message waits for a stopped agent).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub note: Option<String>,
    /// An agent's metered model requests, oldest first (`model_log`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model_log: Option<Vec<super::model_log::ModelLogRow>>,
    /// The agent images and their agents (`images`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub images: Option<Vec<ImageRow>>,
    /// The image versions removed, or with `dry_run` to be (`prune_images`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pruned: Option<Vec<String>>,
}

fn default_version() -> u32 {
    VERSION
}

impl HostResponse {
    /// `{"version":1,"ok":true}`: a write verb that succeeded.
    pub fn success() -> Self {
        Self {
            version: VERSION,
            ok: true,
            ..Self::default()
        }
    }

    /// A success, with a note when there is one.
    pub fn noted(note: Option<String>) -> Self {
        Self {
            note,
            ..Self::success()
        }
    }

    /// `{"version":1,"ok":false,"error":...,"code":...}`.
    pub fn error(code: ErrorCode, message: impl Into<String>) -> Self {
        Self {
            ok: false,
            error: Some(message.into()),
            code: Some(code),
            ..Self::success()
        }
    }

    pub fn agents(agents: Vec<Ident>) -> Self {
        Self {
            agents: Some(agents),
            ..Self::success()
        }
    }

    pub fn agent_statuses(rows: Vec<AgentStatusRow>) -> Self {
        Self {
            agent_statuses: Some(rows),
            ..Self::success()
        }
    }

    pub fn swarm_statuses(rows: Vec<SwarmAgentRow>) -> Self {
        Self {
            swarm_statuses: Some(rows),
            ..Self::success()
        }
    }

    /// The line of [`HostResponse::agent_statuses`] around rows already
    /// serialized as one JSON array: a roster served from memory is
    /// serialized once per change, not once per request. Byte-equal to the
    /// serde form (tested in `host_tests.rs`).
    pub fn agent_statuses_line(rows_json: &str) -> String {
        format!("{{\"version\":{VERSION},\"ok\":true,\"agent_statuses\":{rows_json}}}")
    }

    pub fn approvals(rows: Vec<Approval>) -> Self {
        Self {
            approvals: Some(rows),
            ..Self::success()
        }
    }

    pub fn entries(entries: Vec<JournalEntry>) -> Self {
        Self {
            entries: Some(entries),
            ..Self::success()
        }
    }

    pub fn questions(rows: Vec<WireQuestion>) -> Self {
        Self {
            questions: Some(rows),
            ..Self::success()
        }
    }

    pub fn schedules(rows: Vec<WireSchedule>) -> Self {
        Self {
            schedules: Some(rows),
            ..Self::success()
        }
    }

    pub fn grants(rows: Vec<AgentGrants>) -> Self {
        Self {
            grants: Some(rows),
            ..Self::success()
        }
    }

    /// The response as one line, without the trailing newline.
    pub fn to_line(&self) -> String {
        // Serializing plain structs of strings, numbers and bools cannot fail.
        serde_json::to_string(self).unwrap_or_else(|_| {
            r#"{"version":1,"ok":false,"error":"internal: response did not serialize"}"#.into()
        })
    }
}

/// The answer of `urls`; each key omitted when not configured.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HiveUrls {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub domain: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub home: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub forge: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub matrix: Option<String>,
}
