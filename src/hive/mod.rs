//! The hive's rules, without IO of their own: pure functions and small state
//! machines that the service layer (`crate::service`) applies with the store
//! and the container driver.
//!
//! - [`access`]: the one access policy: who may run which verb, on whom,
//!   with which grants; the agenda's scoping.
//! - [`agenda`]: questions, reminders, schedules: due times,
//!   targets, file paths, caps.
//! - [`approvals`]: the approval state machine.
//! - [`broker`]: who a message reaches (`<parent>`, `<children>`, names).
//! - [`address`]: swarm addresses, `agent@hive`.
//! - [`arguments`]: the shapes of free-text values a request hands the
//!   hive (argv-bound commit refs and flake inputs, a wake's sender, a
//!   reported model).
//! - [`proposal`]: what an agent's config is (`agent.json`) and what a
//!   proposed config commit may contain; the tags of its story.
//! - [`flake_lock`]: the nixos profile's rule on a proposal's
//!   `flake.lock` (every input locked, none `path:` or `file:`).
//! - [`topology`]: the parent tree and its move rules.
//! - [`roster`]: the agent record; how a roster row is built; what a crash is.
//! - [`unit`](mod@unit): a container unit's state as the rules read it.
//! - [`spend`]: spend caps (budgets): which are in force, what each
//!   covers and holds, which agents start no new turn.
//! - [`names`]: the names no agent may take (`system`, `operator`, the
//!   manager's).

use crate::wire::ident::Ident;

/// The human operator's name, wherever it appears: as a message recipient
/// or sender, an answerer, an asker target, a schedule target.
pub const OPERATOR: &str = "operator";

/// Who a stored message is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Recipient {
    Agent(Ident),
    /// The human operator's inbox (never `recv`'d by an agent).
    Operator,
}

impl Recipient {
    pub fn as_str(&self) -> &str {
        match self {
            Self::Agent(name) => name.as_str(),
            Self::Operator => OPERATOR,
        }
    }
}

/// What an idempotent change did: the driver's lifecycle jobs, topology
/// moves, the setters. Callers answer success either way.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Outcome {
    /// The change was made.
    Done,
    /// Nothing to do: it already was in the asked-for state.
    AlreadyInState,
    /// The change was asked for and goes on where its end cannot be waited
    /// for (systemd's job outlived the driver's wait, or the bus went away
    /// while it ran): the roster shows where it ends.
    Pending,
}

pub mod access;
pub mod address;
pub mod agenda;
pub mod approvals;
pub mod arguments;
pub mod broker;
pub mod flake_lock;
pub mod hooks;
pub mod names;
pub mod proposal;
pub mod roster;
pub mod spend;
pub mod topology;
pub mod transcript;
pub mod unit;
