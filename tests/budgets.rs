//! One agent cannot hurt the hive (issue 14): each attack tried against
//! the real daemon (fake driver), which used to take the hive down, now
//! meets a budget with a clear error while host.sock keeps answering.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(clippy::disallowed_methods)] // runs the daemon binary under test

#[path = "support/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use common::{BIN, Conn, Daemon, Launch};

const HOST_OK: &str = r#"{"version":1,"ok":true}"#;

/// A daemon reading `config` (JSON) with `agents` spawned.
fn configured(config: &str, agents: &[&str]) -> Daemon {
    let dir = tempfile::tempdir().unwrap();
    std::fs::write(dir.path().join("config.json"), config).unwrap();
    let d = Daemon::start_in(dir, Launch::Standalone);
    for a in agents {
        assert_eq!(
            d.request(&format!(r#"{{"cmd":"spawn","name":"{a}"}}"#)),
            HOST_OK
        );
    }
    d
}

fn read_line(s: &mut UnixStream) -> String {
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    line
}

/// Used to be: 1,100 idle connections to one agent's socket ran the daemon
/// out of fds (`accept failed: Too many open files`) and `hivectl list`
/// timed out. Now past `agent_max_connections` a connection is told why
/// and closed at once, and host.sock answers throughout.
#[test]
fn connections_past_an_agents_budget_are_refused_with_the_limit_and_host_sock_answers() {
    let d = configured(r#"{"agent_max_connections": 4}"#, &["alice"]);
    let path = d.agent_socket("alice");
    let held: Vec<UnixStream> = (0..4)
        .map(|_| UnixStream::connect(&path).unwrap())
        .collect();
    let mut refused = 0;
    for _ in 0..1100 {
        let mut extra = UnixStream::connect(&path).unwrap();
        let line = read_line(&mut extra);
        assert!(
            line.contains(
                "too many connections to this socket: 4 are open (agent_max_connections)"
            ),
            "{line}"
        );
        refused += 1;
    }
    assert_eq!(refused, 1100);
    let list = d.request(r#"{"cmd":"list"}"#);
    assert!(list.contains("alice"), "{list}");
    // Freed slots are reusable (once the daemon has seen the hang-ups).
    // Until then a connection is refused and closed, which the request's
    // write may meet as a broken pipe (seen in a CI run): not yet, again.
    drop(held);
    let deadline = Instant::now() + Duration::from_secs(10);
    loop {
        let mut again = Conn::open(&path);
        if again
            .try_ask(r#"{"cmd":"status"}"#)
            .is_some_and(|answer| answer.contains(r#""kind":"status""#))
        {
            break;
        }
        assert!(Instant::now() < deadline, "no slot came back");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// Used to be: no read timeout, so a silent connection held its fd forever.
#[test]
fn a_connection_silent_past_the_idle_timeout_is_told_and_closed() {
    let d = configured(r#"{"agent_idle_timeout_secs": 1}"#, &["alice"]);
    let mut s = UnixStream::connect(d.agent_socket("alice")).unwrap();
    let started = Instant::now();
    let line = read_line(&mut s);
    assert!(
        line.contains("no complete request for 1 s (agent_idle_timeout_secs)"),
        "{line}"
    );
    assert!(started.elapsed() < Duration::from_secs(8));
    // A long poll longer than the idle timeout is not silence.
    let mut c = Conn::open(&d.agent_socket("alice"));
    assert!(c.recv(2, 1).is_empty());
    assert!(c.ask(r#"{"cmd":"status"}"#).contains(r#""kind":"status""#));
}

/// Used to be: an agent filled its own inbox with 64 KiB wakes without
/// bound. Now a full inbox refuses the send, says why, and stores nothing.
#[test]
fn a_full_inbox_refuses_send_with_a_clear_error_and_keeps_what_it_holds() {
    let d = configured(
        r#"{"inbox_max_messages": 3, "inbox_max_bytes": 1000}"#,
        &["alice", "bob"],
    );
    let mut alice = Conn::open(&d.agent_socket("alice"));
    for i in 0..3 {
        let ok = alice.ask(&format!(r#"{{"cmd":"send","to":"bob","body":"m{i}"}}"#));
        assert_eq!(ok, r#"{"kind":"ok","delivered":1}"#);
    }
    let refused = alice.ask(r#"{"cmd":"send","to":"bob","body":"m3"}"#);
    assert!(
        refused.contains(r#"the inbox of \"bob\" is full (3 messages"#)
            && refused.contains("inbox_max_messages"),
        "{refused}"
    );
    let mut bob = Conn::open(&d.agent_socket("bob"));
    let got = bob.recv(0, 10);
    assert_eq!(got.len(), 3, "{got:?}");
    // Read and acked: room again.
    assert_eq!(bob.ask(r#"{"cmd":"ack_turn"}"#), r#"{"kind":"ok"}"#);
    let ok = alice.ask(r#"{"cmd":"send","to":"bob","body":"m4"}"#);
    assert_eq!(ok, r#"{"kind":"ok","delivered":1}"#);
}

/// Used to be: `recent` with 1,000 rows of 64 KiB built a 64 MiB answer per
/// connection (2.65 GB peak with 20). Now an answer stops at the budget and
/// says it was cut; `recv` pops fewer and leaves the rest pending.
#[test]
fn answers_stop_at_the_byte_budget_recent_says_truncated_and_recv_leaves_the_rest() {
    let d = configured(r#"{"agent_max_answer_bytes": 2500}"#, &["alice"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let body = "x".repeat(1000);
    for _ in 0..5 {
        let ok = alice.ask(&format!(r#"{{"cmd":"wake","from":"me","body":"{body}"}}"#));
        assert_eq!(ok, r#"{"kind":"ok"}"#);
    }
    let recent: serde_json::Value =
        serde_json::from_str(&alice.ask(r#"{"cmd":"recent","limit":1000}"#)).unwrap();
    assert_eq!(recent["rows"].as_array().unwrap().len(), 2);
    assert_eq!(recent["truncated"], true);
    let first = alice.recv(0, 100);
    assert_eq!(first.len(), 2);
    assert_eq!(alice.recv(0, 100).len(), 2);
    assert_eq!(alice.recv(0, 100).len(), 1);
}

/// Used to be: `system` was a valid agent name, and its messages to the
/// manager read exactly like the daemon's own events; and `-x` was taken,
/// after which `hivectl stop -x` was a usage error.
#[test]
fn reserved_names_and_names_with_an_edge_hyphen_are_refused_for_new_agents() {
    let d = configured("{}", &[]);
    let refusals = [
        ("system", "it is reserved"),
        ("operator", "it is reserved"),
        ("ruth", "it is reserved"),
        ("-x", "start and end with a letter or a digit"),
        ("x-", "start and end with a letter or a digit"),
    ];
    for (name, why) in refusals {
        for cmd in ["spawn", "request_spawn"] {
            let answer = d.request(&format!(r#"{{"cmd":"{cmd}","name":"{name}"}}"#));
            assert!(
                answer.contains(r#""code":"reserved_name""#)
                    && answer
                        .contains(&format!(r#"the name \"{name}\" cannot be a new agent's: "#))
                    && answer.contains(why),
                "{cmd} {name}: {answer}"
            );
        }
    }
    let list = d.request(r#"{"cmd":"list"}"#);
    for name in ["system", "operator", "-x", "x-"] {
        assert!(!list.contains(&format!("\"{name}\"")), "{list}");
    }
}

/// Used to be: `rm mcp.sock; mkdir mcp.sock` (or a symlink to a live
/// socket) inside an agent's `/run/hive` made every later start exit 1.
#[test]
fn what_an_agent_leaves_in_its_run_hive_cannot_stop_the_daemon_starting() {
    let d = configured("{}", &["alice", "bob"]);
    let (alice, bob) = (d.agent_socket("alice"), d.agent_socket("bob"));
    let dir = d.kill_hard();
    std::fs::remove_file(&alice).unwrap();
    std::fs::create_dir(&alice).unwrap();
    std::fs::remove_file(&bob).unwrap();
    let impostor_path = dir.path().join("impostor.sock");
    let _impostor = std::os::unix::net::UnixListener::bind(&impostor_path).unwrap();
    std::os::unix::fs::symlink(&impostor_path, &bob).unwrap();
    let _d = Daemon::start_in(dir, Launch::Standalone);
    for path in [&alice, &bob] {
        let mut c = Conn::open(path);
        assert!(c.ask(r#"{"cmd":"status"}"#).contains(r#""kind":"status""#));
    }
    assert!(impostor_path.exists());
}

/// Used to be: two daemons ran on one state dir when their runtime dirs
/// differed. Now the second refuses, naming the first's PID.
#[test]
fn a_second_daemon_on_the_same_state_dir_refuses_naming_the_first() {
    let d = configured("{}", &[]);
    let other_run = d.dir.path().join("run2");
    let out = std::process::Command::new(BIN)
        .args(["serve", "--driver", "fake", "--state-dir"])
        .arg(d.state_dir())
        .arg("--runtime-dir")
        .arg(&other_run)
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("another hive-c0re (PID {})", d.child.id())),
        "{stderr}"
    );
}

/// Used to be: at `umask 000` the self-bound host.sock and the runtime
/// directory were 0777: any local user could drive the hive.
#[test]
fn a_self_bound_host_sock_has_the_units_modes_whatever_the_umask() {
    let dir = tempfile::tempdir().unwrap();
    let run = dir.path().join("run");
    let state = dir.path().join("state");
    let notify = dir.path().join("n.sock");
    let listener = std::os::unix::net::UnixDatagram::bind(&notify).unwrap();
    listener
        .set_read_timeout(Some(Duration::from_secs(10)))
        .unwrap();
    // umask is inherited: set it for the child through a pre-exec-free
    // wrapper (sh's builtin).
    let mut child = std::process::Command::new("sh")
        .arg("-c")
        .arg(r#"umask 000; exec "$0" serve --driver fake --state-dir "$1" --runtime-dir "$2""#)
        .arg(BIN)
        .arg(&state)
        .arg(&run)
        .env("NOTIFY_SOCKET", &notify)
        .stderr(std::process::Stdio::null())
        .spawn()
        .unwrap();
    let mut buf = [0u8; 512];
    loop {
        let n = listener.recv(&mut buf).unwrap();
        if String::from_utf8_lossy(&buf[..n]).contains("READY=1") {
            break;
        }
    }
    let mode = |p: &std::path::Path| std::fs::metadata(p).unwrap().permissions().mode() & 0o777;
    assert_eq!(mode(&run.join("host.sock")), 0o660);
    assert_eq!(mode(&run), 0o751);
    assert_eq!(mode(&state), 0o750);
    assert_eq!(mode(&state.join("hive.db")), 0o600);
    let mut s = UnixStream::connect(run.join("host.sock")).unwrap();
    s.write_all(b"{\"cmd\":\"spawn\",\"name\":\"alice\"}\n")
        .unwrap();
    let mut answer = String::new();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.read_to_string(&mut answer).ok();
    assert_eq!(answer.trim(), HOST_OK);
    assert_eq!(mode(&run.join("agents/alice")), 0o700);
    assert_eq!(mode(&run.join("agents/alice/mcp.sock")), 0o600);
    child.kill().unwrap();
    child.wait().unwrap();
}

/// Started under a hard open-files limit below what a full hive may hold
/// (1,000 agents at 16 connections each), the daemon says so at start and
/// names the fix; with a limit that holds it, it does not.
#[test]
fn an_open_files_limit_below_a_full_hives_budget_is_named_in_the_log_at_start() {
    fn startup_log(nofile: &str, config: &str) -> String {
        let dir = tempfile::tempdir().unwrap();
        let (cfg, run) = (dir.path().join("config.json"), dir.path().join("run"));
        std::fs::write(&cfg, config).unwrap();
        let mut child = std::process::Command::new("prlimit")
            .arg(format!("--nofile={nofile}"))
            .args(["--", BIN, "serve", "--driver", "fake", "--config"])
            .arg(&cfg)
            .arg("--state-dir")
            .arg(dir.path().join("state"))
            .arg("--runtime-dir")
            .arg(&run)
            .env("RUST_LOG", "warn")
            .stdout(std::process::Stdio::null())
            .stderr(std::process::Stdio::piped())
            .spawn()
            .expect("prlimit (util-linux) runs the daemon");
        let deadline = Instant::now() + Duration::from_secs(10);
        while UnixStream::connect(run.join("host.sock")).is_err() {
            assert!(Instant::now() < deadline, "the daemon did not listen");
            std::thread::sleep(Duration::from_millis(20));
        }
        child.kill().unwrap();
        let mut log = String::new();
        child
            .stderr
            .take()
            .unwrap()
            .read_to_string(&mut log)
            .unwrap();
        child.wait().unwrap();
        log
    }
    let low = startup_log("1024:1024", r#"{"max_agents": 1000}"#);
    assert!(
        low.contains("the open files limit 1024 is below the 19024 a full hive may hold")
            && low.contains("raise LimitNOFILE="),
        "{low}"
    );
    let enough = startup_log(
        "4096:4096",
        r#"{"max_agents": 50, "agent_max_connections": 2}"#,
    );
    assert!(!enough.contains("open files limit"), "{enough}");
}

/// Used to be (issue 44): 1,100 identical `request_egress` were 1,100
/// pending rows in 0.4 s, drowning the operator's queue. Now the same
/// request asked again is answered with its pending row, and an agent past
/// `agent_max_pending_approvals` is refused with `too_many_pending`.
#[test]
fn a_thousand_identical_egress_requests_leave_one_row_and_an_agent_over_its_cap_is_refused() {
    let d = configured(r#"{"agent_max_pending_approvals": 3}"#, &["alice", "bob"]);
    let ask = |host: &str| format!(r#"{{"cmd":"request_egress","host":"{host}","reason":"r"}}"#);
    // Four connections racing, 250 each.
    let answers: Vec<String> = std::thread::scope(|s| {
        let workers: Vec<_> = (0..4)
            .map(|_| {
                let (path, line) = (d.agent_socket("alice"), ask("pypi.org:443"));
                s.spawn(move || {
                    let mut c = Conn::open(&path);
                    (0..250).map(|_| c.ask(&line)).collect::<Vec<_>>()
                })
            })
            .collect();
        workers
            .into_iter()
            .flat_map(|w| w.join().unwrap())
            .collect()
    });
    let first = r#"{"kind":"ok","approval":1}"#;
    let again = r#"{"kind":"ok","approval":1,"already_pending":true}"#;
    assert_eq!(answers.iter().filter(|a| *a == first).count(), 1);
    assert_eq!(answers.iter().filter(|a| *a == again).count(), 999);
    let pending = d.request(r#"{"cmd":"pending"}"#);
    assert_eq!(
        pending.matches(r#""status":"pending""#).count(),
        1,
        "{pending}"
    );

    let mut alice = Conn::open(&d.agent_socket("alice"));
    for host in ["a.example:443", "b.example:443"] {
        assert!(
            alice
                .ask(&ask(host))
                .starts_with(r#"{"kind":"ok","approval":"#)
        );
    }
    let refused = alice.ask(&ask("c.example:443"));
    assert!(
        refused.contains(r#""code":"too_many_pending""#)
            && refused.contains("agent alice already has 3 approval requests pending")
            && refused.contains("agent_max_pending_approvals"),
        "{refused}"
    );
    // Bob's slots are his own; host.sock still lists four rows.
    let mut bob = Conn::open(&d.agent_socket("bob"));
    assert!(
        bob.ask(&ask("c.example:443"))
            .starts_with(r#"{"kind":"ok","approval":"#)
    );
    let pending = d.request(r#"{"cmd":"pending"}"#);
    assert_eq!(
        pending.matches(r#""status":"pending""#).count(),
        4,
        "{pending}"
    );
}
