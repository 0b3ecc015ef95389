//! Who a `send` reaches: the recipient rules, pure over a topology snapshot.
//!
//! `<parent>` and `<children>` are resolved against the topology *at
//! delivery time* (the service asks the store's rows, in the same write
//! transaction that stores the messages, only what this send needs), so a `set_parent` takes effect on the
//! next send without restarting anybody. Rejected alternative: resolving
//! once when an agent's socket is bound, which would route to a stale
//! parent after every move.

use std::convert::Infallible;

use super::topology::Tree;
use super::{OPERATOR, Recipient};
use crate::wire::ident::Ident;

/// The sender's topology parent, or the operator for a root agent.
pub const PARENT_RECIPIENT: &str = "<parent>";
/// Every direct child of the sender (none: a no-op).
pub const CHILDREN_RECIPIENT: &str = "<children>";

/// Why a `to` names nobody. Every variant asks the sender to fix the name.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum UnknownRecipient {
    /// No such agent here, and not a special recipient.
    #[error(
        "no recipient {0:?} in this hive: send to a managed agent, \"operator\", \"<parent>\", \"<children>\" or \"agent@hive\""
    )]
    Local(String),
    /// An `@` address whose halves are not both names.
    #[error("{0:?} is not an address: use \"agent@hive\", both of a-z, 0-9 and '-'")]
    Malformed(String),
    /// An `agent@hive` address, but this hive is not in a swarm.
    #[error(
        "{0:?} names another hive, but this hive is not in a swarm (its config has no `swarm` section)"
    )]
    NoSwarm(String),
    /// `system@hive`: `system` is every hive's daemon, not an inbox.
    #[error(
        "{0:?} names no inbox: \"system\" is a hive's own daemon; send to an agent or \"operator\""
    )]
    Reserved(String),
}

/// How full an inbox is: its pending messages and their body bytes.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub struct InboxLoad {
    pub messages: u64,
    pub bytes: u64,
}

/// The most one inbox holds pending (`inbox_max_messages`,
/// `inbox_max_bytes`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InboxLimits {
    pub messages: u64,
    pub bytes: u64,
}

/// A `send` refused because its recipient's inbox is at its cap. Nothing
/// was stored; the sender may try again once the recipient has read.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "the inbox of {recipient:?} is full ({} messages, {} bytes pending; this hive holds at most \
     {} messages and {} bytes per inbox: inbox_max_messages, inbox_max_bytes); nothing was sent, \
     try again after it has read its messages",
    .load.messages, .load.bytes, .limits.messages, .limits.bytes
)]
pub struct InboxFull {
    /// The full inbox (an agent's name or `operator`).
    pub recipient: String,
    /// Who was refused (named in the daemon's log).
    pub sender: String,
    pub load: InboxLoad,
    pub limits: InboxLimits,
}

/// Whether an inbox at `load` takes one more body of `size` bytes.
pub fn admit(
    load: InboxLoad,
    size: usize,
    limits: InboxLimits,
) -> Result<(), (InboxLoad, InboxLimits)> {
    let size = u64::try_from(size).unwrap_or(u64::MAX);
    if load.messages >= limits.messages || load.bytes.saturating_add(size) > limits.bytes {
        return Err((load, limits));
    }
    Ok(())
}

/// The recipients of a message `sender` addresses to `to`. May be empty
/// (`<children>` of a leaf). Asks `tree` only what `to` needs: one lookup.
pub fn resolve<T, E>(tree: &T, sender: &Ident, to: &str) -> Result<Vec<Recipient>, E>
where
    T: Tree,
    E: From<UnknownRecipient> + From<T::Error>,
{
    Ok(match to {
        PARENT_RECIPIENT => vec![
            tree.parent_of(sender)?
                .map_or(Recipient::Operator, Recipient::Agent),
        ],
        CHILDREN_RECIPIENT => tree
            .children(sender)?
            .into_iter()
            .map(Recipient::Agent)
            .collect(),
        OPERATOR => vec![Recipient::Operator],
        name => match Ident::new(name) {
            Ok(agent) if tree.contains(&agent)? => vec![Recipient::Agent(agent)],
            _ => return Err(UnknownRecipient::Local(name.chars().take(80).collect()).into()),
        },
    })
}

/// A snapshot never fails to answer.
impl From<Infallible> for UnknownRecipient {
    fn from(never: Infallible) -> Self {
        match never {}
    }
}

#[cfg(test)]
#[path = "broker_tests.rs"]
mod tests;
