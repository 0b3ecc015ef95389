//! The real `hivectl` binary against real Unix sockets: missing, stale and
//! forbidden sockets, and a tiny in-test daemon that answers with canned
//! lines (end-to-end tests against hive-c0re itself live elsewhere).
//!
//! Every run of the binary has a deadline ([`LIMIT`]); a hung hivectl is
//! killed and the test fails.

#![allow(clippy::disallowed_methods)]
// test code runs the binaries and tools under test
// The whole file is test code; clippy.toml's allow-unwrap-in-tests does not
// reach the helpers here because they are not `#[test]` functions.
#![allow(clippy::unwrap_used, clippy::expect_used)]

use std::io::{BufRead, BufReader, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixListener;
use std::os::unix::process::CommandExt;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;
use std::time::Duration;

use nix::sys::signal::{Signal, kill};
use nix::unistd::Pid;

const LIMIT: Duration = Duration::from_secs(10);

/// How to run hivectl.
#[derive(Default)]
struct Run<'a> {
    env: Vec<(&'a str, &'a str)>,
    /// Run as this uid/gid instead of the test's (root).
    as_user: Option<u32>,
}

/// Run hivectl with `args` (after `--socket <socket>`) and wait at most
/// [`LIMIT`] for it.
fn hivectl(socket: &Path, args: &[&str], how: Run<'_>) -> Output {
    // Another uid may not be able to reach the build directory (a clone
    // under a 0700 directory such as `mktemp -d` or a home directory): it
    // runs a copy from a world-readable place.
    let copy = how.as_user.map(|_| world_readable_copy());
    let binary = copy.as_ref().map_or_else(
        || PathBuf::from(env!("CARGO_BIN_EXE_hivectl")),
        |(_, path)| path.clone(),
    );
    let mut cmd = Command::new(binary);
    cmd.arg("--socket")
        .arg(socket)
        .args(args)
        .env_remove("HIVE_SOCKET")
        .env_remove("HIVECTL_TIMEOUT_MS")
        .envs(how.env.iter().copied())
        .stdin(Stdio::null())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped());
    if let Some(id) = how.as_user {
        cmd.uid(id).gid(id);
    }
    let child = cmd.spawn().unwrap();
    let pid = Pid::from_raw(i32::try_from(child.id()).unwrap());
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(child.wait_with_output());
    });
    match rx.recv_timeout(LIMIT) {
        Ok(output) => output.unwrap(),
        Err(_) => {
            let _ = kill(pid, Signal::SIGKILL);
            panic!("hivectl {args:?} did not finish within {LIMIT:?}");
        }
    }
}

/// hivectl copied into a fresh 0755 directory (kept alive by the guard).
fn world_readable_copy() -> (tempfile::TempDir, PathBuf) {
    let dir = tempfile::Builder::new()
        .prefix("hivectl-outsider")
        .tempdir_in("/tmp")
        .unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("hivectl");
    std::fs::copy(env!("CARGO_BIN_EXE_hivectl"), &path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
    (dir, path)
}

fn stderr(out: &Output) -> String {
    String::from_utf8_lossy(&out.stderr).into_owned()
}

fn stdout(out: &Output) -> String {
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// A stand-in daemon for one connection: it reports the request line it
/// read, writes `reply` verbatim and closes — or, with `reply: None`,
/// keeps the connection open without answering until dropped.
struct Daemon {
    _dir: tempfile::TempDir,
    path: PathBuf,
    requests: Receiver<String>,
    _hold: Sender<()>,
}

impl Daemon {
    fn start(reply: Option<String>) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.sock");
        let listener = UnixListener::bind(&path).unwrap();
        let (req_tx, requests) = mpsc::channel();
        let (hold, release) = mpsc::channel::<()>();
        thread::spawn(move || {
            let (mut stream, _) = listener.accept().unwrap();
            let mut line = String::new();
            BufReader::new(stream.try_clone().unwrap())
                .read_line(&mut line)
                .unwrap();
            let _ = req_tx.send(line);
            match reply {
                Some(reply) => stream.write_all(reply.as_bytes()).unwrap(),
                None => {
                    let _ = release.recv();
                }
            }
        });
        Self {
            _dir: dir,
            path,
            requests,
            _hold: hold,
        }
    }

    fn answering(reply: &str) -> Self {
        Self::start(Some(reply.to_owned()))
    }

    fn silent() -> Self {
        Self::start(None)
    }

    /// The request line hivectl sent.
    fn request(&self) -> String {
        self.requests.recv_timeout(LIMIT).unwrap()
    }
}

const ALICE: &str = r#"{"name":"alice","running":true,"failed":false,"needs_update":false,"needs_login":false,"deployed_sha":"0123456789ab","pending_reminders":2,"paused":false,"parent":"ruth","status_text":"triaging","status_set_at":"2026-11-30T12:00:00Z","url":"https://hive.example/agent/alice/"}"#;

#[test]
fn a_missing_socket_exits_3_and_says_to_start_the_socket_unit() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.sock");
    let out = hivectl(&path, &["status"], Run::default());
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.starts_with("hivectl: no socket at "), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("systemctl start hive-c0re.socket"), "{err}");
}

#[test]
fn a_socket_file_left_by_a_dead_listener_exits_3_and_is_called_stale() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.sock");
    drop(UnixListener::bind(&path).unwrap());
    let out = hivectl(&path, &["list"], Run::default());
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("nobody is listening on"), "{err}");
    assert!(err.contains("stale socket"), "{err}");
}

#[test]
fn a_user_outside_hive_admin_exits_3_and_is_told_to_join_the_group() {
    // Root bypasses file modes, so run hivectl as nobody against a socket
    // that only root (and its group) may open, as in production.
    let dir = tempfile::Builder::new().tempdir_in("/tmp").unwrap();
    std::fs::set_permissions(dir.path(), std::fs::Permissions::from_mode(0o755)).unwrap();
    let path = dir.path().join("host.sock");
    let _listener = UnixListener::bind(&path).unwrap();
    std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o660)).unwrap();
    let nobody = Run {
        as_user: Some(65534),
        ..Run::default()
    };
    let out = hivectl(&path, &["status"], nobody);
    assert_eq!(out.status.code(), Some(3), "{}", stderr(&out));
    let err = stderr(&out);
    assert!(err.contains("permission denied on"), "{err}");
    assert!(err.contains(&path.display().to_string()), "{err}");
    assert!(err.contains("hive-admin"), "{err}");
    assert!(err.contains("log in again"), "{err}");
}

#[test]
fn a_refusal_exits_1_and_prints_the_daemons_error() {
    let d = Daemon::answering(
        "{\"version\":1,\"ok\":false,\"error\":\"agent \\\"zed\\\" is not managed by this hive\"}\n",
    );
    let out = hivectl(&d.path, &["kill", "zed"], Run::default());
    assert_eq!(
        d.request(),
        "{\"cmd\":\"stop\",\"scope\":{\"agent_names\":[\"zed\"],\"agents\":false,\"ci\":false,\
         \"forge\":false,\"gateway\":false,\"matrix\":false},\"graceful\":false}\n"
    );
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(
        stderr(&out),
        "hivectl: agent \"zed\" is not managed by this hive\n"
    );
    assert_eq!(stdout(&out), "");
}

#[test]
fn status_prints_the_roster_table_and_exits_0() {
    let d = Daemon::answering(&format!(
        "{{\"version\":1,\"ok\":true,\"agent_statuses\":[{ALICE}]}}\n"
    ));
    let out = hivectl(&d.path, &["status"], Run::default());
    assert_eq!(d.request(), "{\"cmd\":\"agent_status\"}\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        "\
NAME   STATE    REMINDERS  PARENT  STATUS
alice  running  2          ruth    triaging
"
    );
    assert_eq!(stderr(&out), "");
}

#[test]
fn a_successful_write_verb_says_what_it_did_and_exits_0() {
    let d = Daemon::answering("{\"version\":1,\"ok\":true}\n");
    let out = hivectl(&d.path, &["deny", "3"], Run::default());
    assert_eq!(d.request(), "{\"cmd\":\"deny\",\"id\":3}\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "approval 3: denied\n");
}

#[test]
fn a_lifecycle_verb_still_in_progress_with_no_block_exits_4_not_1() {
    // What used to break: a spawn past the daemon's answer budget exited 1
    // although it succeeded. hivectl goes by the answer's code, not its words.
    let d = Daemon::answering(
        "{\"version\":1,\"ok\":false,\"error\":\"spawn of alice is still in progress; watch \
         `hivectl status`\",\"code\":\"in_progress\"}\n",
    );
    let out = hivectl(&d.path, &["spawn", "alice", "--no-block"], Run::default());
    assert_eq!(d.request(), "{\"cmd\":\"spawn\",\"name\":\"alice\"}\n");
    assert_eq!(out.status.code(), Some(4), "{}", stderr(&out));
    assert!(
        stderr(&out).contains("still in progress"),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_directory_given_as_the_socket_is_called_a_directory_not_a_stale_socket() {
    let dir = tempfile::tempdir().unwrap();
    let out = hivectl(dir.path(), &["status"], Run::default());
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("is a directory, not a socket"), "{err}");
    assert!(!err.contains("stale"), "{err}");
}

#[test]
fn json_prints_the_daemons_line_byte_for_byte() {
    // Odd spacing and an unknown key: hivectl must not re-serialize.
    let line =
        "{\"version\":1, \"ok\":true,\"agents\":[\"alice\" ,\"bob\"],\"later\":{\"k\":[1,2]}}";
    let d = Daemon::answering(&format!("{line}\n"));
    let out = hivectl(&d.path, &["list", "--json"], Run::default());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{line}\n"));
}

#[test]
fn json_of_a_refusal_prints_the_line_and_still_exits_1() {
    let line = "{\"version\":1,\"ok\":false,\"error\":\"no such approval 9\"}";
    let d = Daemon::answering(&format!("{line}\n"));
    let out = hivectl(&d.path, &["--json", "approve", "9"], Run::default());
    assert_eq!(out.status.code(), Some(1));
    assert_eq!(stdout(&out), format!("{line}\n"));
    assert_eq!(stderr(&out), "hivectl: no such approval 9\n");
}

#[test]
fn a_newer_daemon_gets_a_warning_and_the_command_still_succeeds() {
    let d = Daemon::answering("{\"version\":2,\"ok\":true,\"agents\":[\"alice\"],\"new\":1}\n");
    let out = hivectl(&d.path, &["list"], Run::default());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "alice\n");
    let err = stderr(&out);
    assert!(err.starts_with("hivectl: warning: "), "{err}");
    assert!(err.contains("version 2"), "{err}");
}

#[test]
fn a_daemon_that_never_answers_exits_3_after_the_budget() {
    let d = Daemon::silent();
    let fast = Run {
        env: vec![("HIVECTL_TIMEOUT_MS", "300")],
        ..Run::default()
    };
    let out = hivectl(&d.path, &["pending"], fast);
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("did not answer"), "{err}");
    assert!(err.contains("within 300 ms"), "{err}");
}

#[test]
fn an_answer_that_is_not_json_exits_3_as_a_protocol_error() {
    let d = Daemon::answering("HTTP/1.1 400 Bad Request\n");
    let out = hivectl(&d.path, &["urls"], Run::default());
    assert_eq!(out.status.code(), Some(3));
    let err = stderr(&out);
    assert!(err.contains("not a host.sock response"), "{err}");
    assert!(err.contains("HTTP/1.1 400"), "{err}");
}

#[test]
fn start_or_stop_without_names_or_all_is_a_usage_error_and_sends_nothing() {
    let d = Daemon::silent();
    for args in [&["start"][..], &["stop"], &["stop", "--force"]] {
        let out = hivectl(&d.path, args, Run::default());
        assert_eq!(out.status.code(), Some(2), "{args:?}");
    }
    assert!(d.requests.try_recv().is_err(), "a request was sent");
}

#[test]
fn a_bad_name_is_a_usage_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = hivectl(&dir.path().join("s"), &["kill", "Alice"], Run::default());
    assert_eq!(out.status.code(), Some(2));
    assert!(
        stderr(&out).contains("invalid name \"Alice\""),
        "{}",
        stderr(&out)
    );
}

#[test]
fn a_journal_cut_to_the_daemons_cap_says_so_on_stderr() {
    let entries = vec!["{\"message\":\"x\"}"; 100].join(",");
    let line = format!("{{\"version\":1,\"ok\":true,\"entries\":[{entries}]}}\n");
    let d = Daemon::answering(&line);
    let out = hivectl(
        &d.path,
        &["journal", "-n", "500", "-o", "cat"],
        Run::default(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), "x\n".repeat(100));
    assert!(
        stderr(&out).contains("showing the newest 100 entries"),
        "{}",
        stderr(&out)
    );
    // Asking for no more than the cap: no note.
    let d = Daemon::answering(&line);
    let out = hivectl(&d.path, &["journal", "-n", "100"], Run::default());
    assert_eq!(stderr(&out), "");
}

#[test]
fn watch_exits_3_when_the_first_connection_fails_instead_of_waiting() {
    let dir = tempfile::tempdir().unwrap();
    let out = hivectl(&dir.path().join("host.sock"), &["watch"], Run::default());
    assert_eq!(out.status.code(), Some(3));
    assert!(stderr(&out).contains("no socket at"), "{}", stderr(&out));
}

#[test]
fn completions_print_a_script_for_each_shell() {
    let nowhere = Path::new("/nonexistent/host.sock");
    for shell in ["bash", "zsh", "fish"] {
        let out = hivectl(nowhere, &["completions", shell], Run::default());
        assert_eq!(out.status.code(), Some(0), "{shell}: {}", stderr(&out));
        let script = stdout(&out);
        // The script calls hivectl back for candidates.
        assert!(script.contains("COMPLETE="), "{shell}: {script}");
        assert!(script.contains("hivectl"), "{shell}");
    }
    // What the script asks: subcommands, without the hidden test flag.
    let out = Command::new(env!("CARGO_BIN_EXE_hivectl"))
        .args(["--", "hivectl", "re"])
        .env("COMPLETE", "fish")
        .output()
        .unwrap();
    let words = stdout(&out);
    assert!(words.contains("request-spawn"), "{words}");
    let out = Command::new(env!("CARGO_BIN_EXE_hivectl"))
        .args(["--", "hivectl", "status", "--"])
        .env("COMPLETE", "fish")
        .output()
        .unwrap();
    let words = stdout(&out);
    assert!(
        words.contains("--no-legend") && !words.contains("--timeout-ms"),
        "{words}"
    );
}

#[test]
fn man_writes_a_page_for_hivectl_and_each_subcommand() {
    let dir = tempfile::tempdir().unwrap();
    let out_dir = dir.path().join("man1");
    let out = hivectl(
        Path::new("/nonexistent/host.sock"),
        &["man", "--out", out_dir.to_str().unwrap()],
        Run::default(),
    );
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    for page in [
        "hivectl.1",
        "hivectl-status.1",
        "hivectl-set-parent.1",
        "hivectl-watch.1",
    ] {
        let text = std::fs::read_to_string(out_dir.join(page)).unwrap();
        assert!(text.starts_with(".ie") || text.contains(".TH"), "{page}");
    }
    let main = std::fs::read_to_string(out_dir.join("hivectl.1")).unwrap();
    assert!(
        main.contains("HIVE_SOCKET"),
        "the socket env var is documented"
    );
    for section in [
        ".SH ENVIRONMENT",
        ".SH FILES",
        ".SH \"EXIT STATUS\"",
        ".SH \"SEE ALSO\"",
    ] {
        assert!(main.contains(section), "hivectl.1 lacks {section}");
    }
    assert!(
        main.contains("hive\\-c0re\\fR(8)"),
        "hivectl.1 points to hive-c0re(8)"
    );
    // Every exit status the code defines, 5 and 6 too.
    for status in 0..=6 {
        assert!(
            main.contains(&format!(".TP\n\\fB{status}\\fR\n")),
            "exit {status}"
        );
    }
    let stop = std::fs::read_to_string(out_dir.join("hivectl-stop.1")).unwrap();
    assert!(
        stop.contains("Examples"),
        "subcommand pages carry their examples"
    );
}

#[test]
fn a_refusal_exits_with_its_codes_status_and_an_answer_without_a_code_exits_1() {
    for (code, status) in [
        (",\"code\":\"inbox_full\"", 5),
        (",\"code\":\"internal\"", 6),
        (",\"code\":\"unknown_agent\"", 1),
        (",\"code\":\"a_code_from_a_newer_daemon\"", 1),
        ("", 1),
    ] {
        let d = Daemon::answering(&format!(
            "{{\"version\":1,\"ok\":false,\"error\":\"no\"{code}}}\n"
        ));
        let out = hivectl(&d.path, &["send", "bob", "hi"], Run::default());
        assert_eq!(out.status.code(), Some(status), "{code}: {}", stderr(&out));
        assert_eq!(stderr(&out), "hivectl: no\n");
    }
}

/// The client line `hivectl version` prints first.
fn client_line() -> String {
    format!(
        "client: hivectl {} (protocol 1)\n",
        env!("CARGO_PKG_VERSION")
    )
}

#[test]
fn version_without_a_daemon_prints_the_client_line_then_exits_3_with_the_usual_error() {
    let dir = tempfile::tempdir().unwrap();
    let out = hivectl(&dir.path().join("host.sock"), &["version"], Run::default());
    assert_eq!(out.status.code(), Some(3));
    assert_eq!(stdout(&out), client_line());
    let err = stderr(&out);
    assert!(err.starts_with("hivectl: no socket at "), "{err}");
    assert!(err.contains("systemctl start hive-c0re.socket"), "{err}");
}

#[test]
fn version_against_a_daemon_older_than_the_verb_says_so_and_exits_0() {
    let refusal = "{\"version\":1,\"ok\":false,\"error\":\"unknown cmd \\\"version\\\"; this \
                   hive-c0re knows: list, agent_status\",\"code\":\"bad_request\"}";
    let d = Daemon::answering(&format!("{refusal}\n"));
    let out = hivectl(&d.path, &["version"], Run::default());
    assert_eq!(d.request(), "{\"cmd\":\"version\"}\n");
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(
        stdout(&out),
        client_line() + "daemon: unknown (older than this hivectl)\n"
    );
    assert_eq!(stderr(&out), "");
    let d = Daemon::answering(&format!("{refusal}\n"));
    let out = hivectl(&d.path, &["--json", "version"], Run::default());
    assert_eq!(out.status.code(), Some(0), "{}", stderr(&out));
    assert_eq!(stdout(&out), format!("{refusal}\n"));
}

#[test]
fn version_refused_for_another_reason_exits_with_that_refusals_status() {
    let d = Daemon::answering(
        "{\"version\":1,\"ok\":false,\"error\":\"the store is unreadable\",\"code\":\"internal\"}\n",
    );
    let out = hivectl(&d.path, &["version"], Run::default());
    assert_eq!(out.status.code(), Some(6), "{}", stderr(&out));
    assert_eq!(stdout(&out), client_line());
    assert_eq!(stderr(&out), "hivectl: the store is unreadable\n");
}
