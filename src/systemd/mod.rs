//! Everything that talks to systemd.
//!
//! - [`activation`]: host.sock from socket activation (by name) or bound.
//! - [`dbus`]: the real container driver over D-Bus (systemd1 units and
//!   jobs, machine1 images), with a live view fed by signals.
//! - [`journal`]: reading container and host logs through journalctl.
//! - [`notify`]: READY=1, STATUS= and STOPPING=1.

pub mod activation;
pub mod dbus;
pub mod journal;
pub mod notify;
