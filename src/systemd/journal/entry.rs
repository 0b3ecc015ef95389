//! Parsing `journalctl --output=json`: one JSON object per line.
//!
//! The trap: journalctl writes a field whose bytes are not printable UTF-8
//! as an **array of byte numbers** (`"MESSAGE":[98,105,110,1]`), a field set
//! more than once as an **array of values**, and a field over 4096 bytes as
//! `null`. Every field is therefore a [`FieldValue`], decoded lossily only at
//! the end. Rejected: `String` fields, which make one binary log line fail
//! the whole read.
//!
//! A line that does not parse is skipped and counted, never fatal: the last
//! line of a killed or capped journalctl is usually cut short, and one odd
//! line should not hide the rest of the journal.

use serde::Deserialize;

use super::JournalPriority;
pub use crate::wire::journal::JournalEntry;

/// One field's value as journalctl writes it in JSON.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(untagged)]
pub enum FieldValue {
    /// Printable UTF-8.
    Text(String),
    /// Anything else, as raw bytes.
    Bytes(Vec<u8>),
    /// The field appeared more than once in the entry.
    Many(Vec<FieldValue>),
    /// A value over 4096 bytes, which journalctl leaves out (`null`) unless
    /// run with `--all`.
    Omitted,
}

impl FieldValue {
    /// The value as text: invalid UTF-8 becomes U+FFFD; of several values,
    /// the last one (as `journalctl -o short` shows it).
    pub fn to_text_lossy(&self) -> String {
        match self {
            Self::Text(text) => text.clone(),
            Self::Bytes(bytes) => String::from_utf8_lossy(bytes).into_owned(),
            Self::Many(values) => values.last().map(Self::to_text_lossy).unwrap_or_default(),
            Self::Omitted => String::new(),
        }
    }
}

/// The fields hive-c0re reads; journalctl writes many more, ignored here.
/// A top-level `null` (an over-long field) deserializes as `None`.
#[derive(Debug, Deserialize)]
struct RawEntry {
    #[serde(rename = "__REALTIME_TIMESTAMP")]
    realtime: Option<FieldValue>,
    #[serde(rename = "__CURSOR")]
    cursor: Option<FieldValue>,
    #[serde(rename = "PRIORITY")]
    priority: Option<FieldValue>,
    #[serde(rename = "_SYSTEMD_UNIT")]
    systemd_unit: Option<FieldValue>,
    #[serde(rename = "UNIT")]
    unit: Option<FieldValue>,
    #[serde(rename = "SYSLOG_IDENTIFIER")]
    syslog_identifier: Option<FieldValue>,
    #[serde(rename = "_COMM")]
    comm: Option<FieldValue>,
    #[serde(rename = "_PID")]
    pid: Option<FieldValue>,
    #[serde(rename = "SYSLOG_PID")]
    syslog_pid: Option<FieldValue>,
    #[serde(rename = "_HOSTNAME")]
    hostname: Option<FieldValue>,
    #[serde(rename = "_MACHINE_ID")]
    machine_id: Option<FieldValue>,
    #[serde(rename = "MESSAGE")]
    message: Option<FieldValue>,
}

impl JournalEntry {
    /// Parse one line of `journalctl --output=json`.
    pub fn from_json_line(line: &[u8]) -> Result<Self, serde_json::Error> {
        let raw: RawEntry = serde_json::from_slice(line)?;
        let text = |v: Option<FieldValue>| v.map(|v| v.to_text_lossy());
        let priority = text(raw.priority)
            .and_then(|p| p.trim().parse::<u8>().ok())
            .and_then(priority_from_syslog);
        Ok(Self {
            time_us: text(raw.realtime).and_then(|t| t.trim().parse().ok()),
            priority,
            unit: text(raw.systemd_unit).or_else(|| text(raw.unit)),
            identifier: text(raw.syslog_identifier).or_else(|| text(raw.comm)),
            pid: text(raw.pid).or_else(|| text(raw.syslog_pid)),
            hostname: text(raw.hostname),
            machine_id: text(raw.machine_id),
            message: text(raw.message).unwrap_or_default(),
            cursor: text(raw.cursor),
        })
    }
}

/// The level stored as `PRIORITY=<0..7>` (0 = emerg); other numbers are
/// not levels.
pub fn priority_from_syslog(number: u8) -> Option<JournalPriority> {
    const BY_NUMBER: [JournalPriority; 8] = [
        JournalPriority::Emerg,
        JournalPriority::Alert,
        JournalPriority::Crit,
        JournalPriority::Err,
        JournalPriority::Warning,
        JournalPriority::Notice,
        JournalPriority::Info,
        JournalPriority::Debug,
    ];
    BY_NUMBER.get(usize::from(number)).copied()
}

/// Entries parsed from a whole output, and how many lines were skipped.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub struct Parsed {
    pub entries: Vec<JournalEntry>,
    /// Lines that were not a JSON entry (typically a truncated last line).
    pub skipped: usize,
}

/// Parse everything journalctl wrote, one entry per non-empty line.
pub fn parse_output(output: &[u8]) -> Parsed {
    let mut parsed = Parsed::default();
    for line in output.split(|&b| b == b'\n') {
        if line.iter().all(u8::is_ascii_whitespace) {
            continue;
        }
        match JournalEntry::from_json_line(line) {
            Ok(entry) => parsed.entries.push(entry),
            Err(_) => parsed.skipped += 1,
        }
    }
    parsed
}

#[cfg(test)]
#[path = "entry_tests.rs"]
mod tests;
