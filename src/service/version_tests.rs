//! `version` on a hive with a manual clock: the daemon's words for its
//! driver and profile, and its uptime from when the service was built.

use std::sync::Arc;

use super::*;
use crate::clock::ManualClock;
use crate::store::Store;
use crate::testing::{config_in, hive_on};

#[test]
fn the_version_names_this_build_its_driver_and_profile_and_counts_uptime_from_start() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.driver = DriverKind::Fake;
    config.profile = Profile::Nixos;
    let clock = Arc::new(ManualClock::new(1_800_000_000));
    let (hive, _) = hive_on(config, Store::open_in_memory().unwrap(), clock.clone());
    clock.advance(3 * 3600 + 5 * 60);
    let facts = hive.daemon_version();
    assert_eq!(facts.name, "hive-c0re");
    assert_eq!(facts.version, env!("CARGO_PKG_VERSION"));
    assert_eq!(facts.protocol, crate::wire::host::VERSION);
    assert_eq!(
        (facts.driver.as_str(), facts.profile.as_str()),
        ("fake", "nixos")
    );
    assert_eq!(facts.started_at, "2027-01-15T08:00:00Z");
    assert_eq!(facts.uptime_secs, 11_100);
}

#[test]
fn a_clock_set_back_reads_as_no_uptime_rather_than_a_huge_one() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.driver = DriverKind::Systemd;
    let clock = Arc::new(ManualClock::new(5_000));
    let (hive, _) = hive_on(config, Store::open_in_memory().unwrap(), clock.clone());
    clock.set(4_000);
    let facts = hive.daemon_version();
    assert_eq!(facts.uptime_secs, 0);
    assert_eq!(
        (facts.driver.as_str(), facts.profile.as_str()),
        ("systemd", "nspawn")
    );
}
