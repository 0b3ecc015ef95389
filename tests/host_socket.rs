//! host.sock end to end: the real daemon with the fake driver.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use std::io::{BufRead, BufReader, Read, Write};
use std::os::unix::net::UnixStream;
use std::time::{Duration, Instant};

use common::{Daemon, Launch, request_raw};

const OK: &str = r#"{"version":1,"ok":true}"#;

#[test]
fn socket_activation_hands_over_host_sock_by_name_and_ready_comes_before_the_first_answer() {
    let dir = tempfile::tempdir().unwrap();
    let d = Daemon::spawn(dir, Launch::Activated);
    // This connection exists before the daemon does: systemd-socket-activate
    // execs it on this connect. No request is written until READY=1.
    let mut s = d.connect_when_listening();
    let ready = d.wait_for("READY=1");
    assert!(ready.contains("STATUS=serving host.sock"), "{ready}");
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"{\"cmd\":\"list\"}\n").unwrap();
    let mut line = String::new();
    BufReader::new(s).read_line(&mut line).unwrap();
    assert_eq!(line, "{\"version\":1,\"ok\":true,\"agents\":[\"ruth\"]}\n");
}

#[test]
fn a_daemon_started_by_hand_binds_host_sock_itself_and_answers() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(
        d.request(r#"{"cmd":"list"}"#),
        r#"{"version":1,"ok":true,"agents":["ruth"]}"#
    );
}

#[test]
fn a_second_daemon_on_the_same_socket_refuses_to_start_and_leaves_the_first_serving() {
    let d = Daemon::start(Launch::Standalone);
    let out = std::process::Command::new(common::BIN)
        .args(["serve", "--driver", "fake", "--state-dir"])
        .arg(d.dir.path().join("state2"))
        .arg("--runtime-dir")
        .arg(d.dir.path().join("run"))
        .output()
        .unwrap();
    assert!(!out.status.success());
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.contains("already running on"), "{stderr}");
    assert_eq!(
        d.request(r#"{"cmd":"list"}"#),
        r#"{"version":1,"ok":true,"agents":["ruth"]}"#
    );
}

#[test]
fn every_kind_of_bad_input_gets_one_error_line_and_the_next_client_is_served() {
    let d = Daemon::start(Launch::Standalone);
    let cases: &[(&[u8], &str)] = &[
        (b"\xff\xfe\n", "request is not valid UTF-8"),
        (b"not json\n", "request is not valid JSON"),
        (b"[1,2]\n", "request is not a JSON object"),
        (b"{}\n", "request has no \\\"cmd\\\""),
        (b"{\"cmd\":7}\n", "\\\"cmd\\\" must be a string"),
        (b"{\"cmd\":\"reboot\"}\n", "unknown cmd \\\"reboot\\\""),
        (
            b"{\"cmd\":\"approve\",\"id\":\"x\"}\n",
            "invalid approve request",
        ),
        (b"{\"cmd\":\"spawn\"}\n", "missing field `name`"),
        (
            b"{\"cmd\":\"kill\",\"name\":\"../etc\"}\n",
            "invalid name \\\"../etc\\\"",
        ),
        (
            b"{\"cmd\":\"kill\",\"name\":\"nobody\"}\n",
            "agent \\\"nobody\\\" is not managed by this hive",
        ),
    ];
    for (input, expected) in cases {
        let line = request_raw(&d.socket(), input);
        assert!(
            line.starts_with(r#"{"version":1,"ok":false,"error":""#) && line.contains(expected),
            "{input:?} -> {line}"
        );
        assert_eq!(
            d.request(r#"{"cmd":"pending"}"#),
            r#"{"version":1,"ok":true,"approvals":[]}"#
        );
    }
}

#[test]
fn unknown_request_keys_are_ignored() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(
        d.request(r#"{"cmd":"list","from_the_future":{"x":1}}"#),
        r#"{"version":1,"ok":true,"agents":["ruth"]}"#
    );
}

#[test]
fn a_line_over_one_mebibyte_is_refused_without_waiting_for_its_end() {
    let d = Daemon::start(Launch::Standalone);
    let mut s = UnixStream::connect(d.socket()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    // 2 MiB without a newline, and the connection left open: the daemon
    // must answer after 1 MiB instead of buffering until the end.
    let chunk = vec![b'x'; 64 * 1024];
    let mut sent = 0;
    while sent < 2 << 20 {
        if s.write_all(&chunk).is_err() {
            break; // the daemon already answered and closed
        }
        sent += chunk.len();
    }
    let mut answer = String::new();
    let _ = s.read_to_string(&mut answer);
    assert!(
        answer.contains("longer than 1048576 bytes"),
        "{answer:.200}"
    );
    assert_eq!(
        d.request(r#"{"cmd":"urls"}"#),
        r#"{"version":1,"ok":true,"urls":{}}"#
    );
}

#[test]
fn a_silent_client_is_closed_after_the_read_timeout_without_blocking_others() {
    let d = Daemon::start(Launch::Standalone);
    let silent = UnixStream::connect(d.socket()).unwrap();
    silent
        .set_read_timeout(Some(Duration::from_secs(15)))
        .unwrap();
    // Others are served while the silent one waits.
    assert_eq!(
        d.request(r#"{"cmd":"list"}"#),
        r#"{"version":1,"ok":true,"agents":["ruth"]}"#
    );
    let started = Instant::now();
    let mut rest = String::new();
    BufReader::new(silent).read_to_string(&mut rest).unwrap();
    assert!(rest.contains("no request line within 5 s"), "{rest}");
    assert!(started.elapsed() < Duration::from_secs(10));
}

#[test]
fn two_hundred_concurrent_clients_are_all_answered() {
    let d = Daemon::start(Launch::Standalone);
    let socket = d.socket();
    let handles: Vec<_> = (0..200)
        .map(|_| {
            let socket = socket.clone();
            std::thread::spawn(move || request_raw(&socket, b"{\"cmd\":\"agent_status\"}\n"))
        })
        .collect();
    for h in handles {
        let line = h.join().unwrap();
        assert!(
            line.starts_with(r#"{"version":1,"ok":true,"agent_statuses":[{"name":"ruth""#),
            "{line}"
        );
    }
}

#[test]
fn fifty_concurrent_approves_of_one_row_run_its_action_once() {
    let d = Daemon::start(Launch::Standalone);
    // The answer carries the queued row.
    let queued = d.request(r#"{"cmd":"request_spawn","name":"bee"}"#);
    assert!(
        queued.starts_with(
            r#"{"version":1,"ok":true,"approvals":[{"id":1,"agent":"bee","kind":"spawn""#
        ),
        "{queued}"
    );
    let socket = d.socket();
    let handles: Vec<_> = (0..50)
        .map(|_| {
            let socket = socket.clone();
            std::thread::spawn(move || request_raw(&socket, b"{\"cmd\":\"approve\",\"id\":1}\n"))
        })
        .collect();
    let answers: Vec<String> = handles.into_iter().map(|h| h.join().unwrap()).collect();
    let oks = answers.iter().filter(|a| *a == OK).count();
    assert_eq!(oks, 1, "{answers:#?}");
    for a in answers.iter().filter(|a| *a != OK) {
        assert!(
            a.contains("is being approved right now") || a.contains("is already approved"),
            "{a}"
        );
    }
    // The action (spawn) ran: bee exists once and is running.
    let status = d.request(r#"{"cmd":"agent_status"}"#);
    assert_eq!(status.matches(r#""name":"bee""#).count(), 1, "{status}");
    assert!(
        status.contains(r#"{"name":"bee","running":true"#),
        "{status}"
    );
    let pending = d.request(r#"{"cmd":"pending"}"#);
    assert!(pending.contains(r#""status":"approved""#), "{pending}");
}

#[test]
fn state_survives_a_sigkill_and_restart() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(d.request(r#"{"cmd":"spawn","name":"keeper"}"#), OK);
    assert!(
        d.request(r#"{"cmd":"request_spawn","name":"later"}"#)
            .starts_with(r#"{"version":1,"ok":true,"approvals":[{"#)
    );
    assert_eq!(
        d.request(r#"{"cmd":"set_parent","child":"keeper","new_parent":null}"#),
        OK
    );
    assert_eq!(
        d.request(r#"{"cmd":"set_paused","name":"keeper","paused":true}"#),
        OK
    );
    let dir = d.kill_hard();
    // The stale socket file left by the SIGKILL is replaced on restart.
    let d = Daemon::start_in(dir, Launch::Standalone);
    assert_eq!(
        d.request(r#"{"cmd":"list"}"#),
        r#"{"version":1,"ok":true,"agents":["keeper","ruth"]}"#
    );
    let pending = d.request(r#"{"cmd":"pending"}"#);
    assert!(
        pending.contains(r#""agent":"later","kind":"spawn""#),
        "{pending}"
    );
    let status = d.request(r#"{"cmd":"agent_status"}"#);
    assert!(
        status.contains(r#""name":"keeper","running":false"#),
        "{status}"
    );
    assert!(status.contains(r#""paused":true}"#), "{status}");
}

#[test]
fn the_database_file_is_private_to_root() {
    use std::os::unix::fs::PermissionsExt;
    let d = Daemon::start(Launch::Standalone);
    let mode = std::fs::metadata(d.state_dir().join("hive.db"))
        .unwrap()
        .permissions()
        .mode();
    assert_eq!(mode & 0o777, 0o600);
}

#[test]
fn sigterm_sends_stopping_and_exits_cleanly() {
    let d = Daemon::start(Launch::Standalone);
    let socket = d.socket();
    let pid = nix::unistd::Pid::from_raw(d.child.id() as i32);
    nix::sys::signal::kill(pid, nix::sys::signal::Signal::SIGTERM).unwrap();
    let msg = d.wait_for("STOPPING=1");
    assert!(msg.contains("STATUS=draining"), "{msg}");
    assert!(d.terminate_wait().success());
    // The daemon bound the socket itself, so it removed it.
    assert!(!socket.exists());
}

#[test]
fn a_subscriber_gets_an_ack_then_one_row_per_change() {
    let d = Daemon::start(Launch::Standalone);
    let mut s = UnixStream::connect(d.socket()).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    s.write_all(b"{\"cmd\":\"subscribe_agent_status\"}\n")
        .unwrap();
    let mut lines = BufReader::new(s);
    let mut ack = String::new();
    lines.read_line(&mut ack).unwrap();
    assert_eq!(ack.trim_end(), OK);
    assert_eq!(
        d.request(r#"{"cmd":"set_paused","name":"ruth","paused":true}"#),
        OK
    );
    let mut row = String::new();
    lines.read_line(&mut row).unwrap();
    assert_eq!(
        row.trim_end(),
        r#"{"version":1,"ok":true,"agent_statuses":[{"name":"ruth","running":false,"failed":false,"needs_update":false,"needs_login":false,"pending_reminders":0,"paused":true}]}"#
    );
    // Pausing again changes nothing: success, and no row is pushed.
    assert_eq!(
        d.request(r#"{"cmd":"set_paused","name":"ruth","paused":true}"#),
        OK
    );
    assert_eq!(
        d.request(r#"{"cmd":"start","scope":{"agent_names":["ruth"]}}"#),
        OK
    );
    let mut next = String::new();
    lines.read_line(&mut next).unwrap();
    assert!(next.contains(r#""name":"ruth","running":true"#), "{next}");
}

#[test]
fn without_a_system_bus_lifecycle_verbs_say_why_and_the_roster_still_answers() {
    let d = Daemon::start_with(
        "systemd",
        &[(
            "DBUS_SYSTEM_BUS_ADDRESS",
            "unix:path=/nonexistent/system_bus_socket",
        )],
    );
    let status = d.request(r#"{"cmd":"agent_status"}"#);
    assert!(
        status.starts_with(
            r#"{"version":1,"ok":true,"agent_statuses":[{"name":"ruth","running":false"#
        ),
        "{status}"
    );
    let start = d.request(r#"{"cmd":"start","scope":{"agent_names":["ruth"]}}"#);
    assert!(
        start.starts_with(r#"{"version":1,"ok":false,"error":"ruth: systemd is not reachable: "#),
        "{start}"
    );
    assert!(start.contains("/nonexistent/system_bus_socket"), "{start}");
}
