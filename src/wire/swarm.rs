//! What hives say to each other over the swarm's bus (NATS JetStream).
//! Serde only, no IO. (The swarm roster row host.sock serves is
//! `host::SwarmAgentRow`.)
//!
//! A cross-hive message travels as one JSON [`BusMessage`] on the subject
//! `hive.<swarm>.inbox.<destination>.<source>`. The source hive is taken
//! from the subject, never from the payload: NATS permissions let a hive
//! publish only on subjects ending in its own name, so the subject is the
//! authenticated part (see `src/swarm/README.md`).

use serde::{Deserialize, Serialize};

/// The version of [`BusMessage`] this build writes.
pub const BUS_VERSION: u32 = 1;

/// One message from an agent (or the operator) of one hive to an agent (or
/// the operator) of another.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BusMessage {
    /// [`BUS_VERSION`]; a receiver refuses versions it does not know.
    pub v: u32,
    /// Position in the source→destination sequence, from 1, no gaps: the
    /// receiver inserts `seq` only after `seq - 1`, so order per pair of
    /// hives is kept and a second copy is recognised.
    pub seq: i64,
    /// The sending agent's name, or `operator`.
    pub from: String,
    /// The receiving agent's name, or `operator`.
    pub to: String,
    pub body: String,
    /// Unix seconds on the source hive's clock when `send` was accepted.
    pub at: i64,
}

#[cfg(test)]
#[path = "swarm_tests.rs"]
mod tests;
