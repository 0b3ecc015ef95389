//! Test-only peers for the D-Bus driver: a private `dbus-daemon` and a fake
//! `org.freedesktop.systemd1` + `org.freedesktop.machine1` on it.
//!
//! The fake copies the systemd behaviour the driver depends on: job paths
//! from `StartUnit` and friends, `JobRemoved` with a result string, unit
//! `PropertiesChanged` (`ActiveState`/`SubState` on the `Unit` interface,
//! `Result` on `Service`) sent before the job's `JobRemoved`, `UnitNew`
//! when a template instance is loaded, silence until a client called
//! `Subscribe()`, and systemd's and machined's error names. It is a
//! fast-test peer only; the real systemd is tested in `tests/system/`.

pub mod bus;
pub mod machined;
pub mod rig;
pub mod state;
pub mod systemd;
