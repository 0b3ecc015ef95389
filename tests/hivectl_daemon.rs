//! hivectl against the real daemon (fake driver): the whole operator path.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use common::{Daemon, Launch, hivectl};

#[test]
fn an_operator_spawns_pauses_and_reparents_an_agent_with_hivectl() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(hivectl(&d, &["spawn", "alice"]).0, 0);
    assert_eq!(hivectl(&d, &["pause", "alice"]).0, 0);
    assert_eq!(hivectl(&d, &["set-parent", "alice", "--root"]).0, 0);
    let (code, out, _) = hivectl(&d, &["--json", "status"]);
    assert_eq!(code, 0);
    // A spawned agent runs its seeded config (deployed/0), recorded.
    assert!(
        out.contains(r#""needs_login":false,"deployed_sha":""#),
        "{out}"
    );
    let out = common::without_deployed_sha(&out);
    assert!(
        out.contains(r#"{"name":"alice","running":true,"failed":false,"needs_update":false,"needs_login":false,"pending_reminders":0,"paused":true,"running_since":"20"#),
        "{out}"
    );
    let (code, out, _) = hivectl(&d, &["status"]);
    assert_eq!(code, 0);
    assert!(
        out.lines().next().unwrap_or("").starts_with("NAME"),
        "{out}"
    );
    assert!(out.contains("alice") && out.contains("ruth"), "{out}");
}

#[test]
fn a_refusal_by_the_daemon_exits_one_with_its_words() {
    let d = Daemon::start(Launch::Standalone);
    let (code, _, err) = hivectl(&d, &["kill", "nobody"]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim_end(),
        r#"hivectl: agent "nobody" is not managed by this hive"#
    );
    let (code, _, err) = hivectl(&d, &["destroy", "ruth"]);
    assert_eq!(code, 1);
    assert!(
        err.contains("is the hive's manager and cannot be destroyed"),
        "{err}"
    );
}

#[test]
fn a_spawn_request_is_approved_from_the_pending_list() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(hivectl(&d, &["request-spawn", "bob"]).0, 0);
    let (code, out, _) = hivectl(&d, &["pending"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("bob") && out.contains("spawn") && out.contains("pending"),
        "{out}"
    );
    assert_eq!(hivectl(&d, &["approve", "1"]).0, 0);
    let (code, _, err) = hivectl(&d, &["deny", "1"]);
    assert_eq!(
        (code, err.trim_end()),
        (1, "hivectl: approval 1 is already approved")
    );
    let (_, out, _) = hivectl(&d, &["list"]);
    assert_eq!(out, "bob\nruth\n");
}

#[test]
fn the_operator_sends_to_an_agent_and_reads_the_inbox_with_hivectl() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(hivectl(&d, &["spawn", "alice"]).0, 0);
    let (code, out, err) = hivectl(&d, &["send", "alice", "please report"]);
    assert_eq!(
        (code, out.as_str(), err.as_str()),
        (0, "sent to alice\n", "")
    );
    // alice answers the operator through her own socket.
    let mut alice = common::Conn::open(&d.agent_socket("alice"));
    let got = alice.recv(5, 10);
    assert_eq!(got[0]["from"], "operator");
    assert_eq!(got[0]["body"], "please report");
    for body in ["all good", "line one\nline two"] {
        let line = serde_json::json!({"cmd": "send", "to": "operator", "body": body});
        assert_eq!(
            alice.ask(&line.to_string()),
            r#"{"kind":"ok","delivered":1}"#
        );
    }
    let (code, out, _) = hivectl(&d, &["inbox"]);
    assert_eq!(code, 0);
    let lines: Vec<&str> = out.lines().collect();
    assert!(
        lines[0].starts_with("ID") && lines[0].contains("BODY"),
        "{out}"
    );
    // Newest first; a newline in a body cannot break the table.
    assert!(lines[1].ends_with("line one line two"), "{out}");
    assert!(lines[2].ends_with("all good"), "{out}");
    assert_eq!(lines.len(), 3, "{out}");
    let (code, out, _) = hivectl(&d, &["inbox", "-n", "1", "--json"]);
    assert_eq!(code, 0);
    assert!(
        out.contains("line one\\nline two") && !out.contains("all good"),
        "{out}"
    );
    let (code, _, err) = hivectl(&d, &["send", "zed", "hi"]);
    assert_eq!(
        (code, err.trim_end()),
        (1, r#"hivectl: agent "zed" is not managed by this hive"#)
    );
}

#[test]
fn inbox_show_prints_one_message_whole_and_an_unknown_id_is_refused_with_its_code() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(hivectl(&d, &["spawn", "alice"]).0, 0);
    // The operator's own message to alice (id 1) is not the operator's inbox.
    assert_eq!(hivectl(&d, &["send", "alice", "please report"]).0, 0);
    let long = "a finding ".repeat(30);
    let body = format!("report\n{long}\x1b[2Jdone");
    let mut alice = common::Conn::open(&d.agent_socket("alice"));
    let line = serde_json::json!({"cmd": "send", "to": "operator", "body": body});
    assert_eq!(
        alice.ask(&line.to_string()),
        r#"{"kind":"ok","delivered":1}"#
    );
    let (_, list, _) = hivectl(&d, &["inbox"]);
    let id = list
        .lines()
        .nth(1)
        .unwrap()
        .split_whitespace()
        .next()
        .unwrap()
        .to_owned();
    assert!(list.contains('…'), "the listing shortens it: {list}");
    let (code, out, err) = hivectl(&d, &["inbox", "show", &id]);
    assert_eq!(code, 0, "{err}");
    let lines: Vec<&str> = out.lines().collect();
    assert_eq!(
        lines[..2],
        [format!("id:        {id}").as_str(), "from:      alice"],
        "{out}"
    );
    assert!(lines[2].starts_with("at:        20"), "{out}");
    assert_eq!(
        lines[3..],
        ["", "report", &format!("{long} [2Jdone")],
        "{out}"
    );
    let (code, json, _) = hivectl(&d, &["--json", "inbox", "show", &id]);
    assert_eq!(code, 0);
    assert!(
        json.starts_with(r#"{"version":1,"ok":true,"messages":[{"id":"#),
        "{json}"
    );
    for unknown in ["1", "999"] {
        let (code, out, err) = hivectl(&d, &["inbox", "show", unknown]);
        assert_eq!((code, out.as_str()), (1, ""), "{unknown}");
        assert!(
            err.starts_with(&format!(
                "hivectl: message {unknown} is not in the operator's inbox;"
            )),
            "{err}"
        );
        let (code, json, _) = hivectl(&d, &["--json", "inbox", "show", unknown]);
        assert_eq!(code, 1);
        assert!(json.contains(r#""code":"unknown_item""#), "{json}");
    }
}

#[test]
fn inspect_shows_one_agents_sections_and_an_unknown_agent_exits_one() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(hivectl(&d, &["spawn", "alice"]).0, 0);
    assert_eq!(hivectl(&d, &["send", "alice", "hello"]).0, 0);
    let (code, out, err) = hivectl(&d, &["inspect", "alice"]);
    assert_eq!(code, 0, "{err}");
    for line in [
        "agent:\n  name:",
        "  state:",
        "config:\n  deployed sha:",
        "limits:\n  memory max:",
        "  inotify watches:",
        "grants:\n  capabilities:",
        "waiting:\n  inbox:                1\n",
        // No host by default: the model is reached through its gateway.
        "egress:\n  none\nturns:",
        "turns:\n  none\n",
    ] {
        assert!(out.contains(line), "{line:?} in\n{out}");
    }
    let (code, out, _) = hivectl(&d, &["--json", "inspect", "alice"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim_end()).unwrap();
    let facts = &v["inspect"];
    assert_eq!(facts["name"], "alice");
    assert_eq!(facts["status"]["running"], true);
    assert_eq!(facts["inbox"]["waiting"], 1);
    assert!(
        facts
            .get("egress")
            .is_none_or(|e| e == &serde_json::json!([])),
        "{out}"
    );
    assert!(facts["config"]["deployed_sha"].is_string(), "{out}");
    let (code, _, err) = hivectl(&d, &["inspect", "nobody"]);
    assert_eq!(code, 1);
    assert_eq!(
        err.trim_end(),
        r#"hivectl: agent "nobody" is not managed by this hive"#
    );
}

#[test]
fn version_prints_the_client_then_the_daemon_with_its_driver_profile_and_uptime() {
    let d = Daemon::start(Launch::Standalone);
    let (code, out, err) = hivectl(&d, &["version"]);
    assert_eq!(code, 0, "{err}");
    let v = env!("CARGO_PKG_VERSION");
    let mut lines = out.lines();
    assert_eq!(
        lines.next(),
        Some(format!("client: hivectl {v} (protocol 1)").as_str())
    );
    let daemon = lines.next().unwrap_or_default();
    let want = format!("daemon: hive-c0re {v} (protocol 1), driver fake, profile nspawn, up ");
    assert!(daemon.starts_with(&want), "{out}");
    assert!(daemon.ends_with('s') || daemon.ends_with('m'), "{out}");
    assert_eq!(lines.next(), None, "{out}");
    let (code, out, _) = hivectl(&d, &["--json", "version"]);
    assert_eq!(code, 0);
    let v: serde_json::Value = serde_json::from_str(out.trim_end()).unwrap();
    assert_eq!(v["ok"], true, "{out}");
    assert_eq!(v["daemon"]["name"], "hive-c0re");
    assert_eq!(v["daemon"]["version"], env!("CARGO_PKG_VERSION"));
    assert_eq!(v["daemon"]["protocol"], 1);
    assert_eq!(v["daemon"]["driver"], "fake");
    assert!(
        v["daemon"]["started_at"].as_str().unwrap().ends_with('Z'),
        "{out}"
    );
    assert!(v["daemon"]["uptime_secs"].as_u64().unwrap() < 600, "{out}");
}
