use super::*;

#[test]
fn a_store_without_current_has_no_shared_image() {
    let dir = tempfile::tempdir().unwrap();
    assert_eq!(current_usr(dir.path()).unwrap(), None);
    assert_eq!(current_usr(&dir.path().join("missing")).unwrap(), None);
}

#[test]
fn current_names_the_usr_of_its_version() {
    let dir = tempfile::tempdir().unwrap();
    std::fs::create_dir_all(dir.path().join("20261207-1/usr")).unwrap();
    std::fs::create_dir_all(dir.path().join("20261207-2/usr")).unwrap();
    std::os::unix::fs::symlink("20261207-2", dir.path().join(CURRENT)).unwrap();
    assert_eq!(
        current_usr(dir.path()).unwrap(),
        Some(dir.path().join("20261207-2/usr"))
    );
}

/// A link out of the store (absolute, `..`, a hidden name) or to a version
/// without its `usr` is refused with the link named, never followed.
#[test]
fn a_current_pointing_out_of_the_store_or_at_nothing_is_refused() {
    for target in ["/usr", "../etc", "a/../../b", ".hidden", "v1"] {
        let dir = tempfile::tempdir().unwrap();
        std::os::unix::fs::symlink(target, dir.path().join(CURRENT)).unwrap();
        let err = current_usr(dir.path()).unwrap_err().to_string();
        assert!(
            err.contains("run systemd/image/share again"),
            "{target}: {err}"
        );
    }
}

/// A new agent and a rebuilt full-copy or older-version agent take the
/// store's current version; a host-`/usr` agent keeps its bind; without
/// a store nothing moves.
#[test]
fn a_rebuild_moves_image_agents_to_the_current_version_and_keeps_host_usr_agents() {
    let dir = tempfile::tempdir().unwrap();
    let old = Usr::Shared("/var/lib/hive-images/v1/usr".into());
    assert_eq!(usr_for(None, dir.path(), true).unwrap(), Usr::Host);
    assert_eq!(usr_for(None, dir.path(), false).unwrap(), Usr::Own);
    assert_eq!(usr_for(Some(old.clone()), dir.path(), true).unwrap(), old);
    std::fs::create_dir_all(dir.path().join("v2/usr")).unwrap();
    std::os::unix::fs::symlink("v2", dir.path().join(CURRENT)).unwrap();
    let current = Usr::Shared(dir.path().join("v2/usr"));
    for written in [None, Some(Usr::Own), Some(old)] {
        assert_eq!(usr_for(written, dir.path(), true).unwrap(), current);
    }
    assert_eq!(
        usr_for(Some(Usr::Host), dir.path(), false).unwrap(),
        Usr::Host
    );
}

#[test]
fn a_rebuild_that_moves_the_image_is_said_with_both_versions_and_one_that_does_not_is_none() {
    let shared = |v: &str| Usr::Shared(format!("/var/lib/hive-images/{v}/usr").into());
    assert_eq!(
        update_said(&shared("20261207-1"), &shared("20261208-1")).as_deref(),
        Some("the shared agent image 20261208-1 is newer than its 20261207-1")
    );
    let moved = update_said(&Usr::Own, &shared("20261208-1")).unwrap();
    assert!(
        moved.contains("full copy") && moved.contains("20261208-1"),
        "{moved}"
    );
    assert_eq!(update_said(&shared("v1"), &shared("v1")), None);
    assert_eq!(update_said(&Usr::Host, &Usr::Host), None);
    assert_eq!(update_said(&Usr::Own, &Usr::Own), None);
}

/// Versions are the store's directories with a version's name: a link
/// (even to a directory), `share`'s hidden `.part` and a file are none.
#[test]
fn the_store_lists_its_version_directories_and_names_the_current_one() {
    let dir = tempfile::tempdir().unwrap();
    for v in ["v2/usr", "v1/usr", ".v3.part/usr", "elsewhere/usr"] {
        std::fs::create_dir_all(dir.path().join(v)).unwrap();
    }
    std::fs::write(dir.path().join("notes"), "").unwrap();
    std::os::unix::fs::symlink("elsewhere", dir.path().join("v0")).unwrap();
    std::os::unix::fs::symlink("v2", dir.path().join(CURRENT)).unwrap();
    let store = read_store(dir.path()).unwrap();
    assert_eq!(store.versions, ["elsewhere", "v1", "v2"]);
    assert_eq!(store.current.as_deref(), Some("v2"));
    assert_eq!(
        read_store(&dir.path().join("none")).unwrap(),
        Store::default()
    );
}

#[test]
fn an_agents_usr_is_its_version_by_name_or_outside_the_store_by_path() {
    let store = Path::new("/var/lib/hive-images");
    let shared = |p: &str| Usr::Shared(p.into());
    assert_eq!(
        agent_image(&shared("/var/lib/hive-images/v1/usr"), store),
        AgentImage::Shared("v1".into())
    );
    assert_eq!(
        agent_image(&shared("/srv/images/v1/usr"), store),
        AgentImage::Shared("/srv/images/v1".into())
    );
    assert_eq!(agent_image(&Usr::Own, store), AgentImage::FullCopy);
    assert_eq!(agent_image(&Usr::Host, store), AgentImage::Host);
}
