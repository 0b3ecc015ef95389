//! host.sock `version`: which hive-c0re answers and how it runs (`hivectl
//! version`, as `podman version` or `incus version` show client and
//! server side by side).
//!
//! Decision: `driver` and `profile` are strings (the config's own words,
//! `systemd`/`fake` and `nspawn`/`nixos`), not enums: a driver or profile
//! a later daemon adds must not make an older hivectl fail to read the
//! whole answer — the one question it exists for is "which daemon is
//! this?". Rejected: the config's enums on the wire, which also tie the
//! protocol to the config's types.

use serde::{Deserialize, Serialize};

/// The answer of `version` (`daemon` in the envelope; no constructor on
/// `HostResponse`, which would make `host` and this file use each other).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct DaemonVersion {
    /// The package name, `hive-c0re`.
    pub name: String,
    /// The daemon's release (its `Cargo.toml` version).
    pub version: String,
    /// The host.sock protocol it speaks (the envelope's `version`).
    pub protocol: u32,
    /// The container driver: `systemd` (over D-Bus) or `fake`.
    pub driver: String,
    /// The container profile: `nspawn` or `nixos`.
    pub profile: String,
    /// When this daemon process started, RFC 3339 UTC.
    pub started_at: String,
    /// Seconds since then, by the daemon's clock (a client's clock may
    /// differ from the host's).
    pub uptime_secs: u64,
}

#[cfg(test)]
#[path = "version_tests.rs"]
mod tests;
