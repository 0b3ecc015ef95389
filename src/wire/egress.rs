//! `EgressPattern`: one entry of an agent's egress allow-list, validated
//! once where it enters (the config file, host.sock's `grant`, an agent's
//! `request_egress`), like [`super::ident::Ident`].
//!
//! A pattern is `host[:port]`: `host` an exact DNS name (or IPv4 literal)
//! or `*.domain` (any name under `domain`, not `domain` itself), compared
//! without case; no port means any port. Rejected: URL or regex patterns,
//! which an operator gets wrong in the direction of too open, and a bare
//! `*` (the whole network would be one typo away).

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// A `host[:port]` or `*.domain[:port]` pattern, lowercase.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct EgressPattern(String);

/// Why a string is not an [`EgressPattern`]; the message names the value
/// and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "egress pattern {0:?}: use host[:port] or *.domain[:port] (letters, digits, '-' and '.'; port 1-65535)"
)]
pub struct BadPattern(pub String);

fn valid_host(h: &str) -> bool {
    !h.is_empty()
        && h.len() <= 253
        && h.split('.').all(|l| {
            !l.is_empty()
                && l.len() <= 63
                && l.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'-')
        })
}

impl EgressPattern {
    /// Validate `value` as a pattern (lowercased).
    pub fn new(value: &str) -> Result<Self, BadPattern> {
        let bad = || BadPattern(value.chars().take(80).collect());
        let (host, port) = match value.rsplit_once(':') {
            Some((h, p)) => (h, Some(p)),
            None => (value, None),
        };
        if let Some(p) = port {
            p.parse::<u16>().ok().filter(|&n| n > 0).ok_or_else(bad)?;
        }
        let bare = host.strip_prefix("*.").unwrap_or(host);
        if !valid_host(bare) {
            return Err(bad());
        }
        Ok(Self(value.to_ascii_lowercase()))
    }

    /// The host part (`*.domain` for a wildcard).
    pub fn host(&self) -> &str {
        self.0.rsplit_once(':').map_or(&self.0, |(h, _)| h)
    }

    /// The port, if the pattern names one.
    pub fn port(&self) -> Option<u16> {
        self.0.rsplit_once(':').and_then(|(_, p)| p.parse().ok())
    }

    /// Whether `host:port` (any case) matches this pattern.
    pub fn matches(&self, host: &str, port: u16) -> bool {
        let host = host.to_ascii_lowercase();
        let host_ok = match self.host().strip_prefix("*.") {
            Some(domain) => host
                .strip_suffix(domain)
                .is_some_and(|rest| rest.len() > 1 && rest.ends_with('.')),
            None => self.host() == host,
        };
        host_ok && self.port().is_none_or(|q| q == port)
    }

    /// The pattern as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for EgressPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for EgressPattern {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl std::str::FromStr for EgressPattern {
    type Err = BadPattern;
    fn from_str(s: &str) -> Result<Self, BadPattern> {
        Self::new(s)
    }
}

impl<'de> Deserialize<'de> for EgressPattern {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let s = String::deserialize(d)?;
        Self::new(&s).map_err(serde::de::Error::custom)
    }
}

/// The line the daemon sends the egress service (`hive-c0re egress`) before
/// an agent's bytes: who is asking and what that agent may reach. The
/// service trusts it because only root may connect to its socket
/// (`hive-c0re-egress.socket`, `SocketMode=0600`); an agent never sees it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DialRequest {
    pub agent: super::ident::Ident,
    pub allow: Vec<EgressPattern>,
    /// The verdict protocol the daemon reads back
    /// ([`super::egress_audit::VERDICT_VERSION`]); 0 (absent, an older
    /// daemon): none, and the service sends no verdict line.
    #[serde(default, skip_serializing_if = "is_zero")]
    pub verdict: u32,
    /// The frames of a model connection the daemon reads back
    /// ([`super::model_log::METER_VERSION`]); 0 (absent, an older daemon):
    /// none, and the service serves no model request on this connection
    /// (it could not be metered).
    #[serde(default, skip_serializing_if = "is_zero")]
    pub meter: u32,
    /// The host-held credential the model gateway puts on this agent's
    /// requests (the config's `model_credential`): its name only, the
    /// value is the service's own (`$CREDENTIALS_DIRECTORY/<name>`). None:
    /// the agent's own credential header goes upstream as it came.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub credential: Option<super::model_log::CredentialName>,
    /// The budget holding this agent as the connection is dialled, if one
    /// does: what the gateway goes by until the daemon's [`HoldsLine`]s
    /// reach it (an egress service just restarted has none yet). Absent
    /// (an older daemon): not held.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub hold: Option<GatewayHold>,
}

/// Why the model gateway holds an agent's requests: a budget covering it
/// is reached (issue 46). The daemon decides, the egress service only
/// waits and says it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct GatewayHold {
    /// The budget reached: its amount and scope (`1usd/day on alice and
    /// under`).
    pub budget: String,
    /// What its window holds, the roster's words (`$1.02 of $1.00 today`).
    pub spent: String,
    /// The operator's command that raises it (`hivectl budget set alice
    /// AMOUNT`).
    pub raise: String,
    /// How long a held request waits for a release before it is answered
    /// with the budget's error (the config's `budget_hold_secs`), in ms.
    pub wait_ms: u64,
}

/// The longest text of a [`GatewayHold`] field.
pub const MAX_HOLD_TEXT: usize = 300;

/// The longest wait a [`GatewayHold`] may ask for: a day.
pub const MAX_HOLD_WAIT_MS: u64 = 86_400_000;

impl GatewayHold {
    /// Whether its texts are short single lines of printable characters
    /// and its wait at most [`MAX_HOLD_WAIT_MS`]: the shape the egress
    /// service checks before it believes a hold (only the daemon can send
    /// one; a bug should still not put a megabyte or a newline into an
    /// agent's error).
    pub fn well_formed(&self) -> bool {
        [&self.budget, &self.spent, &self.raise]
            .iter()
            .all(|t| t.len() <= MAX_HOLD_TEXT && !t.chars().any(char::is_control))
            && self.wait_ms <= MAX_HOLD_WAIT_MS
    }
}

/// The daemon's control line to the egress service: every agent the model
/// gateway holds now, and why. Sent as the first line of a connection of
/// its own (instead of a [`DialRequest`]), again as a whole whenever the
/// set changes, and on every (re)connect; the service keeps the last one
/// (no round trip per request).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct HoldsLine {
    pub holds: std::collections::BTreeMap<super::ident::Ident, GatewayHold>,
}

impl HoldsLine {
    /// Whether every hold is [`GatewayHold::well_formed`].
    pub fn well_formed(&self) -> bool {
        self.holds.values().all(GatewayHold::well_formed)
    }
}

/// The first line of a connection to the egress service.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ServiceLine {
    /// An agent's connection follows.
    Dial(DialRequest),
    /// The daemon's control connection: this line and more of its kind.
    Holds(HoldsLine),
}

impl ServiceLine {
    /// Parse a first line: a [`HoldsLine`] (it has `holds` and no
    /// `agent`), else a [`DialRequest`], whose error is the one said.
    pub fn parse(line: &str) -> Result<Self, serde_json::Error> {
        #[derive(Deserialize)]
        struct Probe {
            agent: Option<serde::de::IgnoredAny>,
            holds: Option<serde::de::IgnoredAny>,
        }
        if let Ok(Probe {
            agent: None,
            holds: Some(_),
        }) = serde_json::from_str::<Probe>(line)
        {
            return serde_json::from_str(line).map(Self::Holds);
        }
        serde_json::from_str(line).map(Self::Dial)
    }
}

fn is_zero(n: &u32) -> bool {
    *n == 0
}

#[cfg(test)]
#[path = "egress_tests.rs"]
mod tests;
