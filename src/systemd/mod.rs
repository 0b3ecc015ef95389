//! Everything that talks to systemd.
//!
//! - [`journal`]: reading container and host logs through journalctl.

pub mod journal;
