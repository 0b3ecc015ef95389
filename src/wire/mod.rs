//! Wire types: serde only, no IO.
//!
//! - [`ident`]: the one validated name type.
//! - [`host`]: host.sock v1, the operator's socket.

pub mod host;
pub mod ident;
