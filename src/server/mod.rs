//! The sockets: framing, the accept loop, and one dispatcher per socket kind.
//!
//! - [`framing`]: one JSON line, capped while reading.
//! - [`listener`]: the accept loop with tracked connection tasks.
//! - [`host`]: host.sock, the operator's socket.
//! - [`agenda`]: the agenda variants of the agent and manager sockets.

pub mod agenda;
pub mod framing;
pub mod host;
pub mod listener;
