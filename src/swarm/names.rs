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
//! - `H`'s reply inboxes `_INBOX.S.H.>` (a hive may subscribe only there).

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
mod tests {
    use super::*;
    use crate::testing::id;

    fn names() -> Names {
        Names {
            swarm: id("s"),
            hive: id("hive-b"),
        }
    }

    #[test]
    fn a_message_subject_names_destination_then_source() {
        let n = names();
        assert_eq!(n.subject_to(&id("hive-a")), "hive.s.inbox.hive-a.hive-b");
        assert_eq!(n.own_filter(), "hive.s.inbox.hive-b.*");
        assert_eq!(n.stream(), "HIVE-s");
        assert_eq!(n.stream_subjects(), "hive.s.inbox.>");
    }

    #[test]
    fn the_source_is_read_only_from_this_hives_own_subjects() {
        let n = names();
        assert_eq!(
            n.source_of("hive.s.inbox.hive-b.hive-a"),
            Some(id("hive-a"))
        );
        for other in [
            "hive.s.inbox.hive-c.hive-a",
            "hive.t.inbox.hive-b.hive-a",
            "hive.s.inbox.hive-b.hive-a.x",
            "hive.s.inbox.hive-b.",
        ] {
            assert_eq!(n.source_of(other), None, "{other}");
        }
    }

    #[test]
    fn roster_keys_round_trip_and_junk_keys_are_refused() {
        let n = names();
        let key = n.roster_key(&id("bob"));
        assert_eq!(key, "hive-b.bob");
        assert_eq!(parse_roster_key(&key), Some((id("hive-b"), id("bob"))));
        assert_eq!(parse_roster_key("hive-b"), None);
        assert_eq!(parse_roster_key("hive-b.bob.x"), None);
        assert_eq!(n.roster_bucket(), "hive-s-roster");
        assert_eq!(n.inbox_prefix(), "_INBOX.s.hive-b");
    }
}
