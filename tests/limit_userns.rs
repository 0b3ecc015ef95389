//! `hive-c0re limit-userns` against a real user namespace (issue 44): the
//! helper the daemon has systemd run after each container start caps the
//! namespace's inotify instances and watches, the kernel holds a flood from
//! inside to that cap, and the caller's own namespace is neither changed
//! nor accepted as a target. Needs root (`unshare --user`); the
//! real-systemd tier (`tests/system/tests/inotify.sh`) runs the same helper
//! through the daemon, against an agent's container.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(clippy::disallowed_methods)] // runs the binary under test and unshare/nsenter

use std::process::{Child, Command, Output, Stdio};
use std::time::{Duration, Instant};

const BIN: &str = env!("CARGO_BIN_EXE_hive-c0re");

/// A process in a user namespace of its own (root inside is the caller),
/// killed on drop.
struct Namespaced(Child);

impl Namespaced {
    fn start() -> Self {
        let child = Command::new("unshare")
            .args(["--user", "--map-root-user", "sleep", "60"])
            .stdin(Stdio::null())
            .spawn()
            .expect("unshare (util-linux)");
        let me = std::fs::read_link("/proc/self/ns/user").unwrap();
        let path = format!("/proc/{}/ns/user", child.id());
        let end = Instant::now() + Duration::from_secs(10);
        // unshare execs sleep in the new namespace: wait until it has.
        while std::fs::read_link(&path).ok().is_none_or(|ns| ns == me) {
            assert!(
                Instant::now() < end,
                "unshare did not enter a user namespace"
            );
            std::thread::sleep(Duration::from_millis(10));
        }
        Self(child)
    }

    fn pid(&self) -> u32 {
        self.0.id()
    }

    /// `argv` run inside the namespace (nsenter --user).
    fn run(&self, argv: &[&str]) -> Output {
        Command::new("nsenter")
            .args(["--user", "--target", &self.pid().to_string(), "--"])
            .args(argv)
            .output()
            .unwrap()
    }
}

impl Drop for Namespaced {
    fn drop(&mut self) {
        let _ = self.0.kill();
        let _ = self.0.wait();
    }
}

fn root() -> bool {
    if nix::unistd::geteuid().is_root() {
        return true;
    }
    eprintln!("skipped: needs root (unshare --user, setns)");
    false
}

fn limit(leader: u32, instances: u32, watches: u32) -> Output {
    Command::new(BIN)
        .args([
            "limit-userns",
            "--leader",
            &leader.to_string(),
            "--inotify-instances",
            &instances.to_string(),
            "--inotify-watches",
            &watches.to_string(),
        ])
        .output()
        .unwrap()
}

fn text(bytes: &[u8]) -> String {
    String::from_utf8_lossy(bytes).trim().to_owned()
}

const FLOOD: &str = "import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
n = 0
while n < 4096 and libc.inotify_init1(0) >= 0:
    n += 1
print(n, errno.errorcode.get(ctypes.get_errno(), '?'))";

#[test]
fn the_helper_caps_a_user_namespace_and_a_flood_inside_stops_there() {
    if !root() {
        return;
    }
    let own = "/proc/sys/user/max_inotify_instances";
    let before = std::fs::read_to_string(own).unwrap();
    let ns = Namespaced::start();
    let out = limit(ns.pid(), 8, 1000);
    assert!(out.status.success(), "{}", text(&out.stderr));
    assert_eq!(
        text(&out.stdout),
        format!(
            "user namespace of process {}: max_inotify_instances 8, max_inotify_watches 1000",
            ns.pid()
        )
    );
    let caps = ns.run(&[
        "cat",
        "/proc/sys/user/max_inotify_instances",
        "/proc/sys/user/max_inotify_watches",
    ]);
    assert_eq!(text(&caps.stdout), "8\n1000");
    // 8 instances at most for the namespace's root, then EMFILE.
    let flood = ns.run(&["python3", "-c", FLOOD]);
    assert_eq!(text(&flood.stdout), "8 EMFILE", "{}", text(&flood.stderr));
    // The caller's namespace (the host's) kept its own.
    assert_eq!(std::fs::read_to_string(own).unwrap(), before);
}

#[test]
fn the_helper_refuses_the_callers_own_namespace_and_a_leader_that_is_gone() {
    if !root() {
        return;
    }
    let out = limit(std::process::id(), 8, 1000);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("shares the host's user namespace"),
        "{}",
        text(&out.stderr)
    );
    let out = limit(u32::MAX, 8, 1000);
    assert!(!out.status.success());
    assert!(
        text(&out.stderr).contains("cannot open /proc/4294967295/ns/user"),
        "{}",
        text(&out.stderr)
    );
}

#[test]
fn a_cap_of_zero_is_refused_before_anything_is_joined() {
    let out = limit(1, 0, 1000);
    assert!(!out.status.success());
    assert!(text(&out.stderr).contains("--inotify-instances"));
}
