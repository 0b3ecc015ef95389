use super::*;

use crate::testing::id;

#[test]
fn ranges_are_whole_slots_of_the_container_block() {
    for n in ["a", "alice", "bob", "x-1"] {
        let base = FIRST + first_slot(&id(n)) * RANGE;
        assert!(
            (FIRST..END).contains(&base) && base.is_multiple_of(RANGE),
            "{n}"
        );
        assert_eq!(base_of(base + AGENT_UID), Some(base));
    }
    assert_eq!(base_of(0), None, "host root records no range");
    assert_eq!(base_of(1000), None);
    assert_eq!(base_of(END), None);
}

#[test]
fn the_agent_user_is_the_one_the_sysusers_file_creates() {
    let file = include_str!("../../../systemd/hive-agent.sysusers");
    let line = file
        .lines()
        .find(|l| l.starts_with("u "))
        .expect("a user line");
    let fields: Vec<&str> = line.split_whitespace().collect();
    assert_eq!(fields[1], "agent");
    assert_eq!(fields[2], AGENT_UID.to_string());
}

// Chowning to another uid needs root; as a user, what can be checked is
// the slot choice, on directories already owned by us.
#[test]
fn a_taken_slot_is_skipped_and_the_record_is_read_back() {
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("agents/alice");
    std::fs::create_dir_all(&state).unwrap();
    assert_eq!(recorded(&state), None);
    assert!(taken(&state).is_empty());
    let not_a_dir = dir.path().join("agents");
    assert!(taken(&not_a_dir.join("nobody-here")).is_empty());
}
