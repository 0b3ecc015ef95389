//! Wire types: serde only, no IO.
//!
//! - [`ident`]: the one validated name type.
//! - [`host`]: host.sock v1, the operator's socket.
//! - [`events`]: `HelperEvent`s pushed to the manager.

pub mod events;
pub mod host;
pub mod ident;
