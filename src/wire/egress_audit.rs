//! The egress audit's shapes (issue 44): the verdict line the egress
//! service sends the daemon about one connection, the record the daemon
//! keeps of it, and the rows `egress_log` answers (host.sock).
//!
//! Who knows what: the egress service (`hive-c0re egress`) knows the
//! verdict and the target but keeps nothing (a dynamic user, no state); the
//! daemon knows the agent (its socket), the bytes it copied each way and
//! the duration, and has the store. So the service tells its verdict
//! in-band, as one line before any byte meant for the agent
//! ([`VerdictLine`]), and the daemon strips it and records one row when the
//! connection ends.
//!
//! The line is an internal protocol between two parts of one binary, kept
//! small and strict: a fixed versioned prefix ([`VERDICT_PREFIX`]), one JSON
//! object with known keys only and bounded values, a newline, at most
//! [`MAX_VERDICT_LINE`] bytes; anything else is no verdict at all. The
//! daemon reads exactly one line, first, and never parses a byte after it:
//! what an agent sends goes up to the service and never comes back as a
//! line, and what an origin sends comes only after the verdict. The service
//! sends it only when the daemon's dial line asks for it
//! (`DialRequest::verdict`), so an older daemon beside a newer service is
//! served as before. Rejected: a side channel (a second socket, a pipe),
//! which two processes would have to pair per connection.

use serde::{Deserialize, Serialize};

use super::ident::Ident;

/// The verdict protocol this build speaks (the dial line's `verdict`).
pub const VERDICT_VERSION: u32 = 1;

/// What a verdict line starts with: the protocol and its version.
pub const VERDICT_PREFIX: &str = "hive-c0re-egress-verdict/1 ";

/// The longest verdict line, its newline included.
pub const MAX_VERDICT_LINE: usize = 2048;

/// The longest `target` a verdict carries (a DNS name is at most 253
/// bytes, plus `:port`).
pub const MAX_TARGET: usize = 300;

/// The longest `address` a verdict carries (an IPv6 socket address).
pub const MAX_ADDRESS: usize = 64;

/// The longest `reason` a verdict carries; the service cuts a longer one.
pub const MAX_REASON: usize = 512;

/// What happened to one egress connection.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Verdict {
    /// Tunnelled (`CONNECT`) or forwarded: the target was dialled.
    Allowed,
    /// Not on the agent's allow-list: 403.
    Refused,
    /// On the list, but the name resolved to an address the proxy does not
    /// dial (loopback, private, link-local...): 403.
    Forbidden,
    /// Over the agent's connection rate: 429, before the request was read.
    Limited,
    /// Over the agent's open connections (`agent_max_connections`): 503
    /// from the daemon, before the egress service saw it.
    Busy,
    /// Not a request the proxy takes: 400.
    BadRequest,
    /// No complete request head in time: 408.
    Timeout,
    /// The name did not resolve: 502.
    Unresolved,
    /// The target did not answer: 502.
    Unreachable,
    /// The hive could not serve it (the egress service not running, the
    /// allow-list unreadable, no verdict from the service): 502 or 503.
    Unavailable,
    /// A request to the model (origin form, `POST /v1/messages`...):
    /// served by the model gateway, each request metered
    /// ([`super::model_log`]); the target is the upstream's.
    Model,
}

impl Verdict {
    /// Every verdict, for tests and parsers.
    pub const ALL: [Self; 11] = [
        Self::Allowed,
        Self::Refused,
        Self::Forbidden,
        Self::Limited,
        Self::Busy,
        Self::BadRequest,
        Self::Timeout,
        Self::Unresolved,
        Self::Unreachable,
        Self::Unavailable,
        Self::Model,
    ];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Allowed => "allowed",
            Self::Refused => "refused",
            Self::Forbidden => "forbidden",
            Self::Limited => "limited",
            Self::Busy => "busy",
            Self::BadRequest => "bad_request",
            Self::Timeout => "timeout",
            Self::Unresolved => "unresolved",
            Self::Unreachable => "unreachable",
            Self::Unavailable => "unavailable",
            Self::Model => "model",
        }
    }

    /// The verdict named `s` ([`Verdict::as_str`]).
    pub fn parse(s: &str) -> Option<Self> {
        Self::ALL.into_iter().find(|v| v.as_str() == s)
    }

    /// Whether connections of this verdict are counted into one row (the
    /// agent's row of the same verdict and target whose first connection
    /// came in the same minute) rather than a row each. Every verdict but
    /// `allowed`: a refused connection carries nothing beyond its target
    /// and reason, so a count loses nothing an operator reads, and a flood
    /// of them (429s above all, thousands a second) cannot rotate the
    /// agent's own earlier rows out of its bound in seconds. An allowed
    /// connection is always a row of its own: its address, bytes and
    /// duration are the audit.
    pub fn merges(self) -> bool {
        !matches!(self, Self::Allowed | Self::Model)
    }
}

/// What the egress service tells the daemon of one connection, before any
/// byte for the agent. Known keys only; each value bounded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct VerdictLine {
    pub verdict: Verdict,
    /// `host:port` as the request asked for it (none before a request was
    /// read: 400, 408, 429).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// The address dialled (allowed), or the one refused (forbidden).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    /// Why, in words, for a verdict other than `allowed`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
}

/// Why bytes are not a verdict line.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not an egress verdict line: {0}")]
pub struct BadVerdict(&'static str);

/// `text` cut to at most `max` bytes, on a character boundary.
pub fn bounded(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max;
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    text[..end].to_owned()
}

impl VerdictLine {
    /// A verdict with nothing more to say.
    pub fn new(verdict: Verdict) -> Self {
        Self {
            verdict,
            target: None,
            address: None,
            reason: None,
        }
    }

    /// With the target asked for (cut to [`MAX_TARGET`]).
    pub fn target(mut self, target: &str) -> Self {
        self.target = Some(bounded(target, MAX_TARGET));
        self
    }

    /// With the address dialled or refused (cut to [`MAX_ADDRESS`]).
    pub fn address(mut self, address: &str) -> Self {
        self.address = Some(bounded(address, MAX_ADDRESS));
        self
    }

    /// With the reason (cut to [`MAX_REASON`]).
    pub fn reason(mut self, reason: &str) -> Self {
        self.reason = Some(bounded(reason, MAX_REASON));
        self
    }

    /// The line as sent: [`VERDICT_PREFIX`], the JSON object, `\n` (JSON
    /// escapes every control character, so the object holds no newline).
    pub fn to_line(&self) -> Vec<u8> {
        // A struct of strings and an enum always serializes.
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("{VERDICT_PREFIX}{json}\n").into_bytes()
    }

    /// Parse one complete line (through its `\n`), strictly: the prefix,
    /// one JSON object of known keys, values within their bounds, nothing
    /// after the newline.
    pub fn parse(line: &[u8]) -> Result<Self, BadVerdict> {
        if line.len() > MAX_VERDICT_LINE {
            return Err(BadVerdict("longer than its limit"));
        }
        let body = line
            .strip_suffix(b"\n")
            .ok_or(BadVerdict("no newline at its end"))?;
        if body.contains(&b'\n') || body.contains(&b'\r') {
            return Err(BadVerdict("more than one line"));
        }
        let json = body
            .strip_prefix(VERDICT_PREFIX.as_bytes())
            .ok_or(BadVerdict("not the verdict prefix"))?;
        let parsed: Self =
            serde_json::from_slice(json).map_err(|_| BadVerdict("not a verdict object"))?;
        let within = |v: &Option<String>, max: usize| v.as_ref().is_none_or(|s| s.len() <= max);
        if !within(&parsed.target, MAX_TARGET)
            || !within(&parsed.address, MAX_ADDRESS)
            || !within(&parsed.reason, MAX_REASON)
        {
            return Err(BadVerdict("a value over its limit"));
        }
        Ok(parsed)
    }
}

/// One connection (or, for a merging verdict, several) as the daemon
/// records it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct EgressRecord {
    pub agent: Ident,
    /// When the connection came, unix milliseconds.
    pub at_ms: i64,
    pub verdict: Verdict,
    pub target: Option<String>,
    pub address: Option<String>,
    pub reason: Option<String>,
    /// Bytes from the agent.
    pub up: u64,
    /// Bytes to the agent (the proxy's answers included).
    pub down: u64,
    /// How long it lasted, milliseconds.
    pub ms: u64,
    /// Connections it stands for (1 unless merged).
    pub count: u64,
}

impl EgressRecord {
    /// Whether `next` is counted into this record: both of a merging
    /// verdict, the same agent, verdict and target, started in the same
    /// minute ([`Verdict::merges`]).
    pub fn absorbs(&self, next: &Self) -> bool {
        self.verdict.merges()
            && self.agent == next.agent
            && self.verdict == next.verdict
            && self.target == next.target
            && self.at_ms.div_euclid(MERGE_WINDOW_MS) == next.at_ms.div_euclid(MERGE_WINDOW_MS)
    }

    /// Count `next` into this record: its connections and bytes added, the
    /// longer duration kept.
    pub fn absorb(&mut self, next: &Self) {
        self.count += next.count;
        self.up += next.up;
        self.down += next.down;
        self.ms = self.ms.max(next.ms);
    }
}

/// The window a merged row covers: connections of a merging verdict that
/// started in the same minute (of the clock, not since the first) share a
/// row. A minute: a 429 flood of any size costs its agent at most one row
/// a minute (2,000 rows hold more than a day of it), and the time of each
/// refusal within the minute is not what an operator reads.
pub const MERGE_WINDOW_MS: i64 = 60_000;

/// `egress_audit_rows_per_agent`'s default (the config's): at Claude Code's
/// few connections a turn, days of an ordinary agent's egress; at the
/// proxy's 16 allowed connections a second, two minutes of a busy one
/// (refusals are counted into a row a minute, so a refusing flood takes
/// far longer). About 200 bytes a row: 400 KB per agent.
pub const DEFAULT_ROWS_PER_AGENT: std::num::NonZeroU32 = match std::num::NonZeroU32::new(2000) {
    Some(n) => n,
    None => std::num::NonZeroU32::MIN,
};

/// How many rows `egress_log` answers without a `limit`.
pub const DEFAULT_EGRESS_LOG_LIMIT: u32 = 50;

/// The most rows one `egress_log` answers (an agent keeps 2,000 by
/// default; a config may keep more, read the rest from the database).
pub const MAX_EGRESS_LOG_LIMIT: u32 = 10_000;

/// One row of `egress_log` (host.sock), oldest first.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressLogRow {
    pub id: i64,
    /// When its (first) connection came, unix milliseconds.
    pub at_ms: i64,
    pub verdict: Verdict,
    /// Connections the row stands for: 1, or more for a merged row.
    pub count: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub address: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reason: Option<String>,
    pub up: u64,
    pub down: u64,
    pub ms: u64,
}

#[cfg(test)]
#[path = "egress_audit_tests.rs"]
mod tests;
