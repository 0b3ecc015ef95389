//! `hive-c0re set-quota` on a real file system (issue 44): the helper the
//! daemon has systemd run before each start puts an agent's directory
//! tree in its project (without following a link out of it), what is
//! created later inherits the project, a process in a user namespace —
//! as every process of an agent's container — cannot take a file out of
//! it, and the limits hold where the kernel enforces project quota.
//!
//! Needs root, a loop device and mkfs.xfs (xfsprogs; tests/run installs
//! it): each test makes a small XFS image. XFS, because it stores project
//! ids whether or not quotas are on; where the kernel has no XFS quota
//! support (`CONFIG_XFS_QUOTA`, absent from some VM kernels) the image is
//! mounted without `prjquota`, the helper must then fail saying so, and
//! the test of the limit says it was skipped.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(clippy::disallowed_methods)] // runs the binary under test, mkfs, mount, unshare

use std::path::{Path, PathBuf};
use std::process::{Command, Output};

const BIN: &str = env!("CARGO_BIN_EXE_hive-c0re");
const PROJECT: u32 = 0x0008_0000;

fn run(program: &str, args: &[&str]) -> Output {
    Command::new(program)
        .args(args)
        .output()
        .unwrap_or_else(|e| panic!("{program}: {e}"))
}

fn ok(program: &str, args: &[&str]) -> String {
    let out = run(program, args);
    assert!(
        out.status.success(),
        "{program} {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A 300 MiB XFS image loop-mounted on a temporary directory (with
/// `prjquota` where the kernel takes it), unmounted on drop.
struct Xfs {
    dir: tempfile::TempDir,
    enforced: bool,
}

impl Xfs {
    fn new() -> Option<Self> {
        if !nix::unistd::geteuid().is_root() {
            eprintln!("skipped: needs root (losetup, mount)");
            return None;
        }
        if run("sh", &["-c", "command -v mkfs.xfs"]).stdout.is_empty() {
            eprintln!("skipped: needs mkfs.xfs (xfsprogs)");
            return None;
        }
        let dir = tempfile::tempdir().unwrap();
        let image = dir.path().join("xfs.img");
        let mnt = dir.path().join("mnt");
        std::fs::create_dir(&mnt).unwrap();
        std::fs::File::create(&image)
            .unwrap()
            .set_len(300 << 20)
            .unwrap();
        ok("mkfs.xfs", &["-q", image.to_str().unwrap()]);
        let (img, at) = (image.to_str().unwrap(), mnt.to_str().unwrap());
        let enforced = run("mount", &["-o", "loop,prjquota", img, at])
            .status
            .success();
        if !enforced {
            ok("mount", &["-o", "loop", img, at]);
        }
        Some(Self { dir, enforced })
    }

    fn path(&self, rel: &str) -> PathBuf {
        self.dir.path().join("mnt").join(rel)
    }
}

impl Drop for Xfs {
    fn drop(&mut self) {
        let mnt = self.dir.path().join("mnt");
        let _ = run("umount", &[mnt.to_str().unwrap()]);
    }
}

/// A file's project id and whether it has PROJINHERIT (`lsattr -pd`:
/// "<projid> <flags> <path>", `P` for PROJINHERIT).
fn project_of(path: &Path) -> (u32, bool) {
    let text = ok("lsattr", &["-pd", path.to_str().unwrap()]);
    let mut words = text.split_whitespace();
    let id = words.next().unwrap().parse().unwrap();
    let flags = words.next().unwrap();
    (id, flags.contains('P'))
}

fn set_quota(dir: &Path, bytes: u64) -> Output {
    run(
        BIN,
        &[
            "set-quota",
            "--project",
            &PROJECT.to_string(),
            "--bytes",
            &bytes.to_string(),
            "--inodes",
            "1000",
            "--dir",
            dir.to_str().unwrap(),
        ],
    )
}

#[test]
fn the_helper_puts_an_agents_tree_in_its_project_without_following_a_link_out_of_it() {
    let Some(fs) = Xfs::new() else { return };
    let state = fs.path("agents/alice");
    let outside = fs.path("hive");
    std::fs::create_dir_all(state.join("work/deep")).unwrap();
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(state.join("work/deep/file"), b"x").unwrap();
    std::fs::write(outside.join("hive.db"), b"db").unwrap();
    std::os::unix::fs::symlink(&outside, state.join("link-to-hive")).unwrap();
    std::os::unix::fs::symlink(outside.join("hive.db"), state.join("link-to-db")).unwrap();
    let out = set_quota(&state, 64 << 20);
    let said = String::from_utf8_lossy(&out.stderr);
    if fs.enforced {
        assert!(out.status.success(), "{said}");
    } else {
        // No quota in this kernel: the helper does its part and fails
        // on the limit, naming what is missing.
        assert!(!out.status.success());
        assert!(said.contains("is it mounted with prjquota?"), "{said}");
    }
    for dir in [&state, &state.join("work"), &state.join("work/deep")] {
        assert_eq!(project_of(dir), (PROJECT, true), "{}", dir.display());
    }
    assert_eq!(project_of(&state.join("work/deep/file")), (PROJECT, false));
    // Nothing a link names was touched.
    assert_eq!(project_of(&outside), (0, false));
    assert_eq!(project_of(&outside.join("hive.db")), (0, false));
    // What is created later is charged to the agent, whoever writes it.
    std::fs::create_dir(state.join("work/new")).unwrap();
    std::fs::write(state.join("work/new/later"), b"y").unwrap();
    assert_eq!(project_of(&state.join("work/new")), (PROJECT, true));
    assert_eq!(project_of(&state.join("work/new/later")), (PROJECT, false));
    // A second run (every start) is the same and needs no walk.
    let again = set_quota(&state, 64 << 20);
    assert_eq!(again.status.success(), fs.enforced);
}

#[test]
fn a_process_in_a_user_namespace_cannot_take_a_file_out_of_its_project() {
    let Some(fs) = Xfs::new() else { return };
    let state = fs.path("agents/bob");
    std::fs::create_dir_all(&state).unwrap();
    std::fs::write(state.join("mine"), b"x").unwrap();
    let _ = set_quota(&state, 64 << 20);
    assert_eq!(project_of(&state.join("mine")), (PROJECT, false));
    // Root of its own user namespace and owner of the files, as an
    // agent's container root is: Linux refuses either change.
    ok("chmod", &["-R", "a+rwX", state.to_str().unwrap()]);
    let mine = state.join("mine");
    for args in [
        vec!["chattr", "-p", "0", mine.to_str().unwrap()],
        vec!["chattr", "-P", state.to_str().unwrap()],
    ] {
        let mut argv = vec!["--user", "--map-root-user"];
        argv.extend(&args);
        let out = run("unshare", &argv);
        assert!(!out.status.success(), "{args:?} succeeded");
        let said = String::from_utf8_lossy(&out.stderr);
        assert!(said.contains("Invalid argument"), "{args:?}: {said}");
    }
    assert_eq!(project_of(&mine), (PROJECT, false));
    assert_eq!(project_of(&state), (PROJECT, true));
}

#[test]
fn writing_past_the_projects_limit_fails_where_the_kernel_enforces_project_quota() {
    let Some(fs) = Xfs::new() else { return };
    if !fs.enforced {
        eprintln!("skipped: this kernel mounts no XFS with prjquota (no CONFIG_XFS_QUOTA)");
        return;
    }
    let state = fs.path("agents/carol");
    std::fs::create_dir_all(&state).unwrap();
    let out = set_quota(&state, 8 << 20);
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let big = state.join("big");
    let out = run(
        "dd",
        &[
            "if=/dev/zero",
            &format!("of={}", big.display()),
            "bs=1M",
            "count=16",
            "oflag=direct",
        ],
    );
    assert!(!out.status.success(), "16 MiB fit in an 8 MiB quota");
    let said = String::from_utf8_lossy(&out.stderr);
    assert!(
        said.contains("Disk quota exceeded") || said.contains("No space left"),
        "{said}"
    );
    // The rest of the file system is still writable.
    std::fs::write(fs.path("hive.db"), vec![0u8; 4 << 20]).unwrap();
}
