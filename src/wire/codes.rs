//! Error codes: what a refusal means to a program, beside the words it
//! shows a person.
//!
//! Every error answer of every door carries a stable snake_case [`ErrorCode`]
//! (host.sock's `code`, an agent socket's `err` answer's `code`, the
//! dashboard's HTTP status, hivectl's exit status, a tool result of
//! `hive-agent`). The daemon picks the code with one exhaustive match over
//! its errors (`service::HiveError::code`); each code then decides, here,
//! the HTTP status and hivectl's exit status. Clients act on the code, never
//! on the message, whose words may change.
//!
//! Decisions:
//! - **One code per reaction, not per cause**: `internal` covers a failed
//!   database, a file the hive could not write and a bug alike, because the
//!   caller's reaction is the same (retry later; the operator reads the
//!   daemon's log). Codes that need different reactions stay apart even
//!   when they look alike: `inbox_full` (wait, then send again) is not
//!   `unknown_recipient` (fix the name).
//! - **Additive on the wire**: the field is optional and omitted on
//!   success; a client that does not know a code reads it as
//!   [`ErrorCode::Unknown`] and falls back on the message.

use serde::{Deserialize, Serialize};

/// hivectl's exit statuses: part of the contract scripts rely on.
pub mod exit {
    /// Done.
    pub const OK: u8 = 0;
    /// hive-c0re refused the request (fix it, or ask for a grant), an
    /// action it ran failed, an agent ended failed, or a local file could
    /// not be written.
    pub const REFUSED: u8 = 1;
    /// Bad command line (clap exits with this itself).
    pub const USAGE: u8 = 2;
    /// hive-c0re could not be reached or did not answer properly.
    pub const UNREACHABLE: u8 = 3;
    /// Accepted and still in progress when hivectl stopped waiting
    /// (`--no-block`, the wait limit, or the daemon's answer budget): not a
    /// failure; the roster shows the outcome.
    pub const IN_PROGRESS: u8 = 4;
    /// Not now: a budget of someone else's is spent or the same thing is
    /// being done right now; the same request may succeed later.
    pub const RETRY_LATER: u8 = 5;
    /// hive-c0re itself failed (its database, its files, a bug): the
    /// operator reads `journalctl -u hive-c0re`.
    pub const HIVE_FAILED: u8 = 6;

    /// Every status and what it means to a person, in order: hivectl's
    /// `--help` and its manual page's EXIT STATUS are written from it.
    pub const MEANINGS: [(u8, &str); 7] = [
        (OK, "done"),
        (
            REFUSED,
            "refused by hive-c0re (its reason on stderr), or an agent ended failed",
        ),
        (USAGE, "usage error; nothing was sent"),
        (
            UNREACHABLE,
            "hive-c0re could not be reached or did not answer properly (stderr says what to do)",
        ),
        (
            IN_PROGRESS,
            "accepted and still in progress when hivectl stopped waiting (--no-block, or the \
             wait limit); hivectl status shows the outcome",
        ),
        (
            RETRY_LATER,
            "not now (a full inbox, an approval being approved, a socket at its cap); try \
             again later",
        ),
        (
            HIVE_FAILED,
            "hive-c0re itself failed (its database or files); journalctl -u hive-c0re says why",
        ),
    ];
}

/// What an error answer means to the caller. See the module docs.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ErrorCode {
    /// The request itself is malformed: not JSON, an unknown `cmd`, a field
    /// of the wrong type, a value out of range. Fix the request.
    BadRequest,
    /// No agent of that name is managed here. Check the name (`list`).
    UnknownAgent,
    /// The name is taken (an agent, or its config). Choose another.
    AlreadyExists,
    /// A name a new agent may not take: one the wire gives a meaning of its
    /// own (`operator`, ...), or one that starts or ends with `-`.
    ReservedName,
    /// The hive holds `max_agents`: destroy one or raise the limit.
    HiveFull,
    /// The access policy refuses this caller: ask for a grant, or have the
    /// manager or the operator do it.
    Denied,
    /// A topology move the rules refuse (a cycle, the manager moved).
    TopologyRefused,
    /// No approval has this id.
    UnknownApproval,
    /// The approval already ended (approved, denied, failed, cancelled).
    ApprovalResolved,
    /// Another approve runs this approval's action right now: look again
    /// in a moment.
    ApprovalBusy,
    /// The approval's action ran and failed; the row is `failed` and the
    /// message says why.
    ApprovalFailed,
    /// A config proposal was refused before anything was fetched: the
    /// commit is not in the proposed repo, the repo borrows objects from
    /// elsewhere (alternates, a `.git` file), or the agent has no config
    /// repo. Fix the repo (or the sha) and ask again; no row was queued.
    ProposalRefused,
    /// systemd refused or failed a container's job; the message (and
    /// `journalctl -u <unit>`) says why.
    DriverFailed,
    /// The agent was not started: `agent_disk_quota_required` is set and
    /// its state cannot be held to its disk quota (no project quota on
    /// the file system, or the quota could not be set). The operator
    /// fixes the host or drops the requirement; retrying changes nothing.
    NoDiskQuota,
    /// Several agents of a scope failed; the others were done.
    PartlyFailed,
    /// A signal for a container that is not running: start it first.
    NotRunning,
    /// `interrupt` for an agent with no turn in progress: nothing to
    /// interrupt (send the note as a message instead).
    NoTurn,
    /// Accepted; the work goes on past the answer budget. Watch the roster.
    InProgress,
    /// A journal filter (unit, since, lines, ...) is not acceptable.
    BadFilter,
    /// The agent has no container journal to read (the fake driver).
    NoContainerJournal,
    /// journalctl failed or timed out; its words are in the message.
    JournalFailed,
    /// `send` to a name nobody answers to: fix the recipient.
    UnknownRecipient,
    /// The recipient's inbox is at its cap: send again once it reads.
    InboxFull,
    /// A message body over the hive's cap: shorten it.
    BodyTooLarge,
    /// A hook payload the intake refuses.
    BadHook,
    /// A question, reminder, loose end, schedule or operator's inbox
    /// message id that does not exist (or is not the caller's to see).
    UnknownItem,
    /// The question, reminder or schedule already ended.
    ItemClosed,
    /// An agenda request whose values the rules refuse (an empty target
    /// list, a zero interval, a path outside the agent's space).
    InvalidItem,
    /// Too many open items of one kind, or a text too long: close some or
    /// shorten it.
    LimitReached,
    /// The agent holds the most pending approval requests one agent may
    /// (`agent_max_pending_approvals`): wait until the operator decides
    /// one, then ask again. Not [`ErrorCode::LimitReached`]: nothing the
    /// caller can close or shorten frees a slot; the operator's decision
    /// does.
    TooManyPending,
    /// The socket is at its connection cap: close one of yours, connect
    /// again later.
    TooManyConnections,
    /// `request_egress` for a host already on the agent's allow-list:
    /// nothing to ask; use it.
    AlreadyAllowed,
    /// No complete request came in time; the connection is closed.
    /// Reconnect and send the request at once.
    IdleClosed,
    /// hive-c0re itself failed: its database, a file it keeps, an agent's
    /// socket, or a bug. Retry later; the operator reads the daemon's log.
    Internal,
    /// A code this client does not know (a newer daemon): read the message.
    #[serde(other)]
    Unknown,
}

impl ErrorCode {
    /// Every code the daemon sends (not [`ErrorCode::Unknown`]), in the
    /// order of the table in docs/src/errors.md.
    pub const ALL: [ErrorCode; 34] = [
        Self::BadRequest,
        Self::UnknownAgent,
        Self::AlreadyExists,
        Self::ReservedName,
        Self::HiveFull,
        Self::Denied,
        Self::TopologyRefused,
        Self::UnknownApproval,
        Self::ApprovalResolved,
        Self::ApprovalBusy,
        Self::ApprovalFailed,
        Self::ProposalRefused,
        Self::DriverFailed,
        Self::NoDiskQuota,
        Self::PartlyFailed,
        Self::NotRunning,
        Self::NoTurn,
        Self::InProgress,
        Self::BadFilter,
        Self::NoContainerJournal,
        Self::JournalFailed,
        Self::UnknownRecipient,
        Self::InboxFull,
        Self::BodyTooLarge,
        Self::BadHook,
        Self::UnknownItem,
        Self::ItemClosed,
        Self::InvalidItem,
        Self::LimitReached,
        Self::TooManyPending,
        Self::TooManyConnections,
        Self::AlreadyAllowed,
        Self::IdleClosed,
        Self::Internal,
    ];

    /// The code as it is on the wire.
    pub fn as_str(self) -> &'static str {
        match self {
            Self::BadRequest => "bad_request",
            Self::UnknownAgent => "unknown_agent",
            Self::AlreadyExists => "already_exists",
            Self::ReservedName => "reserved_name",
            Self::HiveFull => "hive_full",
            Self::Denied => "denied",
            Self::TopologyRefused => "topology_refused",
            Self::UnknownApproval => "unknown_approval",
            Self::ApprovalResolved => "approval_resolved",
            Self::ApprovalBusy => "approval_busy",
            Self::ApprovalFailed => "approval_failed",
            Self::ProposalRefused => "proposal_refused",
            Self::DriverFailed => "driver_failed",
            Self::NoDiskQuota => "no_disk_quota",
            Self::PartlyFailed => "partly_failed",
            Self::NotRunning => "not_running",
            Self::NoTurn => "no_turn",
            Self::InProgress => "in_progress",
            Self::BadFilter => "bad_filter",
            Self::NoContainerJournal => "no_container_journal",
            Self::JournalFailed => "journal_failed",
            Self::UnknownRecipient => "unknown_recipient",
            Self::InboxFull => "inbox_full",
            Self::BodyTooLarge => "body_too_large",
            Self::BadHook => "bad_hook",
            Self::UnknownItem => "unknown_item",
            Self::ItemClosed => "item_closed",
            Self::InvalidItem => "invalid_item",
            Self::LimitReached => "limit_reached",
            Self::TooManyPending => "too_many_pending",
            Self::TooManyConnections => "too_many_connections",
            Self::AlreadyAllowed => "already_allowed",
            Self::IdleClosed => "idle_closed",
            Self::Internal => "internal",
            Self::Unknown => "unknown",
        }
    }

    /// The dashboard's HTTP status for a refusal with this code.
    pub fn http_status(self) -> u16 {
        match self {
            Self::BadRequest
            | Self::ReservedName
            | Self::BadFilter
            | Self::BadHook
            | Self::InvalidItem => 400,
            Self::ProposalRefused => 422,
            Self::Denied => 403,
            Self::UnknownAgent
            | Self::UnknownApproval
            | Self::NoContainerJournal
            | Self::UnknownRecipient
            | Self::UnknownItem => 404,
            Self::AlreadyExists
            | Self::HiveFull
            | Self::TopologyRefused
            | Self::ApprovalResolved
            | Self::ApprovalBusy
            | Self::NotRunning
            | Self::NoTurn
            | Self::ItemClosed
            | Self::AlreadyAllowed => 409,
            Self::IdleClosed => 408,
            Self::BodyTooLarge => 413,
            Self::InboxFull | Self::LimitReached | Self::TooManyPending => 429,
            // Accepted, not done: the page says so and the roster follows.
            Self::InProgress => 202,
            // Something outside the daemon (systemd, journalctl, an
            // approval's command) failed.
            Self::ApprovalFailed
            | Self::DriverFailed
            | Self::PartlyFailed
            | Self::JournalFailed => 502,
            // The host cannot do what the operator required of it.
            Self::TooManyConnections | Self::NoDiskQuota => 503,
            Self::Internal | Self::Unknown => 500,
        }
    }

    /// What the caller does about it: one exhaustive match, from which
    /// hivectl's exit status and the advice to a model follow.
    pub fn reaction(self) -> Reaction {
        match self {
            Self::InProgress => Reaction::Wait,
            Self::InboxFull
            | Self::ApprovalBusy
            | Self::TooManyConnections
            | Self::TooManyPending => Reaction::RetryLater,
            Self::Internal | Self::Unknown => Reaction::HiveFailed,
            Self::Denied => Reaction::AskPermission,
            Self::IdleClosed => Reaction::Reconnect,
            Self::BadRequest
            | Self::UnknownAgent
            | Self::AlreadyExists
            | Self::ReservedName
            | Self::HiveFull
            | Self::TopologyRefused
            | Self::UnknownApproval
            | Self::ApprovalResolved
            | Self::ApprovalFailed
            | Self::ProposalRefused
            | Self::DriverFailed
            | Self::NoDiskQuota
            | Self::PartlyFailed
            | Self::NotRunning
            | Self::NoTurn
            | Self::BadFilter
            | Self::NoContainerJournal
            | Self::JournalFailed
            | Self::UnknownRecipient
            | Self::BodyTooLarge
            | Self::BadHook
            | Self::UnknownItem
            | Self::ItemClosed
            | Self::InvalidItem
            | Self::LimitReached
            | Self::AlreadyAllowed => Reaction::ChangeRequest,
        }
    }

    /// hivectl's exit status for a refusal with this code ([`exit`]).
    pub fn exit_status(self) -> u8 {
        match self.reaction() {
            Reaction::Wait => exit::IN_PROGRESS,
            Reaction::RetryLater => exit::RETRY_LATER,
            // A code this hivectl does not know is read as a refusal: the
            // message says more.
            Reaction::HiveFailed if self == Self::Unknown => exit::REFUSED,
            Reaction::HiveFailed => exit::HIVE_FAILED,
            Reaction::AskPermission | Reaction::Reconnect | Reaction::ChangeRequest => {
                exit::REFUSED
            }
        }
    }

    /// The hive failed, not the request: worth an error in the daemon's
    /// log (a refusal of a request is the caller's business).
    pub fn is_hive_failure(self) -> bool {
        matches!(self, Self::Internal)
    }

    /// What an agent (or the model behind it) does about it, in a few
    /// words: appended to a tool result so Claude can react to the code.
    pub fn advice(self) -> &'static str {
        match self.reaction() {
            Reaction::Wait => "accepted; it is still going on",
            Reaction::RetryLater => "retry later",
            Reaction::HiveFailed => "the hive failed; retry later or tell the operator",
            Reaction::AskPermission => "not allowed: ask the manager or the operator",
            Reaction::Reconnect => "reconnect and send the request at once",
            Reaction::ChangeRequest => "change the request",
        }
    }
}

/// What a caller does about an error code.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Reaction {
    /// Fix the request: a name, a value, a state to reach first.
    ChangeRequest,
    /// Ask for a grant, or have the manager or the operator do it.
    AskPermission,
    /// The same request may succeed later.
    RetryLater,
    /// Accepted and still going on: watch for the outcome.
    Wait,
    /// Connect again and send at once.
    Reconnect,
    /// hive-c0re itself failed.
    HiveFailed,
}

impl std::fmt::Display for ErrorCode {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(self.as_str())
    }
}

#[cfg(test)]
#[path = "codes_tests.rs"]
mod tests;
