//! Everything that talks to systemd itself (see each module's docs).

pub mod dbus;
