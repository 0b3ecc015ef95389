//! A journal entry as every socket carries it, and entries as text, for the `Logs { content }` and `HostJournal { content }`
//! answers: one line per entry in the shape of `journalctl -o short-iso`
//! (`2026-11-30T12:50:00Z hive1 hive-c0re[812]: agent started`).
//!
//! Decisions: times are UTC with a `Z`, because the reader (an agent or an
//! operator elsewhere) does not share the host's time zone; control
//! characters in a message become U+FFFD so a log line cannot move the
//! reader's cursor or forge another line; a multi-line message continues on
//! indented lines, as journalctl does. Rejected: running journalctl a second
//! time with `-o short`, which doubles the cost and still prints binary
//! messages as `[17B blob data]`.

use std::fmt::Write as _;

use serde::{Deserialize, Serialize};

use super::agenda::JournalPriority;

/// `get_host_journal`: lines when the request names none.
pub const HOST_JOURNAL_DEFAULT_LINES: u32 = 30;
/// `get_host_journal`: the most lines one request returns. Larger requests
/// are clamped to this (the newest lines), not refused: the requester wanted
/// the recent end of the journal and gets it.
pub const HOST_JOURNAL_MAX_LINES: u32 = 100;
/// `get_logs`: lines when the request names none.
pub const AGENT_LOGS_DEFAULT_LINES: u32 = 30;
/// `get_logs`: the most lines one request returns (clamped like the host
/// journal's; the manager is trusted with more).
pub const AGENT_LOGS_MAX_LINES: u32 = 1000;

/// One journal entry, reduced to what the log views show.
#[derive(Debug, Clone, PartialEq, Eq, Default, Serialize, Deserialize)]
pub struct JournalEntry {
    /// Wall-clock time in microseconds since the Unix epoch.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub time_us: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub priority: Option<JournalPriority>,
    /// `_SYSTEMD_UNIT`, or `UNIT` (systemd's own messages about a unit).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub unit: Option<String>,
    /// `SYSLOG_IDENTIFIER`, or the process name `_COMM`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub identifier: Option<String>,
    /// `_PID`, or `SYSLOG_PID`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub pid: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hostname: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub machine_id: Option<String>,
    /// `MESSAGE`, decoded lossily; empty when absent or over-long.
    #[serde(default)]
    pub message: String,
    /// Where a later read can resume (`--after-cursor=`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cursor: Option<String>,
}

/// One line (or one line plus indented continuations) per entry, each
/// ending in `\n`.
pub fn render_short(entries: &[JournalEntry]) -> String {
    let mut out = String::new();
    for entry in entries {
        render_entry(entry, &mut out);
    }
    out
}

/// One entry as [`render_short`] writes it (with its trailing `\n`): for
/// streaming a follow line by line.
pub fn render_line(entry: &JournalEntry) -> String {
    let mut out = String::new();
    render_entry(entry, &mut out);
    out
}

fn render_entry(entry: &JournalEntry, out: &mut String) {
    let start = out.len();
    match entry.time_us {
        Some(us) => out.push_str(&utc_timestamp(us)),
        None => out.push('-'),
    }
    if let Some(host) = &entry.hostname {
        out.push(' ');
        push_clean(out, host);
    }
    out.push(' ');
    let name = entry
        .identifier
        .as_deref()
        .or(entry.unit.as_deref())
        .unwrap_or("unknown");
    push_clean(out, name);
    if let Some(pid) = &entry.pid {
        out.push('[');
        push_clean(out, pid);
        out.push(']');
    }
    out.push_str(": ");
    let indent = out.len() - start;
    for (i, line) in entry.message.split('\n').enumerate() {
        if i > 0 {
            out.push('\n');
            out.extend(std::iter::repeat_n(' ', indent));
        }
        push_clean(out, line);
    }
    out.push('\n');
}

/// Append `text` with every control character (including a lone `\r`)
/// replaced by U+FFFD; tabs are kept.
fn push_clean(out: &mut String, text: &str) {
    out.extend(text.chars().map(|c| {
        if c.is_control() && c != '\t' {
            '\u{fffd}'
        } else {
            c
        }
    }));
}

/// `YYYY-MM-DDTHH:MM:SSZ` for microseconds since the epoch.
pub fn utc_timestamp(micros: u64) -> String {
    let secs = micros / 1_000_000;
    let days = secs / 86_400;
    let rem = secs % 86_400;
    let (year, month, day) = civil_from_days(days);
    let mut text = String::with_capacity(20);
    let _ = write!(
        text,
        "{year:04}-{month:02}-{day:02}T{:02}:{:02}:{:02}Z",
        rem / 3600,
        rem % 3600 / 60,
        rem % 60
    );
    text
}

/// The proleptic Gregorian date of a day count since 1970-01-01 (Howard
/// Hinnant's `civil_from_days`, for non-negative days).
fn civil_from_days(days: u64) -> (u64, u64, u64) {
    let z = days + 719_468;
    let era = z / 146_097;
    let doe = z % 146_097;
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = doy - (153 * mp + 2) / 5 + 1;
    let month = if mp < 10 { mp + 3 } else { mp - 9 };
    let year = yoe + era * 400 + u64::from(month <= 2);
    (year, month, day)
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
