//! Journal wire types shared by the agent socket (`get_host_journal`) and the
//! journal reader: serde only, no IO.
//!
//! [`JournalPriority`] is a closed enum rather than a free string, so the
//! value that reaches `journalctl --priority=` is always one of eight fixed
//! words. Rejected: passing the requester's string through and letting
//! journalctl refuse it, which would also let `0..7` ranges and typos reach
//! the command line.

use serde::{Deserialize, Serialize};

/// A syslog priority, written on the wire as journalctl's lowercase names.
/// As a filter it selects this level and everything more severe.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
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
    /// Every level, most severe first (the index is the syslog number).
    pub const ALL: [Self; 8] = [
        Self::Emerg,
        Self::Alert,
        Self::Crit,
        Self::Err,
        Self::Warning,
        Self::Notice,
        Self::Info,
        Self::Debug,
    ];

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

    /// The syslog number the journal stores in `PRIORITY=` (0 = emerg).
    pub fn number(self) -> u8 {
        match self {
            Self::Emerg => 0,
            Self::Alert => 1,
            Self::Crit => 2,
            Self::Err => 3,
            Self::Warning => 4,
            Self::Notice => 5,
            Self::Info => 6,
            Self::Debug => 7,
        }
    }

    /// The level stored as `PRIORITY=<number>`, if the number is a level.
    pub fn from_number(number: u8) -> Option<Self> {
        Self::ALL.get(usize::from(number)).copied()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn priorities_are_written_as_journalctls_lowercase_names() {
        let names: Vec<String> = JournalPriority::ALL
            .iter()
            .map(|p| serde_json::to_string(p).unwrap())
            .collect();
        assert_eq!(
            names,
            [
                "\"emerg\"",
                "\"alert\"",
                "\"crit\"",
                "\"err\"",
                "\"warning\"",
                "\"notice\"",
                "\"info\"",
                "\"debug\""
            ]
        );
        for p in JournalPriority::ALL {
            assert_eq!(
                serde_json::to_string(&p).unwrap(),
                format!("\"{}\"", p.as_str())
            );
        }
    }

    #[test]
    fn a_priority_name_journalctl_does_not_know_is_refused_on_the_wire() {
        for bad in ["\"error\"", "\"ERR\"", "\"3\"", "3", "\"0..7\""] {
            assert!(
                serde_json::from_str::<JournalPriority>(bad).is_err(),
                "{bad}"
            );
        }
    }

    #[test]
    fn syslog_numbers_round_trip_and_eight_is_not_a_level() {
        for p in JournalPriority::ALL {
            assert_eq!(JournalPriority::from_number(p.number()), Some(p));
        }
        assert_eq!(JournalPriority::from_number(8), None);
        assert!(
            JournalPriority::Err < JournalPriority::Info,
            "more severe sorts first"
        );
    }
}
