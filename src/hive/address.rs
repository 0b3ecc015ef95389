//! Swarm addressing: `bob@hive-b` names agent `bob` of hive `hive-b`.
//!
//! Both halves are [`Ident`]s (`[a-z0-9-]`), so the `@` can never be part
//! of an agent's name and `bob@hive-b` cannot collide with a local agent;
//! a name with no `@` is local, as it always was. `operator@hive-b` is the
//! other hive's operator inbox. An address naming this hive itself is
//! local (`bob@<own hive>` is `bob`).
//!
//! `<parent>` and `<children>` stay inside one hive: the topology tree is
//! per hive (spawn, approvals and lifecycle are per hive), so a parent is
//! always a local agent. Rejected alternative: a swarm-wide tree, which
//! would need one writer for the tree across hives — a consensus problem
//! for a convenience, where explicit `name@hive` addresses already reach
//! every agent.

use super::broker::UnknownRecipient;
use crate::wire::ident::Ident;

/// An agent (or the operator) of another hive.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RemoteAddress {
    /// The agent's name on its hive, or `operator`.
    pub agent: Ident,
    pub hive: Ident,
}

impl std::fmt::Display for RemoteAddress {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        write!(f, "{}@{}", self.agent, self.hive)
    }
}

/// Where a `send`'s `to` points.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Address<'a> {
    /// Resolved by this hive's broker (`name`, `operator`, `<parent>`, ...).
    Local(&'a str),
    Remote(RemoteAddress),
}

/// Split `to` into a local or a remote address. `own` is this hive's name
/// (`None`: not in a swarm — then any `@` address is refused by name).
pub fn parse<'a>(to: &'a str, own: Option<&Ident>) -> Result<Address<'a>, UnknownRecipient> {
    let Some((agent, hive)) = to.split_once('@') else {
        return Ok(Address::Local(to));
    };
    let clipped = || to.chars().take(80).collect::<String>();
    let (Ok(agent_id), Ok(hive)) = (Ident::new(agent), Ident::new(hive)) else {
        return Err(UnknownRecipient::Malformed(clipped()));
    };
    if !super::names::is_inbox_name(&agent_id) {
        return Err(UnknownRecipient::Reserved(clipped()));
    }
    match own {
        Some(own) if *own == hive => Ok(Address::Local(agent)),
        Some(_) => Ok(Address::Remote(RemoteAddress {
            agent: agent_id,
            hive,
        })),
        None => Err(UnknownRecipient::NoSwarm(clipped())),
    }
}

/// How a message from another hive names its sender here: `alice@hive-a`,
/// the address a reply goes to.
pub fn remote_sender(agent: &str, hive: &Ident) -> String {
    format!("{agent}@{hive}")
}

/// The swarm-wide id of message `seq` from hive `source` to hive `dest`:
/// the `Nats-Msg-Id` the bus de-duplicates on, and the unique
/// `messages.swarm_id` the receiver stores.
pub fn swarm_id(source: &Ident, dest: &Ident, seq: i64) -> String {
    format!("{source}.{dest}.{seq}")
}

#[cfg(test)]
#[path = "address_tests.rs"]
mod tests;
