//! `version`: which daemon answers and how it runs — its release, the
//! protocol it speaks, the driver and profile it was started with, and how
//! long it has been up (`hivectl version`).
//!
//! The start is the moment [`Hive::new`] ran, by the hive's clock: the
//! service is built once per daemon process, at start-up, and a test's
//! manual clock then moves the uptime without sleeping. Rejected: a
//! monotonic `Instant` taken in `main`, which no test could move and which
//! the doors would have to carry past the service.

use super::Hive;
use crate::config::DriverKind;
use crate::containers::Profile;
use crate::wire::version::DaemonVersion;

impl Hive {
    /// This daemon's version facts.
    pub fn daemon_version(&self) -> DaemonVersion {
        let config = self.config();
        let started = self.inner.started_at;
        let now = self.inner.clock.now_unix();
        DaemonVersion {
            name: env!("CARGO_PKG_NAME").into(),
            version: env!("CARGO_PKG_VERSION").into(),
            protocol: crate::wire::host::VERSION,
            driver: match config.driver {
                DriverKind::Systemd => "systemd",
                DriverKind::Fake => "fake",
            }
            .into(),
            profile: match config.profile {
                Profile::Nspawn => "nspawn",
                Profile::Nixos => "nixos",
            }
            .into(),
            started_at: crate::clock::rfc3339(started),
            uptime_secs: u64::try_from(now - started).unwrap_or(0),
        }
    }
}

#[cfg(test)]
#[path = "version_tests.rs"]
mod tests;
