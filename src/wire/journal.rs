//! `JournalPriority`, the `priority` filter of `get_host_journal`: serde
//! only, no IO.
//!
//! A closed enum rather than a free string, so the value that reaches
//! `journalctl --priority=` is always one of eight fixed words. Rejected:
//! passing the requester's string through, which would also let ranges
//! (`0..7`) and typos reach the command line.
//!
//! Merge note: main defines the same type in `wire::agenda` (with the agent
//! socket's types). When this branch is merged, delete this file and point
//! the one re-export in `systemd::journal` at `wire::agenda::JournalPriority`.

use serde::{Deserialize, Serialize};

/// A syslog priority, written on the wire as journalctl's lowercase names.
/// As a filter it selects this level and everything more severe.
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
    /// The name journalctl's `--priority=` accepts (and the wire name).
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
