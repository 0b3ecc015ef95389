//! Names the wire already gives a meaning, which no agent may take: a
//! message `from` `system` is the daemon's own `HelperEvent`, `operator` is
//! the human's inbox and answerer, and the manager's name is the manager.
//! An agent called `system` could otherwise send the manager a body that
//! reads exactly like a daemon event.
//!
//! Nor may a new name start or end with `-`: a host name (the container's
//! `h-<name>` and its DNS label) may not, and `hivectl stop -x` reads the
//! name as an option. Names that predate the rule stay valid [`Ident`]s,
//! so such an agent can still be listed, stopped and destroyed.
//!
//! Decision: the check sits where a *new* agent name enters the hive
//! (`spawn`, `request_spawn`, on every socket), not in [`Ident`], because
//! the manager's own name is a valid `Ident` that the daemon itself uses.
//! Rejected alternative: refusing these names in `Ident::new`, which would
//! make the manager unnameable and `system` unparseable as a sender.

use crate::wire::events::SYSTEM_SENDER;
use crate::wire::ident::Ident;

use super::OPERATOR;

/// Names the wire gives a meaning (besides the manager's, which is
/// configuration).
pub const RESERVED: &[&str] = &[SYSTEM_SENDER, OPERATOR];

/// A name a new agent may not take (the wire code `reserved_name`: the
/// caller's reaction, choosing another name, is the same for every reason).
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("the name \"{name}\" cannot be a new agent's: {why}; choose another name for the agent")]
pub struct ReservedName {
    pub name: Ident,
    pub why: &'static str,
}

/// Whether `name` may be given to a new agent of a hive whose manager is
/// `manager`.
pub fn check_new_agent(name: &Ident, manager: &Ident) -> Result<(), ReservedName> {
    let edged = name.as_str().starts_with('-') || name.as_str().ends_with('-');
    let why = if name == manager {
        "it is reserved for the hive's manager"
    } else if name.as_str() == SYSTEM_SENDER {
        "it is reserved (messages from \"system\" are the daemon's own events)"
    } else if name.as_str() == OPERATOR {
        "it is reserved (\"operator\" is the human operator's inbox)"
    } else if edged {
        "a name must start and end with a letter or a digit, as a host name does (hivectl would read a leading '-' as an option)"
    } else {
        return Ok(());
    };
    Err(ReservedName {
        name: name.clone(),
        why,
    })
}

/// Whether `from`, the sender another hive's bus message names, is one an
/// agent of that hive could be: a name, or `operator`, but never `system`
/// (a hive's daemon events go to its own manager, never across hives). A
/// remote manager's name is fine: it is that hive's agent. The error says
/// why, for the operator who reads the message instead.
pub fn check_remote_sender(from: &str) -> Result<(), String> {
    let clipped: String = from.chars().take(80).collect();
    if from == SYSTEM_SENDER {
        return Err(format!(
            "the sender {clipped:?} is reserved for a hive's own daemon, whose events never cross hives"
        ));
    }
    if Ident::new(from).is_err() {
        return Err(format!("the sender {clipped:?} is not a name"));
    }
    Ok(())
}

/// Whether `agent` of another hive can receive a message: `system` is no
/// inbox on any hive.
pub fn is_inbox_name(agent: &Ident) -> bool {
    agent.as_str() != SYSTEM_SENDER
}

/// Of `names` (rows already stored), those a new agent could not take now,
/// each with the refusal: reported at start, since they predate the rule.
pub fn reserved_among<'a>(names: &'a [Ident], manager: &Ident) -> Vec<(&'a Ident, ReservedName)> {
    names
        .iter()
        .filter(|n| *n != manager)
        .filter_map(|n| check_new_agent(n, manager).err().map(|e| (n, e)))
        .collect()
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
