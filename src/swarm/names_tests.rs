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

#[test]
fn the_heartbeat_key_is_in_the_hives_own_key_space_and_never_read_as_a_row() {
    let n = names();
    let beat = n.beat_key();
    assert!(beat.starts_with("hive-b."), "{beat}");
    assert_eq!(parse_roster_key(&beat), None);
    assert_eq!(
        parse_roster_key(&n.roster_key(&id("alice"))),
        Some((id("hive-b"), id("alice")))
    );
}
