use std::path::Path;
use std::time::{Duration, SystemTime};

use super::*;

/// A store at `dir` with `versions` (oldest first, each a minute apart)
/// and `current` naming `current`.
fn store(dir: &Path, versions: &[&str], current: &str) {
    let start = SystemTime::UNIX_EPOCH + Duration::from_secs(1_796_000_000);
    for (i, v) in versions.iter().enumerate() {
        std::fs::create_dir_all(dir.join(v).join("usr/bin")).unwrap();
        std::fs::write(dir.join(v).join("usr/bin/env"), "").unwrap();
        let at = start + Duration::from_secs(60 * i as u64);
        std::fs::File::open(dir.join(v))
            .unwrap()
            .set_modified(at)
            .unwrap();
    }
    std::os::unix::fs::symlink(current, dir.join(CURRENT)).unwrap();
}

fn nspawn(dir: &Path, machine: &str, version: &str, store: &Path) {
    std::fs::create_dir_all(dir).unwrap();
    let text = format!(
        "[Files]\nBindReadOnly={}/{version}/usr:/usr\n",
        store.display()
    );
    std::fs::write(dir.join(format!("{machine}.nspawn")), text).unwrap();
}

#[test]
fn prune_keeps_the_current_version_and_those_a_settings_file_names_and_takes_the_rest() {
    let root = tempfile::tempdir().unwrap();
    let (dir, settings) = (root.path().join("images"), root.path().join("nspawn"));
    store(&dir, &["v1", "v2", "v3", "v4"], "v4");
    nspawn(&settings, "h-alice", "v2", &dir);
    // A file the hive did not write, naming the store by another path.
    nspawn(&settings, "other", "v1", Path::new("/srv/elsewhere"));
    assert_eq!(prunable(&dir, &settings).unwrap(), ["v3"]);
    remove(&dir, "v3").unwrap();
    assert!(!dir.join("v3").exists());
    std::fs::remove_file(settings.join("other.nspawn")).unwrap();
    assert_eq!(prunable(&dir, &settings).unwrap(), ["v1"]);
}

/// `share` moves a new version in before it moves `current`.
#[test]
fn a_version_newer_than_the_current_one_is_kept_and_without_current_nothing_goes() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("images");
    store(&dir, &["v1", "v2", "v3"], "v2");
    assert_eq!(prunable(&dir, &root.path().join("none")).unwrap(), ["v1"]);
    std::fs::remove_file(dir.join(CURRENT)).unwrap();
    assert!(
        prunable(&dir, &root.path().join("none"))
            .unwrap()
            .is_empty()
    );
}

#[test]
fn a_symlinked_version_entry_is_never_a_candidate_and_its_removal_is_refused() {
    let root = tempfile::tempdir().unwrap();
    let dir = root.path().join("images");
    store(&dir, &["v1", "v2"], "v2");
    let outside = root.path().join("precious");
    std::fs::create_dir_all(outside.join("usr")).unwrap();
    std::os::unix::fs::symlink(&outside, dir.join("v0")).unwrap();
    assert_eq!(prunable(&dir, &root.path().join("none")).unwrap(), ["v1"]);
    let err = remove(&dir, "v0").unwrap_err().to_string();
    assert!(err.contains("is a link"), "{err}");
    assert!(outside.join("usr").is_dir() && dir.join("v0").exists());
    for bad in ["../precious", "", ".v1.part", CURRENT] {
        let err = remove(&dir, bad).unwrap_err().to_string();
        assert!(err.contains("not a version's name"), "{bad}: {err}");
    }
    assert!(dir.join("v2/usr/bin/env").exists());
}

#[test]
fn a_version_is_named_only_as_a_whole_path_component() {
    assert!(mentions("BindReadOnly=/x/v1/usr:/usr\n", "v1"));
    assert!(mentions("Bind=/x/v1", "v1"));
    assert!(mentions("Bind=/x/v1:/y", "v1"));
    assert!(!mentions("BindReadOnly=/x/v10/usr:/usr\n", "v1"));
    assert!(!mentions("BindReadOnly=/x/v1.1/usr:/usr\n", "v1"));
}
