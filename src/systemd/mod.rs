//! Everything that talks to systemd.
//!
//! - [`activation`]: host.sock from socket activation (by name) or bound.
//! - [`journal`]: reading container and host logs through journalctl.
//! - [`notify`]: READY=1, STATUS= and STOPPING=1.

pub mod activation;
pub mod journal;
pub mod notify;
