//! The live turn end to end: the real `hive-agent run` with a stand-in
//! Claude command whose stream has text and tool calls, the real daemon
//! (`--driver fake`), and what the operator sees of the turn while it runs
//! — `hivectl turns NAME -f` and the agent page on web.sock — then its end,
//! and `-f` carrying on across a daemon restart.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test
#![allow(clippy::disallowed_methods)] // test code runs the binaries under test

#[path = "support/agent_rig/mod.rs"]
mod agent_rig;
#[path = "support/common/mod.rs"]
mod common;

use std::io::{Read, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::Duration;

use agent_rig::{Harness, HarnessOptions, eventually};
use common::follow::Follower;
use common::{Conn, Daemon, Launch, daemon_with};

const LONG: Duration = Duration::from_secs(20);

fn get(socket: &Path, path: &str) -> String {
    let mut s = UnixStream::connect(socket).unwrap();
    s.set_read_timeout(Some(Duration::from_secs(10))).unwrap();
    let request = format!("GET {path} HTTP/1.1\r\nHost: dash\r\nConnection: close\r\n\r\n");
    s.write_all(request.as_bytes()).unwrap();
    let mut out = String::new();
    s.read_to_string(&mut out).unwrap();
    out
}

fn send_to_alice(d: &Daemon, body: &str) {
    let mut bob = Conn::open(&d.agent_socket("bob"));
    let line = serde_json::json!({"cmd": "send", "to": "alice", "body": body}).to_string();
    assert_eq!(bob.ask(&line), r#"{"kind":"ok","delivered":1}"#);
}

#[test]
fn a_turns_tool_calls_reach_hivectl_turns_f_and_the_agent_page_as_they_happen() {
    let d = daemon_with(&["alice", "bob"]);
    let tmp = tempfile::tempdir().unwrap();
    let h = Harness::start(HarnessOptions {
        socket: &d.agent_socket("alice"),
        dir: tmp.path(),
        turn_timeout: 60,
        stop_grace: 1,
        claude_program: None,
        env: &[],
    });
    h.set_mode("tools");
    let f = Follower::start(&d, "alice");
    f.shows("the empty journal", LONG, &["no turns"]);
    send_to_alice(&d, "\nplease check the build\nand the tests");

    // While the Read call runs: the prompt, the finished Bash call, the
    // running Read, the text, the tokens so far (each message once).
    f.shows(
        "the turn in progress",
        LONG,
        &[
            "turn started at ",
            ": 1 message(s)\n  from bob: please check the build\n",
            "  tool Bash …\n",
            "  tool Bash ok (",
            "  tool Read …\n",
            "  | Checking <the> build\n",
            "  tokens so far: 39\n",
        ],
    );
    let page = get(&d.web_socket(), "/agent/alice");
    assert!(page.starts_with("HTTP/1.1 200"), "{page}");
    for shown in [
        "data-live-html=\"/events/turn/alice\"",
        "please check the build",
        "Checking &lt;the&gt; build",
        "<td class=\"mono\">Bash</td><td>ok</td>",
        "<td class=\"mono\">Read</td><td><span class=\"state ok\">running</span>",
        "39 tokens so far",
    ] {
        assert!(page.contains(shown), "{shown} not in {page}");
    }
    // Never a tool's input, anywhere.
    assert!(!page.contains("secret"), "{page}");
    assert!(!f.out().contains("secret"), "{}", f.out());

    // The turn ends: its journal line follows, and the page says so.
    std::fs::write(tmp.path().join("release"), "").unwrap();
    f.shows(
        "the turn's end",
        LONG,
        &[
            "  tool Read failed (",
            "  tokens: 39, $0.50\n",
            "ended ",
            ": ok, ",
            " tokens, $0.50\n",
        ],
    );
    let page = get(&d.web_socket(), "/agent/alice");
    assert!(page.contains("No turn in progress."), "{page}");
    assert!(page.contains("id=\"last-turns\""), "{page}");
    assert!(page.contains("$0.50"), "{page}");
    // The roster's spend today is the meter's: the turn's reported $0.50
    // is not in it (no request of this stand-in was metered).
    let roster = get(&d.web_socket(), "/");
    assert!(
        roster.contains("<td class=\"num today\">-</td>"),
        "{roster}"
    );

    // A daemon restart: hivectl reconnects and follows the next turn.
    let dir = d.kill_hard();
    let d = Daemon::start_in(dir, Launch::Standalone);
    eventually("hivectl reconnected", LONG, || {
        f.err().contains("reconnected")
    });
    let before = f.out().matches(": ok, ").count();
    send_to_alice(&d, "once more");
    eventually("the next turn followed", LONG, || {
        let out = f.out();
        out.contains("from bob: once more") && out.matches(": ok, ").count() > before
    });
    drop(h);
}

#[test]
fn a_progress_event_past_its_caps_is_refused_on_the_socket_and_the_connection_goes_on() {
    let d = daemon_with(&["alice"]);
    let mut alice = Conn::open(&d.agent_socket("alice"));
    let long = serde_json::json!({"cmd": "turn_progress",
        "progress": {"event": "reply", "text": "x".repeat(2001)}});
    let answer = alice.ask(&long.to_string());
    assert!(
        answer.contains(r#""kind":"err""#)
            && answer.contains(r#""code":"bad_request""#)
            && answer.contains(r#"turn_progress: \"text\" must be at most 2000 bytes"#),
        "{answer}"
    );
    let bell = r#"{"cmd":"turn_progress","progress":{"event":"tool_started","call":0,"name":"Bash\u0007"}}"#;
    assert!(alice.ask(bell).contains("bad_request"));
    let fine =
        r#"{"cmd":"turn_progress","progress":{"event":"tool_started","call":0,"name":"Bash"}}"#;
    assert_eq!(alice.ask(fine), r#"{"kind":"ok"}"#);
    let follow = d.request(r#"{"cmd":"turns","name":"nobody","follow":true}"#);
    assert!(follow.contains(r#""code":"unknown_agent""#), "{follow}");
}
