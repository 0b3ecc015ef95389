//! The real `hive-agent` against the real daemon (`--driver fake`): a
//! harness process for one agent, a stand-in Claude command that records
//! its argv and prompt and does what its mode file says, and the daemon's
//! database read directly to see each message's state.

#![allow(dead_code)] // each test file uses part of the rig

use std::os::unix::fs::PermissionsExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, Stdio};
use std::time::{Duration, Instant};

pub const AGENT_BIN: &str = env!("CARGO_BIN_EXE_hive-agent");

/// The stand-in: records argv (one per line) and the prompt (stdin) of
/// turn N in `argv.N` / `prompt.N`, prints a stream-json init line naming
/// the session it was given with `--resume`, else `s-N`, then acts on
/// `mode`: ok (exit 0), notfound (given `--resume`, what Claude Code says
/// of a session it does not have, exit 1; else ok), fail (exit 1), hang (write `hang.pid`,
/// sleep), reply (send "got it: <first body line>" to the operator with
/// `hive-agent call`, exit 0), send-ok / send-twice / send-hang (send bob
/// "built it" with `hive-agent call`, once or twice, then exit 0 — or, for
/// send-hang, write `hang.pid` and sleep), costly (a `result` event reporting
/// $1.00 and 15 tokens, exit 0), tools (text and a `Bash` call that
/// returns, then a `Read` call left running — `hang.pid` written — until
/// the file `release` exists; then it fails and a `result` reports $0.50).
const STAND_IN: &str = r#"#!/bin/bash
dir="$STAND_IN_DIR"
n=$(( $(cat "$dir/count" 2>/dev/null || echo 0) + 1 ))
prompt=$(cat)
printf '%s' "$prompt" > "$dir/prompt.$n"
printf '%s\n' "$@" > "$dir/argv.$n"
env > "$dir/env.$n"
echo "$n" > "$dir/count"
resume=""; prev=""
for a in "$@"; do [ "$prev" = "--resume" ] && resume="$a"; prev="$a"; done
mode="$(cat "$dir/mode")"
if [ "$mode" = notfound ] && [ -n "$resume" ]; then
  echo "No conversation found with session ID: $resume" >&2
  echo '{"type":"result","subtype":"error_during_execution","is_error":true,"session_id":"s-lost","errors":["No conversation found with session ID: '"$resume"'"]}'
  exit 1
fi
echo '{"type":"system","subtype":"init","model":"stand-in-model","session_id":"'"${resume:-s-$n}"'"}'
case "$mode" in
  ok|notfound) exit 0 ;;
  fail) echo "stand-in failing on purpose" >&2; exit 1 ;;
  hang) echo $$ > "$dir/hang.pid"; exec sleep 600 ;;
  reply) exec "$HIVE_AGENT_BIN" call send '{"to":"operator","body":"got it"}' ;;
  send-hang|send-ok|send-twice)
    times=1; [ "$mode" = send-twice ] && times=2
    for _ in $(seq "$times"); do
      "$HIVE_AGENT_BIN" call send '{"to":"bob","body":"built it"}' >> "$dir/calls.log" 2>&1
    done
    if [ "$mode" = send-hang ]; then echo $$ > "$dir/hang.pid"; exec sleep 600; fi
    exit 0 ;;
  tools)
    echo '{"type":"assistant","message":{"id":"m1","model":"stand-in-model","usage":{"input_tokens":12,"output_tokens":3},"content":[{"type":"text","text":"Checking <the> build"},{"type":"tool_use","id":"tu1","name":"Bash","input":{"command":"echo secret-input"}}]}}'
    echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu1","content":"fine"}]}}'
    echo '{"type":"assistant","message":{"id":"m2","usage":{"input_tokens":20,"output_tokens":4},"content":[{"type":"tool_use","id":"tu2","name":"Read","input":{"file_path":"/secret-path"}}]}}'
    echo $$ > "$dir/hang.pid"
    while [ ! -e "$dir/release" ]; do sleep 0.1; done
    echo '{"type":"user","message":{"content":[{"type":"tool_result","tool_use_id":"tu2","is_error":true,"content":"no"}]}}'
    echo '{"type":"result","subtype":"success","total_cost_usd":0.5,"num_turns":2,"usage":{"input_tokens":32,"output_tokens":7}}'
    ;;
  costly) echo '{"type":"result","subtype":"success","total_cost_usd":1.0,"num_turns":1,"usage":{"input_tokens":10,"output_tokens":5}}' ;;
esac
"#;

/// One harness process and its stand-in's directory.
pub struct Harness {
    pub dir: PathBuf,
    pub child: Child,
    notify: UnixDatagram,
}

pub struct HarnessOptions<'a> {
    pub socket: &'a Path,
    pub dir: &'a Path,
    pub turn_timeout: u64,
    pub stop_grace: u64,
    /// Run this real `claude` with the harness's default argv instead of
    /// the stand-in.
    pub claude_program: Option<&'a Path>,
    /// More environment for the harness (and so for Claude).
    pub env: &'a [(&'a str, String)],
}

impl Harness {
    /// Start `hive-agent run` on `socket`, its files in `dir`; wait for
    /// READY=1.
    pub fn start(o: HarnessOptions<'_>) -> Self {
        let dir = o.dir.to_owned();
        std::fs::create_dir_all(dir.join("state")).unwrap();
        let stand_in = dir.join("stand-in");
        if !stand_in.exists() {
            std::fs::write(&stand_in, STAND_IN).unwrap();
            std::fs::set_permissions(&stand_in, std::fs::Permissions::from_mode(0o755)).unwrap();
            std::fs::write(dir.join("mode"), "ok").unwrap();
        }
        let mut config = serde_json::json!({
            "state_dir": dir.join("state"),
            "turn_timeout_seconds": o.turn_timeout,
            "stop_grace_seconds": o.stop_grace,
            "retry_backoff_seconds": 1,
            "max_backoff_seconds": 2,
            "recv_wait_seconds": 1,
        });
        if let Some(program) = o.claude_program {
            config["claude_program"] = serde_json::json!(program);
        } else {
            config["claude_command"] = serde_json::json!([stand_in]);
        }
        std::fs::write(dir.join("config.json"), config.to_string()).unwrap();
        let notify_path = dir.join("notify.sock");
        let _ = std::fs::remove_file(&notify_path);
        let notify = UnixDatagram::bind(&notify_path).unwrap();
        notify
            .set_read_timeout(Some(Duration::from_secs(20)))
            .unwrap();
        let child = Command::new(AGENT_BIN)
            .arg("run")
            .env("HIVE_AGENT_SOCKET", o.socket)
            .env("HIVE_AGENT_CONFIG", dir.join("config.json"))
            .env_remove("HIVE_CLAUDE_COMMAND")
            .env("STAND_IN_DIR", &dir)
            .env("HIVE_AGENT_BIN", AGENT_BIN)
            .env("NOTIFY_SOCKET", &notify_path)
            .env("RUST_LOG", "info")
            .env_remove("ANTHROPIC_API_KEY")
            .env_remove("CLAUDE_CODE_OAUTH_TOKEN")
            .env_remove("CLAUDE_CONFIG_DIR")
            .env_remove("HIVE_TOOL_GROUPS")
            .envs(o.env.iter().map(|(k, v)| (*k, v.as_str())))
            .stdout(Stdio::null())
            .stderr(std::fs::File::create(dir.join("harness.log")).unwrap())
            .spawn()
            .unwrap();
        let h = Self { dir, child, notify };
        h.wait_notify("READY=1");
        h
    }

    pub fn wait_notify(&self, needle: &str) {
        let mut buf = vec![0u8; 4096];
        loop {
            let n = self.notify.recv(&mut buf).unwrap_or_else(|e| {
                panic!("no {needle} from the harness ({e}); log:\n{}", self.log())
            });
            if String::from_utf8_lossy(&buf[..n]).contains(needle) {
                return;
            }
        }
    }

    pub fn log(&self) -> String {
        std::fs::read_to_string(self.dir.join("harness.log")).unwrap_or_default()
    }

    pub fn set_mode(&self, mode: &str) {
        std::fs::write(self.dir.join("mode"), mode).unwrap();
    }

    /// How many turns the stand-in ran.
    pub fn turns(&self) -> usize {
        std::fs::read_to_string(self.dir.join("count"))
            .ok()
            .and_then(|s| s.trim().parse().ok())
            .unwrap_or(0)
    }

    pub fn prompt(&self, n: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("prompt.{n}"))).unwrap()
    }

    pub fn argv(&self, n: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("argv.{n}"))).unwrap()
    }

    pub fn env(&self, n: usize) -> String {
        std::fs::read_to_string(self.dir.join(format!("env.{n}"))).unwrap()
    }

    pub fn signal(&self, signal: nix::sys::signal::Signal) {
        nix::sys::signal::kill(nix::unistd::Pid::from_raw(self.child.id() as i32), signal).unwrap();
    }

    /// Wait for the harness to exit, at most `within`.
    pub fn wait_exit(&mut self, within: Duration) -> std::process::ExitStatus {
        let deadline = Instant::now() + within;
        loop {
            if let Some(status) = self.child.try_wait().unwrap() {
                return status;
            }
            assert!(
                Instant::now() < deadline,
                "the harness did not exit; log:\n{}",
                self.log()
            );
            std::thread::sleep(Duration::from_millis(20));
        }
    }
}

impl Drop for Harness {
    fn drop(&mut self) {
        let _ = self.child.kill();
        let _ = self.child.wait();
        if let Ok(pid) = std::fs::read_to_string(self.dir.join("hang.pid"))
            && let Ok(pid) = pid.trim().parse::<i32>()
        {
            let _ = nix::sys::signal::kill(
                nix::unistd::Pid::from_raw(pid),
                nix::sys::signal::Signal::SIGKILL,
            );
        }
    }
}

/// Poll `check` every 20 ms until it holds, at most `within`.
pub fn eventually(what: &str, within: Duration, mut check: impl FnMut() -> bool) {
    let deadline = Instant::now() + within;
    while !check() {
        assert!(Instant::now() < deadline, "timed out waiting for {what}");
        std::thread::sleep(Duration::from_millis(20));
    }
}

/// `(state, redelivered)` of every message to `to`, by id; a pending row
/// marked popped reads `inflight`.
pub fn message_states(state_dir: &Path, to: &str) -> Vec<(String, bool)> {
    let db = rusqlite::Connection::open_with_flags(
        state_dir.join("hive.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = db
        .prepare(
            "SELECT CASE WHEN state = 'pending' AND popped_at IS NOT NULL THEN 'inflight' ELSE state END,
                 redelivered FROM messages WHERE recipient = ?1 ORDER BY id",
        )
        .unwrap();
    stmt.query_map([to], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// One column of an agent's row.
pub fn agent_field(state_dir: &Path, name: &str, column: &str) -> Option<String> {
    let db = rusqlite::Connection::open_with_flags(
        state_dir.join("hive.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    db.query_row(
        &format!("SELECT CAST({column} AS TEXT) FROM agents WHERE name = ?1"),
        [name],
        |r| r.get(0),
    )
    .unwrap()
}

/// Bodies the manager got from `system`.
pub fn manager_events(state_dir: &Path) -> Vec<String> {
    let db = rusqlite::Connection::open_with_flags(
        state_dir.join("hive.db"),
        rusqlite::OpenFlags::SQLITE_OPEN_READ_ONLY,
    )
    .unwrap();
    let mut stmt = db
        .prepare(
            "SELECT body FROM messages WHERE recipient = 'ruth' AND sender = 'system' ORDER BY id",
        )
        .unwrap();
    stmt.query_map([], |r| r.get(0))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

/// alice's harness against the daemon `d` (every harness test drives
/// alice, bob being her sender), in `dir`; `claude_program` runs the
/// stand-in as the harness's default Claude argv (`--resume` included)
/// instead of as a whole command.
pub fn start_alice(
    d: &crate::common::Daemon,
    dir: &Path,
    turn_timeout: u64,
    claude_program: Option<&Path>,
) -> Harness {
    Harness::start(HarnessOptions {
        socket: &d.agent_socket("alice"),
        dir,
        turn_timeout,
        stop_grace: 1,
        claude_program,
        env: &[],
    })
}

/// bob sends alice `body` (a plain JSON string) and it is delivered.
pub fn send_to_alice(d: &crate::common::Daemon, body: &str) {
    let mut bob = crate::common::Conn::open(&d.agent_socket("bob"));
    assert_eq!(
        bob.ask(&format!(r#"{{"cmd":"send","to":"alice","body":"{body}"}}"#)),
        r#"{"kind":"ok","delivered":1}"#
    );
}

/// Each message to alice: its state and whether it was redelivered.
pub fn alice_states(d: &crate::common::Daemon) -> Vec<(String, bool)> {
    message_states(&d.state_dir(), "alice")
}

/// alice's turns from the journal (`turns` on host.sock): outcome and
/// error, newest first.
pub fn alice_turns(d: &crate::common::Daemon) -> Vec<(String, String)> {
    let line = d.request(r#"{"cmd":"turns","name":"alice","limit":100}"#);
    let answer: serde_json::Value = serde_json::from_str(&line).unwrap();
    answer["turns"]
        .as_array()
        .unwrap_or_else(|| panic!("{line}"))
        .iter()
        .map(|t| {
            let error = t["error"].as_str().unwrap_or_default().to_owned();
            (t["outcome"].as_str().unwrap().to_owned(), error)
        })
        .collect()
}
