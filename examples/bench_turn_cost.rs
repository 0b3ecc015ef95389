//! Benchmark (prints figures; not a test): what the turn journal and the
//! live view add to a turn's host-side cost, over real agent sockets of a
//! real daemon (`serve --driver fake`, release build).
//!
//! A turn here is the daemon-side traffic of one harness turn with
//! [`TOOLS`] tool calls, as `hive-agent run` and Claude's hooks make it:
//! the message it takes (`send` to itself, then `recv`), the headless
//! hooks (`UserPromptSubmit`, `PreToolUse`/`PostToolUse` per tool call,
//! `Stop`), and `ack_turn`. Three kinds, alternated [`REPEATS`] times:
//! - **bare**: the above, what a turn cost before the journal;
//! - **+report**: with `report_turn` before the ack (one durable write);
//! - **+report+live**: also the `turn_progress` events the harness sends
//!   (started, each tool call's start and end, the reply, usage, final).
//!
//! Printed per kind: the daemon's CPU per turn (user + system, from
//! `/proc/<pid>/stat`) and the p50 of a turn's wall time, each as a ratio
//! against *bare* in the same run (medians of the repeats). This is the
//! part the hive adds; for scale, when the Claude Code CLI is found
//! (`HIVE_TEST_CLAUDE`, as `tests/clients/install` prints it, or `claude`
//! on PATH), the CPU of `claude --version` (3 runs, median) is printed
//! beside it: a floor of what Claude's own process costs the host per turn
//! (a real turn also talks to the API and runs its tools).
//!
//! Run: `examples/bench bench_turn_cost`

#![allow(clippy::unwrap_used, clippy::expect_used)] // a benchmark may panic on setup failure
#![allow(clippy::disallowed_methods)] // a benchmark runs the daemon it measures

#[path = "support/daemon.rs"]
mod daemon;

use std::io::{BufRead, BufReader, Write};
use std::os::unix::net::UnixStream;
use std::path::Path;
use std::time::{Duration, Instant};

use hive_c0re::wire::agent::Request;
use hive_c0re::wire::live::{PromptLine, TurnProgress};
use hive_c0re::wire::turns::{ToolCall, TurnOutcome, TurnReport, TurnUsage};

/// Agents taking turns at once (one thread each, like their harnesses).
const AGENTS: usize = 8;
/// Turns per agent per kind and repeat.
const TURNS: usize = 150;
/// Tool calls per turn.
const TOOLS: u32 = 5;
const REPEATS: usize = 3;

#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Bare,
    Report,
    ReportLive,
}

impl Kind {
    const ALL: [Kind; 3] = [Kind::Bare, Kind::Report, Kind::ReportLive];

    fn label(self) -> &'static str {
        match self {
            Kind::Bare => "bare",
            Kind::Report => "+report",
            Kind::ReportLive => "+report+live",
        }
    }
}

/// One agent's connection to its socket, request by request like the
/// harness.
struct Conn(BufReader<UnixStream>);

impl Conn {
    fn open(socket: &Path) -> Self {
        Conn(BufReader::new(UnixStream::connect(socket).unwrap()))
    }

    fn ask(&mut self, line: &str) -> serde_json::Value {
        let s = self.0.get_mut();
        s.write_all(line.as_bytes()).unwrap();
        s.write_all(b"\n").unwrap();
        let mut answer = String::new();
        self.0.read_line(&mut answer).unwrap();
        let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
        assert_ne!(v["kind"], "err", "{line} -> {answer}");
        v
    }

    fn call(&mut self, request: &Request) -> serde_json::Value {
        self.ask(&serde_json::to_string(request).unwrap())
    }

    fn hook(&mut self, event: &str, tool: Option<&str>) {
        let mut payload = serde_json::json!({"hook_event_name": event, "session_id": "s"});
        if let Some(tool) = tool {
            payload["tool_name"] = tool.into();
        }
        self.call(&Request::HookEvent {
            payload: payload.to_string(),
            headless: true,
        });
    }

    fn progress(&mut self, progress: TurnProgress) {
        self.call(&Request::TurnProgress {
            progress,
            dropped: 0,
        });
    }
}

fn now_ms() -> i64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_millis() as i64
}

fn usage() -> TurnUsage {
    TurnUsage {
        input_tokens: 1200,
        output_tokens: 300,
        cache_read_input_tokens: 5000,
        cache_creation_input_tokens: 100,
    }
}

/// One turn of `kind` by `me` on `c`.
fn turn(c: &mut Conn, me: &str, kind: Kind) {
    let live = kind == Kind::ReportLive;
    let started_at_ms = now_ms();
    c.ask(&format!(
        r#"{{"cmd":"send","to":"{me}","body":"please look at the failing test"}}"#
    ));
    let got = c.ask(r#"{"cmd":"recv","wait_seconds":5,"max":10}"#);
    let ids: Vec<i64> = got["messages"]
        .as_array()
        .unwrap()
        .iter()
        .map(|m| m["id"].as_i64().unwrap())
        .collect();
    assert!(!ids.is_empty(), "no message for {me}: {got}");
    if live {
        c.progress(TurnProgress::Started {
            started_at_ms,
            messages: vec![PromptLine {
                from: me.into(),
                first_line: "please look at the failing test".into(),
            }],
            total_messages: ids.len() as u32,
        });
    }
    c.hook("UserPromptSubmit", None);
    let mut tools = Vec::new();
    for call in 0..TOOLS {
        if live {
            c.progress(TurnProgress::ToolStarted {
                call,
                name: "Bash".into(),
            });
        }
        c.hook("PreToolUse", Some("Bash"));
        c.hook("PostToolUse", Some("Bash"));
        if live {
            c.progress(TurnProgress::ToolEnded {
                call,
                ok: true,
                duration_ms: 40,
            });
        }
        tools.push(ToolCall {
            name: "Bash".into(),
            ok: true,
            duration_ms: 40,
        });
    }
    if live {
        c.progress(TurnProgress::Reply {
            text: "The test failed on a stale fixture; fixed and re-run.".into(),
        });
        c.progress(TurnProgress::Usage {
            usage: usage(),
            cost_micro_usd: Some(21_000),
            is_final: true,
        });
    }
    c.hook("Stop", None);
    if kind != Kind::Bare {
        c.call(&Request::ReportTurn {
            turn: TurnReport {
                started_at_ms,
                ended_at_ms: now_ms(),
                message_ids: ids,
                session_id: Some("s".into()),
                model: Some("claude-sonnet".into()),
                outcome: TurnOutcome::Ok,
                error: None,
                tools,
                usage: Some(usage()),
                cost_micro_usd: Some(21_000),
                num_turns: Some(TOOLS + 1),
                duration_ms: Some(2_000),
                duration_api_ms: Some(1_500),
            },
        });
    }
    c.ask(r#"{"cmd":"ack_turn"}"#);
}

/// [`TURNS`] turns of `kind` on every agent at once: the daemon's CPU per
/// turn (µs) and the p50 of a turn's wall time.
fn run(pid: u32, run_dir: &Path, kind: Kind) -> (f64, Duration) {
    let cpu = daemon::cpu_time(pid);
    let threads: Vec<_> = (0..AGENTS)
        .map(|i| {
            let socket = run_dir
                .join("agents")
                .join(format!("t{i}"))
                .join("mcp.sock");
            std::thread::spawn(move || {
                let mut c = Conn::open(&socket);
                let me = format!("t{i}");
                (0..TURNS)
                    .map(|_| {
                        let t = Instant::now();
                        turn(&mut c, &me, kind);
                        t.elapsed()
                    })
                    .collect::<Vec<_>>()
            })
        })
        .collect();
    let mut lat: Vec<Duration> = threads
        .into_iter()
        .flat_map(|t| t.join().unwrap())
        .collect();
    let cpu = daemon::cpu_time(pid) - cpu;
    lat.sort();
    let per_turn = cpu.as_secs_f64() * 1e6 / (AGENTS * TURNS) as f64;
    (per_turn, lat[lat.len() / 2])
}

/// The median CPU (user + system) of `claude --version`, if a CLI is found.
fn claude_floor() -> Option<(std::path::PathBuf, Duration)> {
    use nix::sys::resource::{UsageWho, getrusage};
    let claude = std::env::var_os("HIVE_TEST_CLAUDE")
        .map(std::path::PathBuf::from)
        .or_else(|| {
            std::env::var_os("PATH").and_then(|path| {
                std::env::split_paths(&path)
                    .map(|d| d.join("claude"))
                    .find(|p| p.is_file())
            })
        })?;
    let children = || {
        let u = getrusage(UsageWho::RUSAGE_CHILDREN).unwrap();
        let (user, sys) = (u.user_time(), u.system_time());
        Duration::from_micros(
            (user.tv_sec() * 1_000_000 + user.tv_usec() + sys.tv_sec() * 1_000_000 + sys.tv_usec())
                as u64,
        )
    };
    let mut runs = Vec::new();
    for _ in 0..3 {
        let before = children();
        let ok = std::process::Command::new(&claude)
            .arg("--version")
            .stdout(std::process::Stdio::null())
            .status()
            .ok()?
            .success();
        if !ok {
            return None;
        }
        runs.push(children() - before);
    }
    Some((claude, median(runs)))
}

fn median<T: PartialOrd + Copy>(mut v: Vec<T>) -> T {
    v.sort_by(|a, b| a.partial_cmp(b).unwrap());
    v[v.len() / 2]
}

fn main() {
    let dir = tempfile::tempdir().unwrap();
    let (daemon, run_dir) = daemon::serve_fake(dir.path(), None, &[]);
    let pid = daemon.0.id();
    for i in 0..AGENTS {
        let answer = daemon::request(
            &run_dir.join("host.sock"),
            &format!(r#"{{"cmd":"spawn","name":"t{i}"}}"#),
        );
        assert!(answer.contains(r#""ok":true"#), "{answer}");
        daemon::wait_for(
            &run_dir
                .join("agents")
                .join(format!("t{i}"))
                .join("mcp.sock"),
        );
    }
    // Warm up: the first turns open the database's pages and the sockets.
    run(pid, &run_dir, Kind::ReportLive);

    let mut figures: Vec<(Vec<f64>, Vec<Duration>)> = vec![(Vec::new(), Vec::new()); 3];
    for rep in 0..REPEATS {
        for (slot, kind) in Kind::ALL.into_iter().enumerate() {
            let (cpu, p50) = run(pid, &run_dir, kind);
            println!(
                "run {rep}: {:<13} {AGENTS} agents x {TURNS} turns of {TOOLS} tool calls: daemon CPU {cpu:.0} us per turn, turn p50 {p50:.2?}",
                kind.label()
            );
            figures[slot].0.push(cpu);
            figures[slot].1.push(p50);
        }
    }
    let medians: Vec<(f64, Duration)> = figures
        .into_iter()
        .map(|(cpu, p50)| (median(cpu), median(p50)))
        .collect();
    let (bare_cpu, bare_p50) = medians[0];
    for (kind, (cpu, p50)) in Kind::ALL.into_iter().zip(&medians) {
        println!(
            "median {:<13}: daemon CPU {cpu:.0} us per turn = {:.2}x bare, turn p50 {p50:.2?} = {:.2}x bare",
            kind.label(),
            cpu / bare_cpu,
            p50.as_secs_f64() / bare_p50.as_secs_f64()
        );
    }
    match claude_floor() {
        Some((claude, cpu)) => {
            let cpu_us = cpu.as_secs_f64() * 1e6;
            println!(
                "for scale: `{} --version` costs {cpu_us:.0} us of CPU (median of 3); the hive's whole part of a turn (+report+live) is {:.2}% of that, the report alone {:.3}%, the live view {:.3}%",
                claude.display(),
                100.0 * medians[2].0 / cpu_us,
                100.0 * (medians[1].0 - bare_cpu) / cpu_us,
                100.0 * (medians[2].0 - medians[1].0) / cpu_us
            );
        }
        None => println!(
            "for scale: no Claude Code CLI found (HIVE_TEST_CLAUDE or claude on PATH): skipped"
        ),
    }
}
