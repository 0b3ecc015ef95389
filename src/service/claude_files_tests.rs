use std::os::unix::fs::{MetadataExt as _, PermissionsExt as _, symlink};
use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use super::*;
use crate::testing::Attacker;

/// An exported tree: `CLAUDE.md`, `.claude/` with `files` commands, an
/// executable hook and a symlink; answers its path.
fn tree(dir: &Path, files: usize) -> PathBuf {
    let tree = dir.join("tree");
    let commands = tree.join(".claude/commands");
    std::fs::create_dir_all(&commands).unwrap();
    std::fs::write(tree.join("CLAUDE.md"), "be brief\n").unwrap();
    for i in 0..files {
        std::fs::write(commands.join(format!("c{i}.md")), "say hi\n").unwrap();
    }
    let hook = tree.join(".claude/hook.sh");
    std::fs::write(&hook, "#!/bin/sh\n").unwrap();
    std::fs::set_permissions(&hook, std::fs::Permissions::from_mode(0o700)).unwrap();
    symlink("commands/c0.md", tree.join(".claude/first.md")).unwrap();
    tree
}

/// A tree of `files` commands, an agent's state directory and a host
/// directory beside it: (tempdir, tree, state, host directory).
fn setup(files: usize) -> (tempfile::TempDir, PathBuf, PathBuf, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let tree = tree(dir.path(), files);
    let work = dir.path().join("state/agents/alice");
    let outside = dir.path().join("outside");
    std::fs::create_dir_all(&work).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    (dir, tree, work, outside)
}

fn mode(p: &Path) -> u32 {
    std::fs::symlink_metadata(p).unwrap().mode() & 0o7777
}

/// What the agent left is replaced, not written through: its `.claude`
/// and `CLAUDE.md` links are removed and their targets keep their
/// contents; the files come in with modes the agent's user can read,
/// whatever the daemon's umask.
#[test]
fn the_install_replaces_planted_links_and_gives_readable_modes() {
    let (_dir, tree, work, outside) = setup(2);
    std::fs::write(outside.join("CLAUDE.md"), "host\n").unwrap();
    symlink(&outside, work.join(".claude")).unwrap();
    symlink(outside.join("CLAUDE.md"), work.join("CLAUDE.md")).unwrap();
    install(&tree, &work).unwrap();
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 1);
    assert_eq!(
        std::fs::read_to_string(outside.join("CLAUDE.md")).unwrap(),
        "host\n"
    );
    assert_eq!(
        std::fs::read_to_string(work.join("CLAUDE.md")).unwrap(),
        "be brief\n"
    );
    assert_eq!(mode(&work.join("CLAUDE.md")), 0o644);
    for d in [".claude", ".claude/commands"] {
        assert_eq!(mode(&work.join(d)), 0o755, "{d}");
    }
    assert_eq!(mode(&work.join(".claude/commands/c1.md")), 0o644);
    assert_eq!(mode(&work.join(".claude/hook.sh")), 0o755);
    let link = work.join(".claude/first.md");
    assert!(std::fs::symlink_metadata(&link).unwrap().is_symlink());
    assert_eq!(
        std::fs::read_link(&link).unwrap(),
        Path::new("commands/c0.md")
    );
    // Again: what the last install left is replaced.
    install(&tree, &work).unwrap();
    assert!(work.join(".claude/commands/c1.md").is_file());
}

/// The agent's processes alive during the install (as when a stop had not
/// ended) swap `.claude` for a link to a host directory again and again:
/// nothing lands there and its mode stays. (Before, the install made
/// `.claude`, then chmod'ed it and created files in it by path, following
/// the link it had become: root's files in any host directory.)
#[test]
fn a_claude_dir_swapped_for_a_link_during_the_install_leads_nothing_out_of_the_state() {
    let (_dir, tree, work, outside) = setup(300);
    std::fs::set_permissions(&outside, std::fs::Permissions::from_mode(0o700)).unwrap();
    // Each `.claude` the install makes is moved aside and replaced by a
    // link as soon as it is seen.
    let attacker = Attacker::start({
        let (claude, moved, outside) = (work.join(".claude"), work.join("moved"), outside.clone());
        move || {
            if std::fs::symlink_metadata(&claude).is_ok_and(|m| m.is_dir()) {
                let _ = std::fs::remove_dir_all(&moved);
                if std::fs::rename(&claude, &moved).is_ok() {
                    let _ = symlink(&outside, &claude);
                }
            }
            std::thread::yield_now();
        }
    });
    let escaped = || std::fs::read_dir(&outside).unwrap().count() > 0 || mode(&outside) != 0o700;
    let until = Instant::now() + Duration::from_secs(3);
    while Instant::now() < until && !escaped() {
        let _ = install(&tree, &work);
    }
    drop(attacker);
    assert_eq!(
        std::fs::read_dir(&outside).unwrap().count(),
        0,
        "written outside"
    );
    assert_eq!(mode(&outside), 0o700, "the host directory's mode changed");
}
