//! The agenda's rules, without IO: when a reminder or a schedule is due,
//! which schedule targets and reminder file paths are acceptable, and the
//! size caps. Who may look at whose loose ends is the access policy's
//! ([`super::access::resolve_target`]).
//!
//! Decisions:
//! - **A missed window fires once.** A recurring schedule whose due time
//!   passed while the daemon was down fires once at the next tick and then
//!   jumps to the first due time after *now* ([`next_fire_after`]).
//!   Rejected: catching up every missed interval, which floods an inbox with
//!   identical prompts after a long outage.
//! - **File paths are checked lexically here and opened without following
//!   links by the service** (`service::reminders`): a lexical check alone
//!   cannot see a symlink planted by the agent, and an open alone would give
//!   poorer error messages.

use std::path::{Component, Path};

use super::OPERATOR;
use crate::wire::agenda::ReminderTiming;
pub use crate::wire::agenda::ScheduleEdit;
use crate::wire::ident::Ident;

/// Longest reminder message kept inline in the database and the inbox.
pub const REMINDER_INLINE_MAX: usize = 4 * 1024;
/// Longest reminder message written to a `file_path`.
pub const REMINDER_FILE_MAX: usize = 1024 * 1024;
/// Longest `file_path`, in bytes.
pub const FILE_PATH_MAX: usize = 255;
/// Most undelivered reminders one agent may have at a time.
pub const MAX_PENDING_REMINDERS: u64 = 1000;
/// Most open questions one agent may have asked at a time.
pub const MAX_OPEN_QUESTIONS: u64 = 100;
/// Longest question or answer text.
pub const QUESTION_MAX: usize = 16 * 1024;
/// The answerer of a question whose TTL ran out.
pub const TTL_WATCHDOG: &str = "ttl-watchdog";
/// The sender of a due reminder.
pub const REMINDER_SENDER: &str = "reminder";
/// The sender of a scheduled prompt.
pub const SCHEDULE_SENDER: &str = "schedule";
/// The `agent` value that asks for the whole hive (manager socket only).
pub const HIVE_WIDE: &str = "*";

/// Who is calling: an agent on its own socket, or the manager (by its
/// logical name) on the manager socket. The identity comes from the
/// socket, never the request: the server's socket registry builds one per
/// listener and hands it to every call made on that socket.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Caller {
    Agent(Ident),
    Manager(Ident),
}

impl Caller {
    /// The caller's name as a sender, owner or asker.
    pub fn name(&self) -> &Ident {
        match self {
            Self::Agent(name) | Self::Manager(name) => name,
        }
    }

    pub fn is_manager(&self) -> bool {
        matches!(self, Self::Manager(_))
    }
}

/// Who answers a question.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Answerer {
    /// An agent (or the manager, by its name) on its socket.
    Agent(Ident),
    /// The human operator on host.sock.
    Operator,
}

impl Answerer {
    pub fn name(&self) -> &str {
        match self {
            Self::Agent(name) => name.as_str(),
            Self::Operator => OPERATOR,
        }
    }
}

/// Whose loose ends or reminders a query covers.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Target {
    One(Ident),
    /// Every agent (manager socket, `"*"`).
    Hive,
}

/// What the agenda refuses; one variant per thing the caller must change.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum AgendaError {
    /// Check the id with `get_loose_ends` or `hivectl questions`.
    #[error("question {0} does not exist")]
    UnknownQuestion(i64),
    /// A question takes one answer; nothing to do.
    #[error("question {id} is already closed (answered by {by}); a question takes one answer")]
    QuestionClosed { id: i64, by: String },
    /// Only the question's target (or the operator) answers it.
    #[error(
        "question {id} was not asked of \"{caller}\"; only its target or the operator may answer it"
    )]
    NotTheTarget { id: i64, caller: String },
    /// Only the owner cancels a question or reminder.
    #[error("{kind} {id} belongs to another agent; only its owner may cancel it")]
    NotTheOwner { kind: &'static str, id: i64 },
    /// Check the id with `get_loose_ends`.
    #[error("reminder {0} does not exist")]
    UnknownReminder(i64),
    /// The reminder already left (delivered or cancelled); nothing to do.
    #[error("reminder {id} is already {state}")]
    ReminderClosed { id: i64, state: &'static str },
    /// Check the id with `list_schedules` or `hivectl schedules`.
    #[error("schedule {0} does not exist; see `hivectl schedules`")]
    UnknownSchedule(i64),
    /// A cancelled or finished schedule cannot fire or change.
    #[error("schedule {0} is cancelled or finished")]
    ScheduleEnded(i64),
    /// A target must be a managed agent or `operator`.
    #[error("schedule target {0:?} is neither a managed agent nor \"operator\"")]
    UnknownTarget(String),
    /// Check the schedule's targets with `list_schedules`.
    #[error("schedule {id} has no target {target:?}")]
    NotATarget { id: i64, target: String },
    /// Name a target (or cancel the schedule instead of removing its last).
    #[error("a schedule needs at least one target (an agent name or \"operator\")")]
    NoTargets,
    /// Give a positive interval, or none for a one-shot.
    #[error("interval_seconds must be at least 1; omit it for a one-shot schedule")]
    ZeroInterval,
    /// Shorten the text (or, for a reminder, pass `file_path`).
    #[error("{what} is {len} bytes; the limit is {max} bytes{hint}")]
    TooLong {
        what: &'static str,
        len: usize,
        max: usize,
        hint: &'static str,
    },
    /// Let some run out (or cancel them) before adding more.
    #[error(
        "{who} already has {max} {what}; cancel some with cancel_loose_end or let them run out"
    )]
    TooMany {
        who: String,
        what: &'static str,
        max: u64,
    },
    /// Give a relative path inside the agent's own state directory.
    #[error(
        "file_path {path:?} is refused: {why}; give a relative path inside your state directory"
    )]
    BadPath { path: String, why: &'static str },
    /// Give an agent's name (`[a-z0-9-]{1,63}`) or `"*"`.
    #[error("{0:?} is not a valid agent name")]
    BadAgentName(String),
}

/// Refuse `text` longer than `max` bytes.
pub fn check_len(
    what: &'static str,
    text: &str,
    max: usize,
    hint: &'static str,
) -> Result<(), AgendaError> {
    if text.len() > max {
        return Err(AgendaError::TooLong {
            what,
            len: text.len(),
            max,
            hint,
        });
    }
    Ok(())
}

/// When a reminder requested at `now` is due.
pub fn reminder_due(timing: &ReminderTiming, now: i64) -> i64 {
    match *timing {
        ReminderTiming::InSeconds { seconds } => {
            now.saturating_add(i64::try_from(seconds).unwrap_or(i64::MAX))
        }
        ReminderTiming::At { unix_timestamp } => unix_timestamp,
    }
}

/// A schedule that was due at `due` fired at `now`: its next due time, or
/// `None` for a one-shot. The first slot `due + k·interval` (k ≥ 1) after
/// `now`, so a missed window fires once, not once per missed interval.
pub fn next_fire_after(due: i64, interval: Option<u64>, now: i64) -> Option<i64> {
    let step = i64::try_from(interval?).ok().filter(|s| *s > 0)?;
    if now < due {
        return Some(due.saturating_add(step));
    }
    let missed = (now - due) / step + 1;
    Some(due.saturating_add(missed.saturating_mul(step)))
}

/// A schedule target: a managed agent or the operator.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum ScheduleTarget {
    Operator,
    Agent(Ident),
}

impl ScheduleTarget {
    /// Parse a target's name (validity only; managed-ness is the caller's).
    pub fn parse(value: &str) -> Result<Self, AgendaError> {
        if value == OPERATOR {
            return Ok(Self::Operator);
        }
        Ident::new(value)
            .map(Self::Agent)
            .map_err(|_| AgendaError::UnknownTarget(value.to_owned()))
    }

    pub fn as_str(&self) -> &str {
        match self {
            Self::Operator => OPERATOR,
            Self::Agent(name) => name.as_str(),
        }
    }
}

/// The lexical check of a reminder's `file_path`: relative, no `..`, no
/// empty or over-long path. Returns the path's normal components.
pub fn check_relative_path(path: &str) -> Result<Vec<&str>, AgendaError> {
    let bad = |why| AgendaError::BadPath {
        path: path.to_owned(),
        why,
    };
    if path.is_empty() {
        return Err(bad("it is empty"));
    }
    if path.len() > FILE_PATH_MAX {
        return Err(bad("it is longer than 255 bytes"));
    }
    if path.contains('\0') {
        return Err(bad("it contains a NUL byte"));
    }
    let mut parts = Vec::new();
    for component in Path::new(path).components() {
        match component {
            Component::Normal(part) => match part.to_str() {
                Some(p) => parts.push(p),
                None => return Err(bad("it is not UTF-8")),
            },
            Component::CurDir => {}
            Component::ParentDir => return Err(bad("it contains \"..\"")),
            Component::RootDir | Component::Prefix(_) => return Err(bad("it is absolute")),
        }
    }
    if parts.is_empty() {
        return Err(bad("it names no file"));
    }
    Ok(parts)
}

/// Seconds since `at`, saturating at zero when the clock went backwards.
pub fn age(at: i64, now: i64) -> u64 {
    u64::try_from(now.saturating_sub(at)).unwrap_or(0)
}

#[cfg(test)]
#[path = "agenda_tests.rs"]
mod tests;
