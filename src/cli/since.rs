//! `hivectl usage --since`: a window back from now (`24h`, `7d`, `90m`,
//! `30s`) or from a UTC date's start (`2026-12-01`).

use crate::clock::{parse_rfc3339, rfc3339};

/// A `--since` value: a span back from now, or a UTC day's start.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Since {
    Ago(u64),
    /// Unix seconds of a `YYYY-MM-DD` 00:00 UTC.
    Date(i64),
}

impl Since {
    /// Seconds back from `now` (unix seconds); a date in the future is 0.
    pub fn seconds_before(self, now: i64) -> u64 {
        match self {
            Self::Ago(s) => s,
            Self::Date(at) => u64::try_from(now.saturating_sub(at)).unwrap_or(0),
        }
    }
}

/// `24h`, `7d`, `90m`, `30s` or `2026-12-01`.
pub fn parse_since(text: &str) -> Result<Since, String> {
    let wrong = || format!("{text:?} is not a window: give e.g. 24h, 7d, 90m or a date 2026-12-01");
    if text.len() == 10 && text.as_bytes()[4] == b'-' {
        let midnight = format!("{text}T00:00:00Z");
        // Round-tripped, so 2026-02-30 is refused rather than read as March.
        return parse_rfc3339(&midnight)
            .filter(|at| rfc3339(*at) == midnight)
            .map(Since::Date)
            .ok_or_else(wrong);
    }
    span_seconds(text).map(Since::Ago).ok_or_else(wrong)
}

/// `30s`, `90m`, `24h`, `7d` in seconds (also `grant --for`); `None` for
/// anything else. The one span parser, shared with budgets' windows.
pub use crate::wire::spend::span_seconds;

#[cfg(test)]
#[path = "since_tests.rs"]
mod tests;
