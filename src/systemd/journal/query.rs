//! What to read from the journal, validated, and the journalctl argv for it.
//!
//! Every filter is a validated newtype and becomes exactly **one** argv
//! element of the `--option=value` form. getopt_long never reads the text
//! after `=` as an option, so a grep of `--output=json` or a `since` of
//! `-1h` stays a value (checked against journalctl 252 in
//! `tests/journal_real.rs`). The character rules on top are defence in depth
//! and give the requester an error naming the filter instead of a journalctl
//! message. Rejected alternative: `--grep VALUE` as two elements. It is
//! safe only while getopt takes a required argument's next element verbatim;
//! for options whose argument is optional (`--lines[=N]`, `--boot[=ID]`)
//! journalctl peeks at the next element with its own heuristics, and a
//! value it declines becomes a positional match. One form for every option
//! needs no such knowledge. A shell is never involved.
//!
//! Machines are named only by an [`Ident`]: the argv gets `--machine=h-<n>`,
//! so a machine filter cannot point at anything but a hive container.

use std::ffi::OsString;
use std::path::{Path, PathBuf};

use super::JournalPriority;
use crate::containers::machine_name;
use crate::wire::agenda::HostJournalFilters;
use crate::wire::ident::Ident;

pub use crate::wire::journal::{
    AGENT_LOGS_DEFAULT_LINES, AGENT_LOGS_MAX_LINES, HOST_JOURNAL_DEFAULT_LINES,
    HOST_JOURNAL_MAX_LINES,
};

const MAX_UNIT_LEN: usize = 256;
const MAX_GREP_LEN: usize = 512;
const MAX_TIME_LEN: usize = 64;

/// A filter value that was refused before journalctl ran. The requester
/// sent it: report the message back to them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid journal filter {filter} {value:?}: {rule}")]
pub struct InvalidFilter {
    /// The filter's wire name (`unit`, `grep`, `since`, ...).
    pub filter: &'static str,
    /// The refused value, truncated to keep the message short.
    pub value: String,
    /// What a valid value looks like.
    pub rule: &'static str,
}

impl InvalidFilter {
    fn new(filter: &'static str, value: &str, rule: &'static str) -> Self {
        Self {
            filter,
            value: value.chars().take(80).collect(),
            rule,
        }
    }
}

/// A unit name or glob for `--unit=`: systemd's unit-name characters plus
/// the glob characters journalctl accepts; no leading `-`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitFilter(String);

impl UnitFilter {
    pub fn new(value: &str) -> Result<Self, InvalidFilter> {
        const RULE: &str = "use 1-256 characters of A-Z a-z 0-9 : _ . @ \\ - and the globs * ? [ ], \
                            not starting with '-'";
        let ok = !value.is_empty()
            && value.len() <= MAX_UNIT_LEN
            && !value.starts_with('-')
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b":_.@\\-*?[]".contains(&b));
        if ok {
            Ok(Self(value.to_owned()))
        } else {
            Err(InvalidFilter::new("unit", value, RULE))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A regular expression for `--grep=` (PCRE2, matched against MESSAGE).
/// Any text but control characters; journalctl itself reports a bad pattern.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct GrepPattern(String);

impl GrepPattern {
    pub fn new(value: &str) -> Result<Self, InvalidFilter> {
        const RULE: &str = "use 1-512 characters without control characters";
        let ok = !value.is_empty()
            && value.len() <= MAX_GREP_LEN
            && !value.chars().any(char::is_control);
        if ok {
            Ok(Self(value.to_owned()))
        } else {
            Err(InvalidFilter::new("grep", value, RULE))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// A time for `--since=`/`--until=` in any form journalctl parses:
/// `2026-11-30 12:00:00`, `yesterday`, `-1h`, `+5min`, `@1764500000`.
/// A leading `-` is fine: it travels inside `--since=-1h`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TimeSpec(String);

impl TimeSpec {
    /// `filter` is the wire name used in the error (`since` or `until`).
    pub fn new(filter: &'static str, value: &str) -> Result<Self, InvalidFilter> {
        const RULE: &str = "use a journalctl time (e.g. \"-1h\", \"yesterday\", \
                            \"2026-11-30 12:00:00\") of at most 64 characters of \
                            A-Z a-z 0-9 space - + : . @ _ , /";
        let ok = !value.trim().is_empty()
            && value.len() <= MAX_TIME_LEN
            && value
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b" -+:.@_,/".contains(&b));
        if ok {
            Ok(Self(value.to_owned()))
        } else {
            Err(InvalidFilter::new(filter, value, RULE))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

/// The machine of a hive container as `get_host_journal` names it
/// (`container: "h-iris"`): the `h-` prefix is required and the rest must be
/// an agent name, so only hive containers can be read.
pub fn agent_of_container(container: &str) -> Result<Ident, InvalidFilter> {
    const RULE: &str = "use a hive container's machine name, h-<agent>";
    container
        .strip_prefix("h-")
        .and_then(|rest| Ident::new(rest).ok())
        .ok_or_else(|| InvalidFilter::new("container", container, RULE))
}

/// This machine's id (`/etc/machine-id`: 32 lowercase hex digits), the
/// `_MACHINE_ID` journald stamps on every entry it writes here.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct MachineId(String);

impl MachineId {
    /// The id in `text` (a trailing newline is fine), if it is one.
    pub fn parse(text: &str) -> Option<Self> {
        let id = text.trim_end_matches('\n');
        (id.len() == 32 && id.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f')))
            .then(|| Self(id.to_owned()))
    }

    /// The arguments that make a follow of the host journal read this
    /// machine's entries of every boot: `--merge` and the match
    /// `_MACHINE_ID=<id>` (the one positional argument the daemon ever
    /// passes, built only from 32 hex digits).
    ///
    /// Why: journalctl 252 makes `--follow` imply `--boot` (the current
    /// boot) unless `--merge` is given, and it takes the current boot's id
    /// from `/proc/sys/kernel/random/boot_id`. Under the shipped unit's
    /// `ProtectKernelTunables=yes` the daemon sees a fresh procfs, so where
    /// the host is itself a container (systemd-nspawn bind-mounts a boot id
    /// of its own over that file; the real-systemd test-bed is one) the id
    /// is the kernel's, matches no entry, and the follow printed nothing
    /// (issue 16). `--merge` lifts the boot filter but reads every journal
    /// in `/var/log/journal`, the containers' linked ones too; the match
    /// keeps this machine's, as a read's local-only default does.
    pub fn host_follow_args(&self) -> [OsString; 2] {
        ["--merge".into(), format!("_MACHINE_ID={}", self.0).into()]
    }
}

/// Where journalctl reads from.
#[derive(Debug, Clone, PartialEq, Eq, Default)]
pub enum JournalSource {
    /// The host's journal (the default); agent `n`'s container journal is
    /// read through machined with `--machine=h-<n>`.
    #[default]
    Host,
    /// Journal files in this directory (`--directory=`): tests, the fake
    /// driver, and hosts whose journal lives elsewhere. Agent `n`'s
    /// container journal is the files in `<dir>/h-<n>/` (journalctl cannot
    /// combine `--machine=` with `--directory=`, and does not descend into
    /// `h-<n>` by itself).
    Directory(PathBuf),
}

impl JournalSource {
    /// `Directory` when the config names a directory, else `Host`.
    pub fn from_config(directory: Option<&Path>) -> Self {
        directory.map_or(Self::Host, |d| Self::Directory(d.to_path_buf()))
    }
}

/// One read of the journal. Build it with [`JournalQuery::host_journal`] or
/// [`JournalQuery::agent_logs`] (which apply the line limits), or field by
/// field. Following (`-f`) is not a field: it is `Journal::follow`, because
/// it returns a stream instead of a list.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct JournalQuery {
    /// Read this agent's container journal (`--machine=h-<n>`, or
    /// `<dir>/h-<n>/` from a directory source).
    pub machine: Option<Ident>,
    pub unit: Option<UnitFilter>,
    /// This level and more severe.
    pub priority: Option<JournalPriority>,
    pub grep: Option<GrepPattern>,
    pub since: Option<TimeSpec>,
    pub until: Option<TimeSpec>,
    /// The newest `lines` entries (`--lines=`); `None` = journalctl's default
    /// (all for a read, 10 for a follow).
    pub lines: Option<u32>,
}

/// The raw filters of `get_host_journal`, as the agent socket receives them.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct HostJournalRequest<'a> {
    pub unit: Option<&'a str>,
    pub container: Option<&'a str>,
    pub lines: Option<u32>,
    pub priority: Option<JournalPriority>,
    pub grep: Option<&'a str>,
    pub since: Option<&'a str>,
    pub until: Option<&'a str>,
}

impl<'a> From<&'a HostJournalFilters> for HostJournalRequest<'a> {
    fn from(f: &'a HostJournalFilters) -> Self {
        Self {
            unit: f.unit.as_deref(),
            container: f.container.as_deref(),
            lines: f.lines,
            priority: f.priority,
            grep: f.grep.as_deref(),
            since: f.since.as_deref(),
            until: f.until.as_deref(),
        }
    }
}

impl JournalQuery {
    /// `get_host_journal`: validate every filter; lines default 30, larger
    /// requests clamped to 100.
    pub fn host_journal(request: &HostJournalRequest<'_>) -> Result<Self, InvalidFilter> {
        Ok(Self {
            machine: request.container.map(agent_of_container).transpose()?,
            unit: request.unit.map(UnitFilter::new).transpose()?,
            priority: request.priority,
            grep: request.grep.map(GrepPattern::new).transpose()?,
            since: request
                .since
                .map(|s| TimeSpec::new("since", s))
                .transpose()?,
            until: request
                .until
                .map(|s| TimeSpec::new("until", s))
                .transpose()?,
            lines: Some(
                request
                    .lines
                    .unwrap_or(HOST_JOURNAL_DEFAULT_LINES)
                    .min(HOST_JOURNAL_MAX_LINES),
            ),
        })
    }

    /// `get_logs {agent, lines?}`: the container's own journal, newest
    /// lines; default 30, clamped to 1000.
    pub fn agent_logs(agent: Ident, lines: Option<u32>) -> Self {
        Self {
            machine: Some(agent),
            lines: Some(
                lines
                    .unwrap_or(AGENT_LOGS_DEFAULT_LINES)
                    .min(AGENT_LOGS_MAX_LINES),
            ),
            ..Self::default()
        }
    }

    /// The query as a follow: refused with an `until`, which would end a
    /// follow meant to go on (journalctl would stop at it, or never print).
    pub fn followed(self) -> Result<Self, InvalidFilter> {
        match &self.until {
            Some(until) => Err(InvalidFilter::new(
                "until",
                until.as_str(),
                "a followed journal has no end: drop \"until\" or \"follow\"",
            )),
            None => Ok(self),
        }
    }

    /// The journalctl arguments (without the program) for this query read
    /// from `source`; `follow` adds `--follow`.
    pub fn args(&self, source: &JournalSource, follow: bool) -> Vec<OsString> {
        let mut args: Vec<OsString> = vec![
            "--no-pager".into(),
            "--quiet".into(),
            "--output=json".into(),
        ];
        match (source, &self.machine) {
            (JournalSource::Host, None) => {}
            (JournalSource::Host, Some(agent)) => {
                args.push(format!("--machine={}", machine_name(agent)).into());
            }
            (JournalSource::Directory(dir), machine) => {
                let dir = match machine {
                    Some(agent) => dir.join(machine_name(agent)),
                    None => dir.clone(),
                };
                let mut arg = OsString::from("--directory=");
                arg.push(dir);
                args.push(arg);
            }
        }
        let mut push = |option: &str, value: &str| args.push(format!("--{option}={value}").into());
        if let Some(unit) = &self.unit {
            push("unit", unit.as_str());
        }
        if let Some(priority) = self.priority {
            push("priority", priority.as_str());
        }
        if let Some(grep) = &self.grep {
            push("grep", grep.as_str());
        }
        if let Some(since) = &self.since {
            push("since", since.as_str());
        }
        if let Some(until) = &self.until {
            push("until", until.as_str());
        }
        if let Some(lines) = self.lines {
            push("lines", &lines.to_string());
        }
        if follow {
            args.push("--follow".into());
        } else if self.reads_newest_first() {
            args.push("--reverse".into());
        }
        args
    }

    /// Whether a (non-follow) read asks journalctl for newest-first output,
    /// which [`crate::systemd::journal::Journal::read`] turns back to oldest
    /// first. journalctl 252 answers `--since=X --lines=N` with the OLDEST N
    /// entries after X, not the newest (seen in the test-bed: `hivectl
    /// journal --since -1h` showed the hour's first 100 lines); with
    /// `--reverse` it walks back from the end and stops at N or at X.
    pub fn reads_newest_first(&self) -> bool {
        self.lines.is_some() && self.since.is_some()
    }
}

#[cfg(test)]
#[path = "query_tests.rs"]
mod tests;
