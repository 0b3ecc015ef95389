//! `Ident`: the one validated name type.
//!
//! Every agent name that enters the daemon — from host.sock, an agent socket,
//! the config file or the command line — becomes an `Ident` at
//! deserialization, before any lookup. Paths (`/run/hyperhive/agents/<n>`),
//! unit names (`systemd-nspawn@h-<n>.service`) and machine names (`h-<n>`) are
//! built only from an `Ident`, so a name can never smuggle a `/`, a `..`, an
//! `@` or a shell metacharacter into one of them.
//!
//! Rejected alternative: validating at each use site. It is easy to forget
//! one, and the failure (a path traversal) is silent.

use std::fmt;

use serde::{Deserialize, Deserializer, Serialize};

/// The longest name accepted: 63 bytes keeps `h-<name>` within the 64-byte
/// machine-name limit of machined and a DNS label.
pub const MAX_LEN: usize = 63;

/// A name of `[a-z0-9-]{1,63}`.
#[derive(Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize)]
#[serde(transparent)]
pub struct Ident(String);

/// Why a string is not an [`Ident`]. The message names the value and the rule.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("invalid name {value:?}: use 1-{MAX_LEN} characters of a-z, 0-9 and '-'")]
pub struct InvalidIdent {
    /// The refused value, truncated to keep error lines short.
    pub value: String,
}

impl Ident {
    /// Validate `value` as a name.
    pub fn new(value: impl Into<String>) -> Result<Self, InvalidIdent> {
        let value = value.into();
        let valid = !value.is_empty()
            && value.len() <= MAX_LEN
            && value
                .bytes()
                .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit() || b == b'-');
        if valid {
            Ok(Self(value))
        } else {
            let value = value.chars().take(80).collect();
            Err(InvalidIdent { value })
        }
    }

    /// A name from a constant in this crate (e.g. the manager's). The
    /// constant's validity is pinned by a unit test, so no check runs here.
    pub(crate) fn from_static(value: &'static str) -> Self {
        debug_assert!(Self::new(value).is_ok(), "{value:?} is not a valid name");
        Self(value.to_owned())
    }

    /// The name as an argument on a command line: after `--` when it
    /// starts with `-` (a name that predates the rule against it), so a
    /// printed hint such as `hivectl destroy -- -x` is one that works.
    pub fn as_argument(&self) -> String {
        if self.0.starts_with('-') {
            format!("-- {}", self.0)
        } else {
            self.0.clone()
        }
    }

    /// The machine name of this agent's container, `h-<name>` (the
    /// protocol's naming; `machinectl` and journalctl show it).
    pub fn machine_name(&self) -> String {
        format!("h-{}", self.0)
    }

    /// The name as a string slice.
    pub fn as_str(&self) -> &str {
        &self.0
    }
}

impl fmt::Display for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.0)
    }
}

impl fmt::Debug for Ident {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        fmt::Debug::fmt(&self.0, f)
    }
}

impl AsRef<str> for Ident {
    fn as_ref(&self) -> &str {
        &self.0
    }
}

impl std::str::FromStr for Ident {
    type Err = InvalidIdent;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Self::new(s)
    }
}

/// An agent, possibly of another hive of the swarm: `bob`, or `bob@hive-b`
/// (both halves names, so the `@` cannot be part of either).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct AgentAt {
    pub agent: Ident,
    /// `None`: this hive.
    pub hive: Option<Ident>,
}

impl std::str::FromStr for AgentAt {
    type Err = InvalidIdent;
    fn from_str(s: &str) -> Result<Self, Self::Err> {
        Ok(match s.split_once('@') {
            None => Self {
                agent: Ident::new(s)?,
                hive: None,
            },
            Some((agent, hive)) => Self {
                agent: Ident::new(agent)?,
                hive: Some(Ident::new(hive)?),
            },
        })
    }
}

impl TryFrom<String> for Ident {
    type Error = InvalidIdent;
    fn try_from(value: String) -> Result<Self, Self::Error> {
        Self::new(value)
    }
}

impl<'de> Deserialize<'de> for Ident {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        let raw = String::deserialize(deserializer)?;
        Self::new(raw).map_err(serde::de::Error::custom)
    }
}

#[cfg(test)]
#[path = "ident_tests.rs"]
mod tests;
