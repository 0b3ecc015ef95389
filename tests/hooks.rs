//! Claude Code hooks through the real binaries: `hive-agent hook` forwards
//! a payload to the daemon's agent socket, the row changes, `hivectl status
//! --needs-me` lists who waits on a person; bad payloads on the socket get
//! their reason; an unreachable hive never fails the hook; an interactive
//! session's transcript counted in `hivectl usage`, a harness turn's not.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(clippy::disallowed_methods)] // test code runs the binaries under test

#[path = "support/common/mod.rs"]
mod common;

use std::io::Write;
use std::path::Path;
use std::process::{Command, Stdio};
use std::time::{Duration, Instant};

use common::{Conn, Daemon, daemon_with};

const AGENT: &str = env!("CARGO_BIN_EXE_hive-agent");
const HIVECTL: &str = env!("CARGO_BIN_EXE_hivectl");

/// Run `hive-agent hook` with `payload` on stdin: (exit code, stdout, stderr).
fn hook(socket: &Path, payload: &[u8]) -> (i32, String, String) {
    hook_with(socket, payload, &[])
}

/// [`hook`] with `env` set too.
fn hook_with(socket: &Path, payload: &[u8], env: &[(&str, &str)]) -> (i32, String, String) {
    let mut child = Command::new(AGENT)
        .arg("hook")
        .env("HIVE_AGENT_SOCKET", socket)
        .env_remove("HIVE_HEADLESS_TURN")
        .envs(env.iter().copied())
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    // The hook stops reading past its cap: a broken pipe here is expected.
    let _ = child.stdin.take().unwrap().write_all(payload);
    let out = child.wait_with_output().unwrap();
    (
        out.status.code().unwrap_or(-1),
        String::from_utf8_lossy(&out.stdout).into_owned(),
        String::from_utf8_lossy(&out.stderr).into_owned(),
    )
}

fn hivectl(d: &Daemon, args: &[&str]) -> String {
    let out = Command::new(HIVECTL)
        .arg("--socket")
        .arg(d.socket())
        .args(args)
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

#[test]
fn a_permission_prompt_hook_puts_the_agent_on_the_needs_me_list() {
    let d = daemon_with(&["alice", "bob"]);
    let prompt = br#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Bash","session_id":"s1"}"#;
    assert_eq!(
        hook(&d.agent_socket("alice"), prompt),
        (0, String::new(), String::new())
    );
    let stop = br#"{"hook_event_name":"Stop","session_id":"s2"}"#;
    assert_eq!(hook(&d.agent_socket("bob"), stop).0, 0);

    let all = hivectl(&d, &["status"]);
    assert!(
        all.contains("needs you: permission: Claude needs your permission to use Bash"),
        "{all}"
    );
    assert!(all.contains("turn done"), "{all}");
    let mine = hivectl(&d, &["status", "--needs-me"]);
    let names: Vec<&str> = mine
        .lines()
        .skip(1)
        .filter_map(|l| l.split(' ').next())
        .collect();
    assert_eq!(names, ["alice"], "{mine}");
    let json = hivectl(&d, &["--json", "status", "--needs-me"]);
    assert!(
        json.contains(r#""session_state":"needs_permission","session_message":"Claude needs your permission to use Bash","session_since":""#),
        "{json}"
    );
    assert!(!json.contains("bob"), "{json}");
}

#[test]
fn bad_hook_payloads_on_the_agent_socket_are_refused_with_their_reason() {
    let d = daemon_with(&["alice"]);
    let mut c = Conn::open(&d.agent_socket("alice"));
    let cases = [
        (
            r#"{"cmd":"hook_event","payload":"not json"}"#,
            "hook payload is not JSON",
        ),
        (
            r#"{"cmd":"hook_event","payload":"{\"session_id\":\"s\"}"}"#,
            "no \\\"hook_event_name\\\"",
        ),
        (
            r#"{"cmd":"hook_event","payload":"[1]"}"#,
            "must be a JSON object",
        ),
    ];
    for (line, reason) in cases {
        let answer = c.ask(line);
        assert!(
            answer.starts_with(r#"{"kind":"err""#) && answer.contains(reason),
            "{line} -> {answer}"
        );
    }
    let big = format!(
        r#"{{"cmd":"hook_event","payload":"{{\"hook_event_name\":\"Stop\",\"x\":\"{}\"}}"}}"#,
        "a".repeat(300 * 1024)
    );
    let answer = c.ask(&big);
    assert!(answer.contains("past the 262144-byte cap"), "{answer}");
    // The socket still serves, and nothing reached the row.
    let row = d.request(r#"{"cmd":"agent_status"}"#);
    assert!(!row.contains("session_state"), "{row}");
}

#[test]
fn an_unreachable_hive_costs_the_hook_a_note_on_stderr_and_never_its_exit_status() {
    let dir = tempfile::tempdir().unwrap();
    let started = Instant::now();
    let (code, out, err) = hook(
        &dir.path().join("no-such.sock"),
        br#"{"hook_event_name":"Stop"}"#,
    );
    assert!(
        started.elapsed() < Duration::from_secs(1),
        "{:?}",
        started.elapsed()
    );
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(
        err.starts_with("hive-agent hook: hook not delivered"),
        "{err}"
    );
    // A 2 MiB payload and a non-UTF-8 one are not forwarded, quietly too.
    let (code, out, err) = hook(&dir.path().join("no-such.sock"), &vec![b'a'; 2 << 20]);
    assert_eq!((code, out.as_str()), (0, ""));
    assert!(err.contains("over 262144 bytes"), "{err}");
    let (code, _, err) = hook(
        &dir.path().join("no-such.sock"),
        b"{\"hook_event_name\":\"Stop\xff\"}",
    );
    assert_eq!(code, 0);
    assert!(err.contains("not UTF-8"), "{err}");
}

#[test]
fn an_interactive_sessions_transcript_is_counted_in_usage_and_a_harness_turns_is_not() {
    let d = daemon_with(&["alice", "bob"]);
    let line = |id: &str, output: u64| {
        format!(
            "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"claude-test\",\
             \"usage\":{{\"input_tokens\":1234,\"output_tokens\":{output}}}}}}}\n"
        )
    };
    // Two content blocks of one message, then a second message.
    let transcript = format!(
        "{}{}{}",
        line("msg_1", 50),
        line("msg_1", 56),
        line("msg_2", 4)
    );
    for agent in ["alice", "bob"] {
        let dir = d.state_dir().join("agents").join(agent).join(".claude");
        std::fs::create_dir_all(&dir).unwrap();
        std::fs::write(dir.join("s1.jsonl"), &transcript).unwrap();
    }
    let stop = br#"{"hook_event_name":"Stop","session_id":"s1","transcript_path":"/var/lib/hive/.claude/s1.jsonl"}"#;
    assert_eq!(hook(&d.agent_socket("alice"), stop).0, 0);
    // bob's hook comes from a harness turn's Claude: report_turn counts it.
    let headless = [("HIVE_HEADLESS_TURN", "1")];
    assert_eq!(hook_with(&d.agent_socket("bob"), stop, &headless).0, 0);

    let json = hivectl(&d, &["--json", "usage"]);
    let answer: serde_json::Value = serde_json::from_str(&json).unwrap();
    let rows = answer["usage"]
        .as_array()
        .unwrap_or_else(|| panic!("{json}"));
    let keys: Vec<&str> = rows.iter().filter_map(|r| r["key"].as_str()).collect();
    assert_eq!(keys, ["alice"], "{json}");
    assert_eq!(rows[0]["input_tokens"], 2468, "{json}");
    assert_eq!(rows[0]["output_tokens"], 60, "{json}");
    assert_eq!(rows[0]["cost_micro_usd"], 0, "{json}");
    assert_eq!(
        rows[0]["metered"]["requests"], 0,
        "read from a transcript: reported, not metered"
    );
    let table = hivectl(&d, &["usage"]);
    assert!(
        table
            .lines()
            .any(|l| l.starts_with("alice") && l.contains(" 2,528 ")),
        "the transcript's tokens, under REPORTED-TOKENS: {table}"
    );
    let turns = hivectl(&d, &["turns", "alice"]);
    assert!(turns.contains("interactive"), "{turns}");
}
