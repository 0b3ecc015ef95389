//! The NATS permissions of one hive: the one table of every subject the
//! daemon's client uses, which `src/swarm/README.md` shows (a test keeps the
//! two equal) and the swarm tier's cluster is configured from.
//!
//! The roster watch is an ordered consumer that async-nats recreates after
//! every reconnect under a new name and with its filter in the subject
//! (`CONSUMER.CREATE.KV_hive-S-roster.<name>.$KV.hive-S-roster.>`): the
//! table grants `CONSUMER.CREATE.KV_hive-S-roster.>` besides the bare
//! subject of the first create. Granting only the bare one (as before)
//! refused every recreate, and the hive lost sight of every other hive after
//! a NATS failover until it restarted (issue 30). The roster is every
//! hive's to read, so any filter on it grants nothing new.

/// Subjects hive `hive` of swarm `swarm` may publish to.
pub fn publish_allow(swarm: &str, hive: &str) -> Vec<String> {
    let (s, h) = (swarm, hive);
    vec![
        format!("hive.{s}.inbox.*.{h}"),
        format!("$JS.API.STREAM.INFO.HIVE-{s}"),
        format!("$JS.API.STREAM.CREATE.HIVE-{s}"),
        format!("$JS.API.CONSUMER.INFO.HIVE-{s}.inbox-{h}"),
        format!("$JS.API.CONSUMER.CREATE.HIVE-{s}.inbox-{h}.hive.{s}.inbox.{h}.*"),
        format!("$JS.API.CONSUMER.MSG.NEXT.HIVE-{s}.inbox-{h}"),
        format!("$JS.ACK.HIVE-{s}.inbox-{h}.>"),
        format!("$KV.hive-{s}-roster.{h}.>"),
        format!("$JS.API.STREAM.INFO.KV_hive-{s}-roster"),
        format!("$JS.API.STREAM.CREATE.KV_hive-{s}-roster"),
        format!("$JS.API.CONSUMER.CREATE.KV_hive-{s}-roster"),
        format!("$JS.API.CONSUMER.CREATE.KV_hive-{s}-roster.>"),
        format!("$JS.API.CONSUMER.DELETE.KV_hive-{s}-roster.*"),
        format!("$JS.FC.KV_hive-{s}-roster.>"),
    ]
}

/// Subjects hive `hive` of swarm `swarm` may subscribe to: its own reply
/// prefix, and the roster's puts as they are published (the roster's live
/// feed, which needs no consumer: see `roster.rs`). The roster is every
/// hive's to read through its watch already, so the feed grants nothing new.
pub fn subscribe_allow(swarm: &str, hive: &str) -> Vec<String> {
    vec![
        format!("_INBOX.{swarm}.{hive}.>"),
        format!("$KV.hive-{swarm}-roster.>"),
    ]
}

/// The hive's user in nats-server's config syntax.
pub fn nats_user(swarm: &str, hive: &str, password: &str) -> String {
    let quote = |subjects: Vec<String>| {
        subjects
            .iter()
            .map(|s| format!("\"{s}\""))
            .collect::<Vec<_>>()
            .join(", ")
    };
    format!(
        "{{ user: \"{hive}\", password: \"{password}\", permissions: {{ publish: {{ allow: [{}] }}, subscribe: {{ allow: [{}] }} }} }}",
        quote(publish_allow(swarm, hive)),
        quote(subscribe_allow(swarm, hive)),
    )
}

#[cfg(test)]
#[path = "permissions_tests.rs"]
mod tests;
