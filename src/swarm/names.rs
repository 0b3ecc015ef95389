//! Every name the swarm uses on the bus, built only from [`Ident`]s (so no
//! `.`, `*` or `>` can reach a subject), in one place: the code and the
//! NATS permissions in `README.md` must agree on them.
//!
//! For swarm `S`, hive `H`:
//! - stream `HIVE-S`, subjects `hive.S.inbox.>`; a message from `H` to `D`
//!   is on `hive.S.inbox.D.H` (destination first, so `D`'s consumer filters
//!   `hive.S.inbox.D.*`; source last, so `H`'s publish permission is
//!   `hive.S.inbox.*.H`);
//! - `H`'s durable consumer `inbox-H`;
//! - the roster bucket `hive-S-roster`, keys `H.<agent>`;
//! - `H`'s reply inboxes `_INBOX.S.H.>` (a hive may subscribe there and to the
//!   roster's puts, nowhere else).

use crate::wire::ident::Ident;

/// The names of one hive in one swarm.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Names {
    pub swarm: Ident,
    pub hive: Ident,
}

impl Names {
    pub fn stream(&self) -> String {
        format!("HIVE-{}", self.swarm)
    }

    /// Every inbox subject of the swarm (the stream's subjects).
    pub fn stream_subjects(&self) -> String {
        format!("hive.{}.inbox.>", self.swarm)
    }

    /// Where this hive publishes a message for hive `dest`.
    pub fn subject_to(&self, dest: &Ident) -> String {
        format!("hive.{}.inbox.{}.{}", self.swarm, dest, self.hive)
    }

    /// What this hive's consumer reads: every message for it.
    pub fn own_filter(&self) -> String {
        format!("hive.{}.inbox.{}.*", self.swarm, self.hive)
    }

    pub fn consumer(&self) -> String {
        format!("inbox-{}", self.hive)
    }

    /// The source hive of a message on this hive's subject, from its last
    /// token; `None` for a subject that is not `hive.S.inbox.<self>.<H>`.
    pub fn source_of(&self, subject: &str) -> Option<Ident> {
        let rest = subject.strip_prefix(&format!("hive.{}.inbox.{}.", self.swarm, self.hive))?;
        Ident::new(rest).ok()
    }

    pub fn roster_bucket(&self) -> String {
        format!("hive-{}-roster", self.swarm)
    }

    /// This hive's roster key of `agent`.
    pub fn roster_key(&self, agent: &Ident) -> String {
        format!("{}.{}", self.hive, agent)
    }

    /// This hive's heartbeat key in the roster bucket: `_` is in no agent
    /// name, so [`parse_roster_key`] never takes it for a row.
    pub fn beat_key(&self) -> String {
        format!("{}._beat", self.hive)
    }

    /// The reply-inbox prefix of this hive's connection.
    pub fn inbox_prefix(&self) -> String {
        format!("_INBOX.{}.{}", self.swarm, self.hive)
    }
}

/// A roster key split into its hive and agent.
pub fn parse_roster_key(key: &str) -> Option<(Ident, Ident)> {
    let (hive, agent) = key.split_once('.')?;
    Some((Ident::new(hive).ok()?, Ident::new(agent).ok()?))
}

#[cfg(test)]
#[path = "names_tests.rs"]
mod tests;
