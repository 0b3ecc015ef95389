use std::os::unix::fs::{MetadataExt as _, symlink};

use super::*;

/// A range the test's own ids (root or a user) are not in.
const BASE: u32 = 0x0009_0000;

/// `top/a/b/file`, `top/a/link -> ../../outside` (a directory with a
/// secret), `top/f`; answers (tempdir, top, outside).
fn tree() -> (tempfile::TempDir, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let top = dir.path().join("top");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(top.join("a/b")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "s").unwrap();
    std::fs::write(top.join("a/b/file"), "x").unwrap();
    std::fs::write(top.join("f"), "y").unwrap();
    symlink("../../outside", top.join("a/link")).unwrap();
    (dir, top, outside)
}

/// The changes a walk would make, in order, as paths under `top` (`.` for
/// `top`), each with the ids it gives.
fn planned(top: &Path, with_top: bool) -> Vec<(String, u32, u32)> {
    let mut seen = Vec::new();
    walk(top, BASE, with_top, true, &mut |path, c| {
        let rel = path.strip_prefix(top).unwrap().display().to_string();
        let rel = if rel.is_empty() { ".".to_owned() } else { rel };
        seen.push((rel, c.uid, c.gid));
        Ok(())
    })
    .unwrap();
    seen
}

#[test]
fn the_walk_hands_over_children_before_their_directory_and_never_enters_a_symlink() {
    let (_dir, top, _outside) = tree();
    let owner = BASE + AGENT_UID;
    let order: Vec<String> = planned(&top, true)
        .into_iter()
        .map(|(p, uid, gid)| {
            assert_eq!((uid, gid), (owner, owner), "{p}");
            p
        })
        .collect();
    assert_eq!(order, ["a/b/file", "a/b", "a/link", "a", "f", "."]);
}

#[test]
fn the_entries_walk_leaves_the_top_directory_alone() {
    let (_dir, top, _outside) = tree();
    let order: Vec<String> = planned(&top, false).into_iter().map(|c| c.0).collect();
    assert_eq!(order, ["a/b/file", "a/b", "a/link", "a", "f"]);
}

#[test]
fn ids_already_in_the_range_are_kept_and_others_become_the_agent_user() {
    let dir = tempfile::tempdir().unwrap();
    let mut st = nix::sys::stat::stat(dir.path()).unwrap();
    st.st_uid = 0;
    st.st_gid = 0;
    let owner = BASE + AGENT_UID;
    assert_eq!(new_ids(&st, BASE), Some((owner, owner)), "host root");
    st.st_uid = BASE + 5;
    assert_eq!(
        new_ids(&st, BASE),
        Some((BASE + 5, owner)),
        "a gid of the host"
    );
    st.st_gid = BASE;
    assert_eq!(new_ids(&st, BASE), None, "all the container's already");
    st.st_uid = BASE + USER_RANGE;
    assert_eq!(new_ids(&st, BASE), Some((owner, BASE)), "the next range's");
}

#[test]
fn a_top_that_is_a_symlink_is_refused_and_a_missing_one_is_nothing_to_do() {
    let (dir, top, _outside) = tree();
    let link = dir.path().join("link-to-top");
    symlink(&top, &link).unwrap();
    assert!(walk(&link, BASE, true, true, &mut |_, _| Ok(())).is_err());
    assert!(hand_over_entries(&link, BASE).is_err());
    assert!(hand_over_entries(&dir.path().join("none"), BASE).is_ok());
}

#[test]
fn a_tree_deeper_than_the_cap_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let mut deep = dir.path().join("top");
    for _ in 0..=MAX_DEPTH + 1 {
        deep.push("d");
    }
    std::fs::create_dir_all(&deep).unwrap();
    let err = walk(
        &dir.path().join("top"),
        BASE,
        true,
        true,
        &mut |_, _| Ok(()),
    )
    .unwrap_err()
    .to_string();
    assert!(err.contains("deeper"), "{err}");
}

/// The real change of owner (root only: elsewhere it is skipped, saying
/// so): every entry the range's `agent`, the symlink itself changed and
/// its target not.
#[test]
fn as_root_the_tree_becomes_the_agent_users_and_a_symlinks_target_stays_its_owners() {
    if !nix::unistd::geteuid().is_root() {
        eprintln!("skipped: changing owners needs root");
        return;
    }
    let (_dir, top, outside) = tree();
    let owner = BASE + AGENT_UID;
    hand_over(&top, BASE).unwrap();
    for rel in ["", "a", "a/b", "a/b/file", "a/link", "f"] {
        let meta = std::fs::symlink_metadata(top.join(rel)).unwrap();
        assert_eq!((meta.uid(), meta.gid()), (owner, owner), "{rel:?}");
    }
    for p in [outside.clone(), outside.join("secret")] {
        assert_eq!(std::fs::metadata(&p).unwrap().uid(), 0, "{}", p.display());
    }
    // Entries only: the top keeps its owner.
    let (_dir2, top2, _) = tree();
    hand_over_entries(&top2, BASE).unwrap();
    assert_eq!(std::fs::metadata(&top2).unwrap().uid(), 0);
    assert_eq!(std::fs::metadata(top2.join("f")).unwrap().uid(), owner);
}

/// The runtime directory's adoption: its entries only, a directory among
/// them changed as an entry and not entered, the top last.
#[test]
fn an_entries_only_walk_changes_a_directory_without_entering_it() {
    let (_dir, top, _outside) = tree();
    let mut seen = Vec::new();
    walk(&top, BASE, true, false, &mut |path, _| {
        seen.push(path.strip_prefix(&top).unwrap().display().to_string());
        Ok(())
    })
    .unwrap();
    assert_eq!(seen, ["a", "f", ""]);
}
