//! Wire types: serde only, no IO.
//!
//! - [`ident`]: the one validated name type.
//! - [`host`]: host.sock v1, the operator's socket.
//! - [`journal`]: the journal priority filter shared by the agent socket and
//!   the journal reader.

pub mod host;
pub mod ident;
pub mod journal;
