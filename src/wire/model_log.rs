//! The model gateway's meter (issue 46): the row the egress service sends
//! the daemon for every request an agent made to the model, the frames
//! that carry it beside the answer's bytes, and the rows `model_log`
//! answers (host.sock).
//!
//! Who knows what: the gateway (in `hive-c0re egress`) reads the upstream's
//! own answer — its status, its `request-id`, its `usage` — and keeps
//! nothing; the daemon knows the agent (its socket) and has the store. So
//! a model connection's bytes from the service come framed, after the
//! verdict line that says `model`: a data frame `D <n>\n` followed by
//! exactly `n` bytes for the agent, or a meter frame `M <json>\n` with one
//! [`MeterRow`]. The daemon reads frames strictly ([`FrameHead::parse`]):
//! a data frame's length is counted by the service, so nothing the agent
//! sends or the upstream answers can ever be read as a meter row.
//! Rejected: a second socket per connection (two processes would have to
//! pair them), and a row after the answer on an unframed stream (a
//! keep-alive connection carries many answers, and where one ends is the
//! HTTP parser's business, not the daemon's).

use serde::{Deserialize, Serialize};

use super::egress_audit::bounded;
use super::ident::Ident;

/// The framing this build speaks (the dial line's `meter`).
pub const METER_VERSION: u32 = 1;

/// The longest data frame's payload.
pub const MAX_DATA_FRAME: usize = 64 * 1024;

/// The longest frame head line (a meter frame is all head), its newline
/// included.
pub const MAX_FRAME_HEAD: usize = 4096;

/// The longest model name kept.
pub const MAX_MODEL: usize = 128;
/// The longest request id kept (Anthropic's are ~30 bytes).
pub const MAX_REQUEST_ID: usize = 128;
/// The longest route kept (`POST /v1/messages` and its kin; an unknown
/// route is recorded as asked, cut).
pub const MAX_ROUTE: usize = 160;
/// The longest error text kept.
pub const MAX_ERROR: usize = 512;

/// The name of a credential the host holds for the model gateway: the
/// name of a systemd credential of `hive-c0re-egress.service`
/// (`LoadCredential=NAME:PATH`), so `[A-Za-z0-9][A-Za-z0-9_.-]{0,63}` — no
/// `/`, no leading dot: it is joined to `$CREDENTIALS_DIRECTORY` and can
/// name nothing outside it.
#[derive(Debug, Clone, PartialEq, Eq, Hash, Serialize)]
#[serde(transparent)]
pub struct CredentialName(String);

/// Why a string is not a credential name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a credential name: 1 to 64 of A-Z a-z 0-9 _ . -, starting with a letter or digit (the name of a LoadCredential= of hive-c0re-egress.service)"
)]
pub struct BadCredentialName(String);

impl CredentialName {
    pub fn new(name: &str) -> Result<Self, BadCredentialName> {
        let ok = !name.is_empty()
            && name.len() <= 64
            && name.as_bytes()[0].is_ascii_alphanumeric()
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'_' | b'.' | b'-'));
        if ok {
            Ok(Self(name.to_owned()))
        } else {
            Err(BadCredentialName(bounded(name, 80)))
        }
    }

    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl std::fmt::Display for CredentialName {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str(&self.0)
    }
}

impl<'de> Deserialize<'de> for CredentialName {
    fn deserialize<D: serde::Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::new(&s).map_err(serde::de::Error::custom)
    }
}

/// The rows kept per agent by default (the oldest go first).
pub const DEFAULT_ROWS_PER_AGENT: u32 = 5000;

/// How many rows `model_log` answers without a `limit`.
pub const DEFAULT_MODEL_LOG_LIMIT: u32 = 50;

/// The most rows one `model_log` answers.
pub const MAX_MODEL_LOG_LIMIT: u32 = 10_000;

/// Tokens one request used, as the upstream said.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Tokens {
    pub input: u64,
    pub output: u64,
    /// `cache_creation_input_tokens`.
    pub cache_write: u64,
    /// `cache_read_input_tokens`.
    pub cache_read: u64,
}

impl Tokens {
    pub fn total(&self) -> u64 {
        self.input
            .saturating_add(self.output)
            .saturating_add(self.cache_write)
            .saturating_add(self.cache_read)
    }
}

/// What an agent's metered requests add up to (issue 46, step 2): the
/// spend every budget, `usage`, the roster and `/metrics` count. Sent as a
/// `metered` object beside the reported figures of `usage` rows
/// (additive: absent from an older daemon's answer, it reads as zero).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct MeteredUsage {
    /// Requests the gateway metered (every status).
    #[serde(default)]
    pub requests: u64,
    /// Their tokens, as the upstream counted them.
    #[serde(default)]
    pub tokens: Tokens,
    /// Their list cost in millionths of a US dollar (unpriced ones count
    /// nothing here).
    #[serde(default)]
    pub cost_micro_usd: u64,
    /// Requests with tokens of a model the price table does not know:
    /// their cost is not in `cost_micro_usd`.
    #[serde(default)]
    pub unpriced: u64,
}

impl MeteredUsage {
    /// Add `other`'s sums to these.
    pub fn add(&mut self, other: &Self) {
        self.requests = self.requests.saturating_add(other.requests);
        let (a, b) = (&mut self.tokens, &other.tokens);
        a.input = a.input.saturating_add(b.input);
        a.output = a.output.saturating_add(b.output);
        a.cache_write = a.cache_write.saturating_add(b.cache_write);
        a.cache_read = a.cache_read.saturating_add(b.cache_read);
        self.cost_micro_usd = self.cost_micro_usd.saturating_add(other.cost_micro_usd);
        self.unpriced = self.unpriced.saturating_add(other.unpriced);
    }
}

/// One request through the gateway, as the service tells the daemon.
/// Known keys only; every string bounded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct MeterRow {
    /// When the request came, unix milliseconds: stamped by the daemon
    /// when it records the row (the hive's clock, less `ms`); the service
    /// sends 0.
    pub at_ms: i64,
    /// `METHOD /path` as asked (without the query).
    pub route: String,
    /// The model the upstream answered with (else the one asked for).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// The status the agent got (the upstream's, or the gateway's own).
    pub status: u16,
    pub tokens: Tokens,
    /// The list cost in millionths of a US dollar (none: the model is not
    /// in the price table).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<u64>,
    /// From the request to the answer's last byte (or its end), ms.
    pub ms: u64,
    /// The upstream's `request-id`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub request_id: Option<String>,
    /// What went wrong, when something did (the gateway's refusal, the
    /// upstream's error event, the client gone mid-answer).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
}

impl MeterRow {
    /// Every string cut to its bound.
    pub fn bounded(mut self) -> Self {
        self.route = bounded(&self.route, MAX_ROUTE);
        self.model = self.model.map(|m| bounded(&m, MAX_MODEL));
        self.request_id = self.request_id.map(|r| bounded(&r, MAX_REQUEST_ID));
        self.error = self.error.map(|e| bounded(&e, MAX_ERROR));
        self
    }

    fn within(&self) -> bool {
        let within = |v: &Option<String>, max: usize| v.as_ref().is_none_or(|s| s.len() <= max);
        self.route.len() <= MAX_ROUTE
            && within(&self.model, MAX_MODEL)
            && within(&self.request_id, MAX_REQUEST_ID)
            && within(&self.error, MAX_ERROR)
    }

    /// The meter frame: `M `, the JSON object, `\n` (JSON escapes every
    /// control character, so the object holds no newline).
    pub fn to_frame(&self) -> Vec<u8> {
        let json = serde_json::to_string(self).unwrap_or_default();
        format!("M {json}\n").into_bytes()
    }
}

/// A data frame's head for `n` bytes.
pub fn data_head(n: usize) -> Vec<u8> {
    format!("D {n}\n").into_bytes()
}

/// What a frame head line says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum FrameHead {
    /// `n` bytes for the agent follow.
    Data(usize),
    /// One request's row.
    Meter(MeterRow),
}

/// Why bytes are not a frame head.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("not a model gateway frame: {0}")]
pub struct BadFrame(&'static str);

impl FrameHead {
    /// Parse one complete head line (through its `\n`), strictly: `D`
    /// and a length in 1..=[`MAX_DATA_FRAME`] in plain digits, or `M` and
    /// one meter row of known keys within its bounds.
    pub fn parse(line: &[u8]) -> Result<Self, BadFrame> {
        if line.len() > MAX_FRAME_HEAD {
            return Err(BadFrame("longer than its limit"));
        }
        let body = line
            .strip_suffix(b"\n")
            .ok_or(BadFrame("no newline at its end"))?;
        if body.contains(&b'\n') || body.contains(&b'\r') {
            return Err(BadFrame("more than one line"));
        }
        if let Some(n) = body.strip_prefix(b"D ") {
            let digits = std::str::from_utf8(n).map_err(|_| BadFrame("a length not in digits"))?;
            if digits.is_empty()
                || digits.len() > 6
                || !digits.bytes().all(|b| b.is_ascii_digit())
                || digits.starts_with('0')
            {
                return Err(BadFrame("a length not in digits"));
            }
            let n: usize = digits
                .parse()
                .map_err(|_| BadFrame("a length not in digits"))?;
            if n > MAX_DATA_FRAME {
                return Err(BadFrame("a data frame over its limit"));
            }
            return Ok(Self::Data(n));
        }
        if let Some(json) = body.strip_prefix(b"M ") {
            let row: MeterRow =
                serde_json::from_slice(json).map_err(|_| BadFrame("not a meter row"))?;
            if !row.within() {
                return Err(BadFrame("a value over its limit"));
            }
            return Ok(Self::Meter(row));
        }
        Err(BadFrame("neither a data nor a meter frame"))
    }
}

/// One row of the model log, as the daemon keeps it and `model_log`
/// answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ModelLogRow {
    pub agent: Ident,
    pub request: MeterRow,
}

#[cfg(test)]
#[path = "model_log_tests.rs"]
mod tests;
