use std::os::unix::fs::{MetadataExt as _, lchown};
use std::path::Path;

use super::super::settings_files::AGENT_UID;
use super::*;

use std::time::{Duration, Instant};

use crate::testing::{Attacker, id, swap_for_a_link};

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

/// The agent (a process of its container still alive, or one racing a
/// start) swaps a directory of its state for a link to a host directory,
/// again and again, while the daemon adopts the state: nothing outside
/// changes owner. (Before, the walk looked at an entry with `lstat`, then
/// listed it by path, following the link it had become meanwhile, and
/// gave away what the link named.) Root only: it changes owners.
#[test]
fn a_directory_swapped_for_a_link_during_the_adoption_gives_nothing_outside_away() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: changing owners needs root");
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    let (state, runtime) = (
        dir.path().join("agents/alice"),
        dir.path().join("run/alice"),
    );
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(state.join("a")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "s").unwrap();
    std::fs::write(state.join("a/f"), "x").unwrap();
    // Many entries beside `a`: the walk takes a while over them.
    for i in 0..1000 {
        std::fs::write(state.join(format!("f{i}")), "").unwrap();
    }
    let attacker = Attacker::start({
        let (a, real, outside) = (state.join("a"), state.join("a.real"), outside.clone());
        move || swap_for_a_link(&a, &real, &outside, Duration::from_micros(500))
    });
    let owned = |p: &Path| std::fs::symlink_metadata(p).unwrap().uid();
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until {
        // Forget the record, so each round adopts the tree again.
        lchown(&state, Some(0), Some(0)).unwrap();
        let _ = ensure(&id("alice"), &state, &runtime);
        if owned(&outside) != 0 || owned(&outside.join("secret")) != 0 {
            break;
        }
    }
    drop(attacker);
    assert_eq!(owned(&outside), 0, "the host directory was given away");
    assert_eq!(
        owned(&outside.join("secret")),
        0,
        "a host file was given away"
    );
}
