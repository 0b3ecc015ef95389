//! Hand-written proxies for the few systemd1 and machine1 methods the driver
//! calls, and the bus names and paths they live at.
//!
//! Decision: our own `#[zbus::proxy]` traits rather than the `zbus_systemd`
//! crate — a dozen methods do not justify a crate whose versions track
//! systemd releases and whose zbus-5 line is frozen. Proxies are built with
//! `CacheProperties::No`: the driver never reads cached properties (its view
//! is fed by signals), and property caching under the tokio executor has a
//! deadlock history (zbus #279).

use zbus::proxy::CacheProperties;
use zbus::zvariant::{OwnedObjectPath, Value};

pub const SYSTEMD_SERVICE: &str = "org.freedesktop.systemd1";
pub const SYSTEMD_PATH: &str = "/org/freedesktop/systemd1";
pub const MANAGER_INTERFACE: &str = "org.freedesktop.systemd1.Manager";
pub const SERVICE_INTERFACE: &str = "org.freedesktop.systemd1.Service";
pub const UNIT_INTERFACE: &str = "org.freedesktop.systemd1.Unit";
/// Every unit object lives below this path.
pub const UNIT_PATH_PREFIX: &str = "/org/freedesktop/systemd1/unit/";

/// One row of `ListUnits`/`ListUnitsByPatterns`: name, description, load
/// state, active state, sub state, following, unit path, job id, job type,
/// job path.
pub type UnitRow = (
    String,
    String,
    String,
    String,
    String,
    String,
    OwnedObjectPath,
    u32,
    String,
    OwnedObjectPath,
);

#[zbus::proxy(
    interface = "org.freedesktop.systemd1.Manager",
    default_service = "org.freedesktop.systemd1",
    default_path = "/org/freedesktop/systemd1",
    gen_blocking = false
)]
pub trait Systemd {
    /// Ask systemd to emit `JobRemoved`, `UnitNew`, `UnitRemoved` and unit
    /// `PropertiesChanged` to us; without it systemd stays silent.
    fn subscribe(&self) -> zbus::Result<()>;

    fn list_units_by_patterns(
        &self,
        states: &[&str],
        patterns: &[&str],
    ) -> zbus::Result<Vec<UnitRow>>;

    fn list_units(&self) -> zbus::Result<Vec<UnitRow>>;

    fn start_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    fn stop_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    fn restart_unit(&self, name: &str, mode: &str) -> zbus::Result<OwnedObjectPath>;

    fn kill_unit(&self, name: &str, whom: &str, signal: i32) -> zbus::Result<()>;

    fn reset_failed_unit(&self, name: &str) -> zbus::Result<()>;

    /// A unit of the caller's making (the inotify helper's oneshot):
    /// properties, then auxiliary units (none); its start job.
    #[allow(clippy::type_complexity)]
    fn start_transient_unit(
        &self,
        name: &str,
        mode: &str,
        properties: &[(&str, Value<'_>)],
        aux: &[(&str, Vec<(&str, Value<'_>)>)],
    ) -> zbus::Result<OwnedObjectPath>;

    fn set_unit_properties(
        &self,
        name: &str,
        runtime: bool,
        properties: &[(&str, Value<'_>)],
    ) -> zbus::Result<()>;

    /// Removes the unit's drop-ins, including the persistent ones
    /// `SetUnitProperties(runtime=false)` wrote; returns the changes made.
    fn revert_unit_files(&self, files: &[&str]) -> zbus::Result<Vec<(String, String, String)>>;
}

#[zbus::proxy(
    interface = "org.freedesktop.machine1.Manager",
    default_service = "org.freedesktop.machine1",
    default_path = "/org/freedesktop/machine1",
    gen_blocking = false
)]
pub trait Machined {
    fn get_image(&self, name: &str) -> zbus::Result<OwnedObjectPath>;

    fn clone_image(&self, name: &str, new_name: &str, read_only: bool) -> zbus::Result<()>;

    fn remove_image(&self, name: &str) -> zbus::Result<()>;

    /// `who` is `leader` (the container's init) or `all`.
    fn kill_machine(&self, name: &str, who: &str, signal: i32) -> zbus::Result<()>;

    fn get_machine(&self, name: &str) -> zbus::Result<OwnedObjectPath>;
}

#[zbus::proxy(
    interface = "org.freedesktop.machine1.Machine",
    default_service = "org.freedesktop.machine1",
    gen_blocking = false
)]
pub trait Machine {
    /// The container's init, as the host sees it (its pid).
    #[zbus(property)]
    fn leader(&self) -> zbus::Result<u32>;
}

/// The leader pid of machine `name` (machined `GetMachine`, then its
/// `Leader`).
pub async fn machine_leader(conn: &zbus::Connection, name: &str) -> zbus::Result<u32> {
    let path = machined(conn).await?.get_machine(name).await?;
    MachineProxy::builder(conn)
        .path(path)?
        .cache_properties(CacheProperties::No)
        .build()
        .await?
        .leader()
        .await
}

pub async fn systemd(conn: &zbus::Connection) -> zbus::Result<SystemdProxy<'static>> {
    SystemdProxy::builder(conn)
        .cache_properties(CacheProperties::No)
        .build()
        .await
}

pub async fn machined(conn: &zbus::Connection) -> zbus::Result<MachinedProxy<'static>> {
    MachinedProxy::builder(conn)
        .cache_properties(CacheProperties::No)
        .build()
        .await
}

/// The object path of unit `name`, escaped as systemd does (`bus_label_escape`):
/// every byte that is not an ASCII letter or digit — and a leading digit —
/// becomes `_` and two lowercase hex digits.
pub fn unit_path(name: &str) -> String {
    let mut out = String::from(UNIT_PATH_PREFIX);
    for (i, b) in name.bytes().enumerate() {
        if b.is_ascii_alphabetic() || (b.is_ascii_digit() && i > 0) {
            out.push(char::from(b));
        } else {
            out.push_str(&format!("_{b:02x}"));
        }
    }
    out
}

/// The unit name of a unit object path, the inverse of [`unit_path`]; `None`
/// for paths outside the unit tree or with broken escapes.
pub fn unit_name_of_path(path: &str) -> Option<String> {
    let label = path.strip_prefix(UNIT_PATH_PREFIX)?;
    let bytes = label.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut i = 0;
    while i < bytes.len() {
        if bytes[i] == b'_' {
            let hex = label.get(i + 1..i + 3)?;
            out.push(u8::from_str_radix(hex, 16).ok()?);
            i += 3;
        } else {
            out.push(bytes[i]);
            i += 1;
        }
    }
    String::from_utf8(out).ok()
}

#[cfg(test)]
#[path = "proxies_tests.rs"]
mod tests;
