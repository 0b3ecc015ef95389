//! hivectl as an operator uses it, against the real daemon (fake driver):
//! podman/systemctl conventions, what each verb prints, `watch`.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader};
use std::process::{Child, Command, Stdio};
use std::sync::mpsc::{self, Receiver};
use std::time::Duration;

use common::journal_files::{Entry, journal_remote, now_us, text, write_journal};
use common::{Daemon, HIVECTL, Launch, daemon_with, hivectl};

/// The STATE cell of `name` in `hivectl status`.
fn state(d: &Daemon, name: &str) -> String {
    let (code, out, err) = hivectl(d, &["status", "--no-legend"]);
    assert_eq!(code, 0, "{err}");
    let line = out
        .lines()
        .find(|l| l.split_whitespace().next() == Some(name))
        .unwrap_or_else(|| panic!("{name} not in {out}"));
    line.split("  ")
        .map(str::trim)
        .filter(|c| !c.is_empty())
        .nth(1)
        .unwrap()
        .to_owned()
}

#[test]
fn stop_is_clean_by_default_and_kill_is_hard_and_neither_leaves_the_agent_failed() {
    let d = daemon_with(&["alice", "bob"]);
    assert_eq!(hivectl(&d, &["stop", "alice"]).0, 0);
    assert_eq!(state(&d, "alice"), "stopped");
    let (code, out, err) = hivectl(&d, &["kill", "bob"]);
    assert_eq!((code, out.as_str()), (0, "bob: stopped\n"), "{err}");
    assert_eq!(state(&d, "bob"), "stopped");
    assert_eq!(hivectl(&d, &["start", "bob"]).0, 0);
    assert_eq!(hivectl(&d, &["stop", "--force", "bob"]).0, 0);
    assert_eq!(state(&d, "bob"), "stopped");
    // An operator's hard stop is not a crash: nothing recorded as one.
    let (_, log, _) = hivectl(&d, &["journal", "--grep", "crashed", "-o", "cat"]);
    assert!(!log.contains("bob"), "{log}");
}

#[test]
fn stop_all_stops_the_running_agents_and_reports_the_stopped_ones_as_left_alone() {
    let d = daemon_with(&["alice"]);
    // The manager's container is stopped: before, --all failed on it.
    let (code, out, err) = hivectl(&d, &["stop", "--all"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "ruth: already stopped, left alone by stop\nalice: stopped\n"
    );
    let (code, out, _) = hivectl(&d, &["stop", "--all"]);
    assert_eq!(code, 0);
    assert!(out.contains("alice: already stopped"), "{out}");
    let (code, out, _) = hivectl(&d, &["start", "--all"]);
    assert_eq!(code, 0);
    assert_eq!(out, "alice: running\nruth: running\n");
}

/// The lines of `out`, sorted: what a verb over several agents reported,
/// whatever the roster's order.
fn sorted(out: &str) -> Vec<&str> {
    let mut lines: Vec<&str> = out.lines().collect();
    lines.sort_unstable();
    lines
}

#[test]
fn restart_kill_and_destroy_act_on_each_name_given_and_report_each() {
    let d = daemon_with(&["alice", "bob", "carol"]);
    let (code, out, err) = hivectl(&d, &["restart", "alice", "bob", "alice"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "alice: running\nbob: running\n"),
        "{err}"
    );
    let (code, out, err) = hivectl(&d, &["kill", "alice", "bob", "-s", "HUP"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "alice: sent SIGHUP\nbob: sent SIGHUP\n"),
        "{err}"
    );
    let (code, out, err) = hivectl(&d, &["kill", "alice", "bob"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "alice: stopped\nbob: stopped\n"),
        "{err}"
    );
    let (code, out, err) = hivectl(&d, &["destroy", "alice", "bob"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        out,
        "alice: destroyed (state kept; `destroy --purge alice` deletes it)\n\
         bob: destroyed (state kept; `destroy --purge bob` deletes it)\n"
    );
    assert_eq!(hivectl(&d, &["list"]).1, "carol\nruth\n");
    // Destroyed: their leftovers are still named for --purge.
    let (code, out, err) = hivectl(&d, &["destroy", "--purge", "alice", "bob"]);
    assert_eq!(
        (code, out.as_str()),
        (
            0,
            "alice: destroyed and purged\nbob: destroyed and purged\n"
        ),
        "{err}"
    );
}

#[test]
fn an_unknown_name_among_several_stops_the_verb_before_anything_acts() {
    let d = daemon_with(&["alice", "bob"]);
    for verb in [
        &["kill"][..],
        &["restart"],
        &["destroy"],
        &["kill", "-s", "HUP"],
    ] {
        let args: Vec<&str> = verb
            .iter()
            .copied()
            .chain(["alice", "zed", "bob"])
            .collect();
        let (code, out, err) = hivectl(&d, &args);
        assert_eq!((code, out.as_str()), (1, ""), "{args:?}: {err}");
        assert_eq!(
            err,
            "hivectl: agent \"zed\" is not managed by this hive\n\
             hivectl: nothing was done: every name must be managed (`hivectl list` shows them)\n",
            "{args:?}"
        );
    }
    assert_eq!(
        (state(&d, "alice"), state(&d, "bob")),
        ("running".into(), "running".into())
    );
}

#[test]
fn a_failure_for_one_name_is_told_and_exits_nonzero_while_the_others_are_done() {
    let d = daemon_with(&["alice", "bob"]);
    assert_eq!(hivectl(&d, &["stop", "bob"]).0, 0);
    // A signal for a stopped container is refused (not_running, exit 1).
    let (code, out, err) = hivectl(&d, &["kill", "-s", "HUP", "bob", "alice"]);
    assert_eq!((code, out.as_str()), (1, "alice: sent SIGHUP\n"), "{err}");
    assert!(err.contains("\"bob\" is not running"), "{err}");
}

/// Used to be: `restart-all` started every stopped agent, the manager too;
/// `restart`, `kill` and `destroy` took one name.
#[test]
fn restart_and_kill_with_all_act_on_what_runs_and_destroy_all_is_refused() {
    let d = daemon_with(&["alice", "bob"]);
    assert_eq!(hivectl(&d, &["stop", "bob"]).0, 0);
    let (code, out, err) = hivectl(&d, &["restart", "--all"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        sorted(&out),
        [
            "alice: running",
            "bob: already stopped, left alone by restart",
            "ruth: already stopped, left alone by restart"
        ]
    );
    let (code, out, err) = hivectl(&d, &["restart-all"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "every running agent restarted\n"),
        "{err}"
    );
    assert_eq!(
        (state(&d, "bob"), state(&d, "ruth")),
        ("stopped".into(), "stopped".into())
    );
    let (code, out, err) = hivectl(&d, &["destroy", "--all"]);
    assert_eq!((code, out.as_str()), (2, ""), "{err}");
    assert!(
        err.contains("destroy --all is refused") && err.contains("name the agents"),
        "{err}"
    );
    assert_eq!(hivectl(&d, &["list"]).1, "alice\nbob\nruth\n");
    let (code, out, err) = hivectl(&d, &["kill", "--all"]);
    assert_eq!(code, 0, "{err}");
    assert_eq!(
        sorted(&out),
        [
            "alice: stopped",
            "bob: already stopped, left alone by kill",
            "ruth: already stopped, left alone by kill"
        ]
    );
}

#[test]
fn spawn_waits_and_says_the_agent_runs_and_no_block_returns_at_once() {
    let d = Daemon::start(Launch::Standalone);
    let (code, out, err) = hivectl(&d, &["spawn", "alice"]);
    assert_eq!((code, out.as_str()), (0, "alice: running\n"), "{err}");
    let (code, out, err) = hivectl(&d, &["spawn", "bob", "--no-block"]);
    // The fake finishes at once, so the answer is already the outcome.
    assert_eq!((code, out.as_str()), (0, "bob: running\n"), "{err}");
    let (code, _, err) = hivectl(&d, &["spawn", "alice"]);
    assert_eq!(code, 1);
    assert!(err.contains("alice"), "{err}");
}

#[test]
fn request_spawn_prints_the_approval_id_and_pending_shows_only_pending_rows() {
    let d = Daemon::start(Launch::Standalone);
    let (code, out, err) = hivectl(&d, &["request-spawn", "bob"]);
    assert_eq!(code, 0, "{err}");
    assert!(out.starts_with("approval 1: spawn bob, pending"), "{out}");
    assert_eq!(hivectl(&d, &["request-spawn", "carol"]).0, 0);
    let (_, out, _) = hivectl(&d, &["approve", "1"]);
    assert_eq!(out, "approval 1: approved\n");
    let (_, out, _) = hivectl(&d, &["pending", "-q"]);
    assert_eq!(out, "2\n");
    let (_, out, _) = hivectl(&d, &["pending", "--all", "-q"]);
    assert_eq!(out, "1\n2\n");
}

#[test]
fn status_has_one_state_column_in_natural_order_and_quiet_prints_names() {
    let d = daemon_with(&["a10", "a2", "a1"]);
    assert_eq!(hivectl(&d, &["pause", "a2"]).1, "a2: paused\n");
    let (code, out, _) = hivectl(&d, &["status"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("NAME") && lines[0].contains("STATE"),
        "{out}"
    );
    assert!(
        !lines[0].contains("RUNNING") && !lines[0].contains("MODEL"),
        "{out}"
    );
    let names: Vec<&str> = lines[1..]
        .iter()
        .map(|l| l.split_whitespace().next().unwrap())
        .collect();
    assert_eq!(names, ["a1", "a2", "a10", "ruth"], "{out}");
    assert_eq!(state(&d, "a2"), "paused");
    assert_eq!(state(&d, "ruth"), "stopped");
    assert_eq!(hivectl(&d, &["status", "-q"]).1, "a1\na2\na10\nruth\n");
    // Not a terminal: no colour codes, whatever NO_COLOR says.
    assert!(!out.contains('\x1b'), "{out:?}");
}

#[test]
fn journal_takes_the_agent_name_in_both_forms() {
    let d = daemon_with(&["alice"]);
    for form in ["alice", "h-alice"] {
        let (_, _, err) = hivectl(&d, &["journal", "--agent", form, "-n", "5"]);
        // Whatever the journal holds here, the filter was accepted.
        assert!(!err.contains("h-<agent>"), "{form}: {err}");
    }
}

/// A streaming hivectl (`watch`, `journal -f`) running, its stdout lines
/// arriving on a channel.
struct Watch {
    child: Child,
    lines: Receiver<String>,
}

impl Watch {
    fn start(d: &Daemon) -> Self {
        Self::run(d, &["watch"])
    }

    fn run(d: &Daemon, args: &[&str]) -> Self {
        let mut child = Command::new(HIVECTL)
            .arg("--socket")
            .arg(d.socket())
            .args(args)
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .spawn()
            .unwrap();
        let stdout = child.stdout.take().unwrap();
        let (tx, lines) = mpsc::channel();
        std::thread::spawn(move || {
            for line in BufReader::new(stdout).lines() {
                let Ok(line) = line else { return };
                if tx.send(line).is_err() {
                    return;
                }
            }
        });
        Self { child, lines }
    }

    /// The next line, within 10 s.
    fn next(&self) -> String {
        self.lines
            .recv_timeout(Duration::from_secs(10))
            .expect("hivectl printed nothing within 10 s")
    }

    /// Lines until one contains `needle` (within 10 s each).
    fn until(&self, needle: &str) -> Vec<String> {
        let mut seen = Vec::new();
        loop {
            let line = self.next();
            let done = line.contains(needle);
            seen.push(line);
            if done {
                return seen;
            }
        }
    }
}

impl Drop for Watch {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
    }
}

#[test]
fn watch_prints_the_roster_first_then_each_change_once_with_its_time_and_removals() {
    let d = daemon_with(&["alice"]);
    let w = Watch::start(&d);
    // The roster now, without times.
    assert_eq!(w.next(), "alice: running, parent ruth");
    assert_eq!(w.next(), "ruth: stopped");
    assert_eq!(hivectl(&d, &["restart", "alice"]).0, 0);
    assert_eq!(hivectl(&d, &["stop", "alice"]).0, 0);
    let seen = w.until("alice: stopped");
    let stopped = seen.last().unwrap();
    assert!(
        stopped.starts_with("20") && stopped.contains("Z alice: stopped"),
        "{seen:?}"
    );
    assert_eq!(hivectl(&d, &["destroy", "alice"]).0, 0);
    let seen = w.until("alice: removed");
    // No line repeats its predecessor for the same agent.
    let all: Vec<String> = seen
        .iter()
        .map(|l| l.split_once(' ').unwrap().1.to_owned())
        .collect();
    for pair in all.windows(2) {
        assert_ne!(pair[0], pair[1], "{seen:?}");
    }
}

#[test]
fn watch_reconnects_when_the_daemon_restarts() {
    let d = daemon_with(&["alice"]);
    let w = Watch::start(&d);
    w.until("ruth: stopped");
    let dir = d.kill_hard();
    let d = Daemon::start_in(dir, Launch::Standalone);
    // After the restart the fake driver's containers start out stopped:
    // the change reaches the same watch.
    assert_eq!(hivectl(&d, &["start", "ruth"]).0, 0);
    let seen = w.until("ruth: running");
    assert!(seen.last().unwrap().contains("Z ruth: running"), "{seen:?}");
}

#[test]
fn destroy_then_destroy_purge_deletes_the_kept_state() {
    let d = daemon_with(&["alice"]);
    let (code, out, _) = hivectl(&d, &["destroy", "alice"]);
    assert_eq!(code, 0);
    assert!(out.contains("state kept"), "{out}");
    assert!(d.state_dir().join("agents/alice").exists());
    let (code, out, err) = hivectl(&d, &["destroy", "alice", "--purge"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "alice: destroyed and purged\n"),
        "{err}"
    );
    assert!(!d.state_dir().join("agents/alice").exists());
    let (code, _, err) = hivectl(&d, &["destroy", "alice", "--purge"]);
    assert_eq!(code, 1);
    assert!(err.contains("not managed by this hive"), "{err}");
}

#[test]
fn logs_under_the_fake_driver_say_there_is_no_container_journal() {
    // What used to break: journalctl's "Failed to open system bus".
    let d = daemon_with(&["alice"]);
    for args in [&["logs", "alice"][..], &["logs", "h-alice", "-f"]] {
        let (code, _, err) = hivectl(&d, args);
        assert_eq!(code, 1, "{args:?}: {err}");
        assert!(
            err.contains("fake driver") && err.contains("journal_directory"),
            "{err}"
        );
        assert!(!err.contains("system bus"), "{err}");
    }
}

#[test]
fn journal_follow_prints_the_newest_lines_then_a_line_written_later() {
    // What was missing: `journal` had no -f (only `logs -f` followed).
    let remote = journal_remote().expect("systemd-journal-remote (tests/run installs it)");
    let journal = tempfile::tempdir().unwrap();
    let line = |message| Entry {
        realtime_us: now_us(),
        fields: vec![text("PRIORITY", "6"), text("MESSAGE", message)],
    };
    write_journal(&remote, journal.path(), "old", &[line("written before")]);
    let config = serde_json::json!({ "journal_directory": journal.path() }).to_string();
    let d = Daemon::start_with_config(&config);
    let follow = Watch::run(&d, &["journal", "-f", "-n", "5", "-o", "cat"]);
    assert_eq!(follow.next(), "written before");
    write_journal(&remote, journal.path(), "new", &[line("written later")]);
    assert_eq!(follow.next(), "written later");
}

#[test]
fn journal_follow_with_until_is_refused_by_hivectl_and_by_the_daemon() {
    let d = Daemon::start(Launch::Standalone);
    let (code, _, err) = hivectl(&d, &["journal", "-f", "--until", "now"]);
    assert_eq!(code, 2, "{err}");
    assert!(err.contains("--until"), "{err}");
    let answer = d.request(r#"{"cmd":"journal","until":"now","follow":true}"#);
    assert!(answer.contains(r#""ok":false"#), "{answer}");
    assert!(answer.contains("drop \\\"until\\\""), "{answer}");
}

#[test]
fn kill_with_a_signal_sends_it_and_names_it_and_a_bad_name_is_a_usage_error() {
    let d = daemon_with(&["alice", "bob"]);
    let (code, out, err) = hivectl(&d, &["kill", "alice", "--signal", "WINCH"]);
    assert_eq!((code, out.as_str()), (0, "alice: sent SIGWINCH\n"), "{err}");
    assert_eq!(state(&d, "alice"), "running");
    // SIGTERM goes to the container's init, a systemd, which re-executes
    // itself: the container stays up (the fake copies it).
    let (code, out, err) = hivectl(&d, &["kill", "alice", "-s", "sigterm"]);
    assert_eq!((code, out.as_str()), (0, "alice: sent SIGTERM\n"), "{err}");
    assert_eq!(state(&d, "alice"), "running");
    let (code, out, err) = hivectl(&d, &["stop", "alice"]);
    assert_eq!((code, out.as_str()), (0, "alice: stopped\n"), "{err}");
    let (code, _, err) = hivectl(&d, &["kill", "alice", "--signal", "HUP"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("not running") && err.contains("alice"),
        "{err}"
    );
    // KILL is the hard stop kill always was.
    let (code, out, err) = hivectl(&d, &["kill", "bob", "--signal", "9"]);
    assert_eq!((code, out.as_str()), (0, "bob: stopped\n"), "{err}");
    let (code, _, err) = hivectl(&d, &["kill", "bob", "--signal", "SEGV"]);
    assert_eq!(code, 2);
    assert!(
        err.contains("unknown signal \"SEGV\"") && err.contains("TERM"),
        "{err}"
    );
}

#[test]
fn status_shows_how_long_a_running_agent_has_been_up_and_nothing_for_a_stopped_one() {
    let d = daemon_with(&["alice"]);
    let (code, out, err) = hivectl(&d, &["status"]);
    assert_eq!(code, 0, "{err}");
    let header: Vec<&str> = out.lines().next().unwrap().split_whitespace().collect();
    assert_eq!(header[..3], ["NAME", "STATE", "UPTIME"], "{out}");
    let cells = |name: &str| -> Vec<String> {
        let line = out
            .lines()
            .find(|l| l.split_whitespace().next() == Some(name))
            .unwrap();
        line.split("  ")
            .map(str::trim)
            .filter(|c| !c.is_empty())
            .map(str::to_owned)
            .collect()
    };
    // Spawned a moment ago: seconds (the fake stamps the start with the
    // daemon's clock, as systemd's ActiveEnterTimestamp).
    let alice = cells("alice");
    assert_eq!(alice[1], "running", "{out}");
    assert!(
        alice[2].ends_with('s') && alice[2][..alice[2].len() - 1].parse::<u32>().unwrap() < 60,
        "{out}"
    );
    assert_eq!(cells("ruth")[1..3], ["stopped", "-"], "{out}");
    let (_, json, _) = hivectl(&d, &["--json", "status"]);
    assert!(json.contains(r#""running_since":"20"#), "{json}");
}

/// The fake driver shares no image: a spawned agent is a full copy, and a
/// prune has nothing to remove; `--json` prints host.sock's answer.
#[test]
fn image_ls_lists_a_spawned_agent_as_a_full_copy_and_prune_has_nothing_to_remove() {
    let d = daemon_with(&[]);
    assert_eq!(hivectl(&d, &["spawn", "carol"]).0, 0);
    let (code, out, err) = hivectl(&d, &["image", "ls"]);
    assert_eq!(code, 0, "{err}");
    let rows: Vec<Vec<&str>> = out
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        rows,
        [
            vec!["IMAGE", "STATE", "AGENTS"],
            vec!["(full", "copy)", "-", "carol"]
        ]
    );
    let (_, json, _) = hivectl(&d, &["--json", "image", "ls"]);
    assert_eq!(
        json.trim(),
        r#"{"version":1,"ok":true,"images":[{"kind":"full_copy","agents":["carol"]}]}"#
    );
    let (code, out, err) = hivectl(&d, &["image", "prune", "--dry-run"]);
    assert_eq!(
        (code, out.as_str()),
        (0, "no unused image versions: nothing to remove\n"),
        "{err}"
    );
    let (_, json, _) = hivectl(&d, &["--json", "image", "prune"]);
    assert_eq!(json.trim(), r#"{"version":1,"ok":true,"pruned":[]}"#);
}
