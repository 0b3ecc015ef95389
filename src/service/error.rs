//! What can go wrong in a hive operation, one variant per reaction the
//! caller (an operator, a dashboard, an agent) must make. One exhaustive
//! match, [`HiveError::code`], gives each its stable wire code
//! ([`ErrorCode`]), which in turn decides the dashboard's HTTP status and
//! hivectl's exit status; every door sends the code beside the message.

use std::path::PathBuf;

use crate::containers::DriverError;
use crate::hive::access::Denied;
use crate::hive::agenda::AgendaError;
use crate::hive::approvals::Refusal;
use crate::hive::broker::{InboxFull, UnknownRecipient};
use crate::hive::names::ReservedName;
use crate::hive::topology::TopologyError;
use crate::store::StoreError;
use crate::systemd::activation::BindError;
use crate::systemd::journal::{InvalidFilter, JournalError};
use crate::wire::codes::ErrorCode;
use crate::wire::host::ApprovalStatus;
use crate::wire::ident::Ident;

#[derive(Debug, thiserror::Error)]
pub enum HiveError {
    /// The name is valid but no such agent is managed: check `hivectl list`.
    #[error("agent \"{0}\" is not managed by this hive")]
    UnknownAgent(Ident),
    /// `spawn` of a name that is taken: pick another name.
    #[error("agent \"{0}\" already exists in this hive; choose another name")]
    AlreadyManaged(Ident),
    /// The access policy refuses this caller the verb (or this target):
    /// ask for a grant, or have the manager or the operator do it.
    #[error(transparent)]
    Denied(#[from] Denied),
    /// `spawn` when the hive already manages `max_agents` agents: destroy
    /// one, or raise the limit (and the unit's `LimitNOFILE=` with it).
    #[error(
        "cannot spawn \"{name}\": the hive is full ({max} agents, the manager included; \
         max_agents in the config); destroy an agent or raise max_agents"
    )]
    HiveFull { name: Ident, max: usize },
    /// A new agent's name the wire already gives a meaning: pick another.
    #[error(transparent)]
    ReservedName(#[from] ReservedName),
    /// The recipient's inbox is at its cap: the sender waits until it reads
    /// (or the operator raises `inbox_max_*`). Nothing was stored.
    #[error(transparent)]
    InboxFull(#[from] InboxFull),
    /// A topology move that is not allowed.
    #[error(transparent)]
    Topology(#[from] TopologyError),
    /// No approval row has this id: check `hivectl pending`.
    #[error("approval {0} does not exist; see `hivectl pending`")]
    UnknownApproval(i64),
    /// The row already ended; nothing to do.
    #[error("approval {id} is already {}", .status.as_str())]
    ApprovalResolved { id: i64, status: ApprovalStatus },
    /// Another approve is running this row's action right now.
    #[error("approval {0} is being approved right now")]
    ApprovalInProgress(i64),
    /// The approval was granted, its action ran and failed; the row is `failed`.
    #[error("approval {id} was approved but its action failed: {note}")]
    ApprovalFailed { id: i64, note: String },
    /// systemd refused or failed, for one agent.
    /// (The cause is in the message, not also a `source()`: a chain walker
    /// would print it twice.)
    #[error("{agent}: {error}")]
    Driver { agent: Ident, error: DriverError },
    /// Several agents of a scope failed; the others were done.
    #[error("{}", summary(.0))]
    Partial(Vec<(Ident, DriverError)>),
    /// A signal for a container that is not running: the caller starts it
    /// first (or leaves it be).
    #[error("agent \"{0}\" is not running, so there is nothing to signal; start it first")]
    NotRunning(Ident),
    /// The work goes on in the background past the answer budget.
    #[error("{verb} of {} is still in progress; watch `hivectl status`", .agents.join(", "))]
    StillRunning {
        verb: &'static str,
        agents: Vec<String>,
    },
    /// A journal filter the caller passed is not acceptable; fix it.
    #[error(transparent)]
    BadFilter(#[from] InvalidFilter),
    /// The fake driver runs no containers, so an agent has no container
    /// journal to read: the operator uses the real driver, or points
    /// `journal_directory` at journal files.
    #[error(
        "agent \"{0}\" has no container journal: the fake driver (--driver fake) runs no \
         containers; set journal_directory in the config to read journal files instead"
    )]
    NoContainerJournal(Ident),
    /// journalctl failed, timed out or said too much; its words are kept.
    #[error("reading the journal failed: {0}")]
    Journal(JournalError),
    /// `send` to nobody: the sender fixes the name.
    #[error(transparent)]
    UnknownRecipient(#[from] UnknownRecipient),
    /// A message body over the configured cap: the sender shortens it.
    #[error(
        "message body is {size} bytes, over this hive's cap of {cap} bytes \
         (max_body_bytes); shorten it or put the text in a file and send its path"
    )]
    BodyTooLarge { size: usize, cap: usize },
    /// A hook payload the intake refuses (size, UTF-8, JSON, event name):
    /// the sender fixes the payload; nothing was stored.
    #[error(transparent)]
    BadHook(#[from] crate::hive::hooks::HookError),

    /// A value of the request has the wrong shape (a commit ref that is
    /// not hex, a flake input that looks like an option, a wake's sender,
    /// a model name): the caller fixes the value.
    #[error(transparent)]
    BadArgument(#[from] crate::hive::arguments::BadArgument),
    /// An agent's socket could not be bound: the operator reads the reason
    /// (path too long, another daemon, permissions).
    #[error("cannot serve the socket of agent \"{agent}\": {reason}")]
    AgentSocket { agent: Ident, reason: BindError },
    /// A file the hive keeps (marker, directory) could not be written.
    #[error("cannot write {path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
    /// Questions, reminders, loose ends, schedules, grants: the agenda
    /// refused the request; its message says what to change.
    #[error(transparent)]
    Agenda(#[from] AgendaError),
    /// A bug or a panic inside the daemon; the operator reads its log.
    #[error("internal error: {0}; see `journalctl -u hive-c0re`")]
    Internal(String),
    /// The database failed; the operator reads the daemon's log.
    #[error("internal error in the hive's database; see `journalctl -u hive-c0re`")]
    Store(#[from] StoreError),
    /// `request_egress` for a host the agent may reach already: nothing to
    /// approve; the agent uses it (through its proxy, `HTTPS_PROXY`).
    #[error(
        "{host} is already on agent {agent}'s egress allow-list; reach it through the proxy (HTTPS_PROXY)"
    )]
    EgressAllowed { agent: Ident, host: String },
    /// A config proposal, or a config repo, that the hive refuses or could
    /// not make: refusals before anything was fetched (no such commit,
    /// alternates, no config repo) are the manager's to fix; git or a
    /// file of the hive's failing is the operator's to read.
    #[error(transparent)]
    Repo(#[from] crate::repos::RepoError),
    /// `init_config` of a name that already has a config repo: pick
    /// another name (or destroy with `--purge`).
    #[error("agent \"{0}\" already has a config repo; choose another name")]
    ConfigExists(Ident),
    /// `interrupt` found no turn in progress: there is nothing to end.
    #[error(
        "{0} has no turn in progress: nothing to interrupt (`hivectl send {0} TEXT` to tell it something)"
    )]
    NoTurn(Ident),
    /// A request this hive's configuration does not offer
    /// (`update_meta_inputs` in the nspawn profile, or with no
    /// `meta_flake`): the message names the profile or the key; the caller
    /// stops asking, or the operator changes the config. No row is queued.
    #[error("{0}")]
    NotOffered(String),
    /// An agent asked for an approval while holding the most pending ones
    /// one agent may (`agent_max_pending_approvals`): it waits until the
    /// operator decides one (or the manager cancels one), then asks again.
    /// Nothing was queued. (Issue 44: one agent's requests drowned the
    /// operator's queue.)
    #[error(
        "agent {agent} already has {cap} approval requests pending, the most one agent may \
         have (agent_max_pending_approvals); wait for the operator to approve or deny one \
         (or the manager to cancel one), then ask again"
    )]
    TooManyPending { agent: Ident, cap: usize },
    /// `inbox show` of an id the operator's inbox does not hold: check
    /// `hivectl inbox`.
    #[error(
        "message {0} is not in the operator's inbox; `hivectl inbox` lists them (handled \
         messages are deleted after the retention window)"
    )]
    UnknownMessage(i64),
    /// The agent images could not be read or pruned (the store, a
    /// settings file): the operator reads the reason, which names the path.
    #[error("{0}")]
    Images(DriverError),
}

impl From<JournalError> for HiveError {
    fn from(error: JournalError) -> Self {
        Self::Journal(error)
    }
}

/// A failed statement inside a service transaction is a store failure.
impl From<rusqlite::Error> for HiveError {
    fn from(error: rusqlite::Error) -> Self {
        Self::Store(error.into())
    }
}

/// The agenda's refusals by what the caller changes.
fn agenda_code(err: &AgendaError) -> ErrorCode {
    match err {
        AgendaError::UnknownQuestion(_)
        | AgendaError::UnknownReminder(_)
        | AgendaError::UnknownSchedule(_)
        | AgendaError::NotATarget { .. } => ErrorCode::UnknownItem,
        AgendaError::QuestionClosed { .. }
        | AgendaError::ReminderClosed { .. }
        | AgendaError::ScheduleEnded(_) => ErrorCode::ItemClosed,
        AgendaError::NotTheTarget { .. } | AgendaError::NotTheOwner { .. } => ErrorCode::Denied,
        AgendaError::UnknownTarget(_) => ErrorCode::UnknownAgent,
        AgendaError::BadAgentName(_) => ErrorCode::BadRequest,
        AgendaError::NoTargets | AgendaError::ZeroInterval | AgendaError::BadPath { .. } => {
            ErrorCode::InvalidItem
        }
        AgendaError::TooLong { .. } | AgendaError::TooMany { .. } => ErrorCode::LimitReached,
    }
}

/// A repo error by who fixes it.
fn repo_code(err: &crate::repos::RepoError) -> ErrorCode {
    use crate::repos::RepoError;
    match err {
        RepoError::Refused { .. } | RepoError::NoSuchCommit { .. } | RepoError::State(_) => {
            ErrorCode::ProposalRefused
        }
        RepoError::Git(_) | RepoError::Io { .. } => ErrorCode::Internal,
    }
}

fn summary(failures: &[(Ident, DriverError)]) -> String {
    failures
        .iter()
        .map(|(agent, err)| format!("{agent}: {err}"))
        .collect::<Vec<_>>()
        .join("; ")
}

impl HiveError {
    /// The error's stable code: what the caller does about it. Exhaustive,
    /// without `_ =>`: a new variant must choose its code here.
    pub fn code(&self) -> ErrorCode {
        match self {
            Self::UnknownAgent(_) => ErrorCode::UnknownAgent,
            Self::AlreadyManaged(_) => ErrorCode::AlreadyExists,
            Self::Denied(_) => ErrorCode::Denied,
            Self::HiveFull { .. } => ErrorCode::HiveFull,
            Self::ReservedName(_) => ErrorCode::ReservedName,
            Self::InboxFull(_) => ErrorCode::InboxFull,
            Self::Topology(_) => ErrorCode::TopologyRefused,
            Self::UnknownApproval(_) => ErrorCode::UnknownApproval,
            Self::ApprovalResolved { .. } => ErrorCode::ApprovalResolved,
            Self::ApprovalInProgress(_) => ErrorCode::ApprovalBusy,
            Self::ApprovalFailed { .. } => ErrorCode::ApprovalFailed,
            Self::Repo(e) => repo_code(e),
            Self::ConfigExists(_) => ErrorCode::AlreadyExists,
            Self::Driver {
                error: DriverError::NoDiskQuota { .. },
                ..
            } => ErrorCode::NoDiskQuota,
            Self::Driver { .. } | Self::Images(_) => ErrorCode::DriverFailed,
            Self::Partial(_) => ErrorCode::PartlyFailed,
            Self::NotRunning(_) => ErrorCode::NotRunning,
            Self::NoTurn(_) => ErrorCode::NoTurn,
            Self::StillRunning { .. } => ErrorCode::InProgress,
            Self::BadFilter(_) => ErrorCode::BadFilter,
            Self::NoContainerJournal(_) => ErrorCode::NoContainerJournal,
            Self::Journal(_) => ErrorCode::JournalFailed,
            Self::UnknownRecipient(_) => ErrorCode::UnknownRecipient,
            Self::BodyTooLarge { .. } => ErrorCode::BodyTooLarge,
            Self::BadHook(_) => ErrorCode::BadHook,
            Self::BadArgument(_) | Self::NotOffered(_) => ErrorCode::BadRequest,
            Self::EgressAllowed { .. } => ErrorCode::AlreadyAllowed,
            Self::TooManyPending { .. } => ErrorCode::TooManyPending,
            Self::UnknownMessage(_) => ErrorCode::UnknownItem,
            Self::Agenda(e) => agenda_code(e),
            Self::AgentSocket { .. } | Self::Io { .. } | Self::Internal(_) | Self::Store(_) => {
                ErrorCode::Internal
            }
        }
    }

    pub(crate) fn io(path: impl Into<PathBuf>, error: std::io::Error) -> Self {
        Self::Io {
            path: path.into(),
            error,
        }
    }

    pub(crate) fn refused(id: i64, refusal: Refusal) -> Self {
        match refusal {
            Refusal::AlreadyResolved(status) => Self::ApprovalResolved { id, status },
            Refusal::InProgress => Self::ApprovalInProgress(id),
        }
    }
}

#[cfg(test)]
#[path = "error_tests.rs"]
mod tests;
