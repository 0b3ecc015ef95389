//! Fuzz targets, one per parser an outsider can reach (issue 14, item 7):
//! the line framing every socket uses, host.sock requests, agent and
//! manager socket requests, Claude Code hook payloads, the swarm's bus
//! messages and addresses, journalctl's output, and the daemon's config.
//!
//! Each property feeds arbitrary bytes (and, for the JSON parsers, arbitrary
//! JSON shaped like a request) and checks the parser never panics, and that
//! a refusal is a clear error: non-empty, naming what was wrong, and
//! bounded in length whatever the input (an error never echoes a 1 MiB
//! string back).
//!
//! proptest rather than cargo-fuzz: it runs on the stable toolchain, inside
//! `cargo test`. A short run by default (proptest's 256 cases per target);
//! a long one by raising the case count:
//!
//! ```text
//! PROPTEST_CASES=100000 cargo test --release --test fuzz
//! ```
//!
//! A failing input is shrunk to a minimal one and saved under
//! `tests/fuzz.proptest-regressions`, replayed first on every later run.

#![allow(clippy::unwrap_used, clippy::expect_used)] // tests may panic

use std::path::Path;

use hive_c0re::config::Config;
use hive_c0re::hive::address;
use hive_c0re::hive::hooks::HookEvent;
use hive_c0re::hive::names;
use hive_c0re::server::framing::{FrameError, parse_request, read_line};
use hive_c0re::systemd::journal::parse_output;
use hive_c0re::wire::agent::Request as AgentRequest;
use hive_c0re::wire::host::HostRequest;
use hive_c0re::wire::ident::Ident;
use hive_c0re::wire::swarm::BusMessage;
use proptest::prelude::*;
use serde_json::{Map, Value};

/// The longest error a parser may answer, whatever the input: the fixed
/// words, the list of known commands, and a clipped quote.
const ERROR_CAP: usize = 2048;

/// Bytes that look like protocol traffic as often as noise: many newlines,
/// braces and quotes among arbitrary bytes.
fn wire_bytes(max: usize) -> impl Strategy<Value = Vec<u8>> {
    prop::collection::vec(
        prop_oneof![
            3 => any::<u8>(),
            1 => Just(b'\n'),
            1 => prop::sample::select(b"{}[]\":,\\ 0aZ".to_vec()),
        ],
        0..max,
    )
}

/// Any JSON value, nested a few levels.
fn json() -> impl Strategy<Value = Value> {
    let leaf = prop_oneof![
        Just(Value::Null),
        any::<bool>().prop_map(Value::Bool),
        any::<i64>().prop_map(Value::from),
        any::<u64>().prop_map(Value::from),
        any::<f64>().prop_map(Value::from),
        ".{0,40}".prop_map(Value::String),
        // long strings: an error must not quote them whole
        (0usize..5000).prop_map(|n| Value::String("x".repeat(n))),
    ];
    leaf.prop_recursive(3, 24, 6, |inner| {
        prop_oneof![
            prop::collection::vec(inner.clone(), 0..6).prop_map(Value::Array),
            prop::collection::btree_map(".{0,12}", inner, 0..6)
                .prop_map(|m| Value::Object(m.into_iter().collect())),
        ]
    })
}

/// A request object: a `cmd` from `commands` (or not), and fields named as
/// requests name them, with arbitrary values.
fn request_line(commands: &'static [&'static str]) -> impl Strategy<Value = Vec<u8>> {
    const FIELDS: &[&str] = &[
        "name",
        "to",
        "body",
        "from",
        "limit",
        "max",
        "wait_seconds",
        "id",
        "answer",
        "payload",
        "agent",
        "transient",
        "in_reply_to",
        "question",
        "options",
        "ttl_seconds",
        "timing",
        "message",
        "force",
        "purge",
        "deadline_secs",
        "kind",
        "since_secs",
        "commit_ref",
    ];
    let long = || (0usize..5000).prop_map(|n| Value::String("c".repeat(n)));
    let cmd = prop_oneof![
        4 => prop::sample::select(commands.to_vec()).prop_map(|c| Value::String(c.to_owned())),
        1 => json(),
        1 => long(),
    ];
    let value = prop_oneof![3 => json(), 1 => long()];
    let fields = prop::collection::vec((prop::sample::select(FIELDS.to_vec()), value), 0..5);
    (cmd, fields).prop_map(|(cmd, fields)| {
        let mut object = Map::new();
        object.insert("cmd".into(), cmd);
        for (k, v) in fields {
            object.insert(k.into(), v);
        }
        serde_json::to_vec(&Value::Object(object)).unwrap()
    })
}

/// A refusal a person can act on: says what was wrong, and is bounded.
fn assert_clear(err: &str) {
    assert!(!err.trim().is_empty(), "an empty error");
    assert!(
        err.len() <= ERROR_CAP,
        "an error of {} bytes: {:.300}",
        err.len(),
        err
    );
}

fn check_request<T: serde::de::DeserializeOwned>(line: &[u8], commands: &[&str]) {
    if let Err(err) = parse_request::<T>(line, commands) {
        assert_clear(&err);
        let known = ["request", "unknown cmd", "invalid ", "\"cmd\""];
        assert!(
            known.iter().any(|k| err.starts_with(k)),
            "an error of no known shape: {err:.300}"
        );
    }
}

/// Read every line of `input` through [`read_line`], `chunk` bytes per
/// read, as a socket would hand them over.
fn frames(input: &[u8], cap: usize, chunk: usize) -> Vec<Result<Option<Vec<u8>>, String>> {
    let rt = tokio::runtime::Builder::new_current_thread()
        .build()
        .unwrap();
    rt.block_on(async {
        let mut reader = tokio::io::BufReader::with_capacity(chunk, input);
        let mut out = Vec::new();
        loop {
            let next = read_line(&mut reader, cap).await.map_err(|e| match e {
                FrameError::TooLong(n) => format!("too long: {n}"),
                FrameError::Io(e) => format!("io: {e}"),
            });
            let done = !matches!(next, Ok(Some(_)));
            out.push(next);
            if done {
                return out;
            }
        }
    })
}

/// What [`read_line`] must give for `input`: each `\n`-ended line (and a
/// last unterminated one) in order, stopping at the first past `cap`.
fn expected_frames(input: &[u8], cap: usize) -> Vec<Result<Option<Vec<u8>>, String>> {
    let mut out = Vec::new();
    let mut parts: Vec<&[u8]> = input.split(|&b| b == b'\n').collect();
    // A final empty part is the end of input after a newline (or nothing).
    if parts.last().is_some_and(|p| p.is_empty()) {
        parts.pop();
    }
    for part in parts {
        if part.len() > cap {
            out.push(Err(format!("too long: {cap}")));
            return out;
        }
        out.push(Ok(Some(part.to_vec())));
    }
    out.push(Ok(None));
    out
}

proptest! {
    /// Framing: nothing is lost, reordered or merged, however the bytes
    /// arrive; a line past the cap is refused, never read further.
    #[test]
    fn framing_reads_every_line_of_any_bytes_and_refuses_only_lines_past_the_cap(
        input in wire_bytes(600),
        cap in 1usize..80,
        chunk in 1usize..64,
    ) {
        prop_assert_eq!(frames(&input, cap, chunk), expected_frames(&input, cap));
    }

    #[test]
    fn host_requests_from_any_bytes_parse_or_are_refused_clearly(line in wire_bytes(400)) {
        check_request::<HostRequest>(&line, HostRequest::COMMANDS);
    }

    #[test]
    fn host_requests_shaped_like_requests_parse_or_are_refused_clearly(
        line in request_line(HostRequest::COMMANDS),
    ) {
        check_request::<HostRequest>(&line, HostRequest::COMMANDS);
    }

    /// Agent and manager sockets share the agent's request type.
    #[test]
    fn agent_requests_from_any_bytes_parse_or_are_refused_clearly(line in wire_bytes(400)) {
        check_request::<AgentRequest>(&line, AgentRequest::COMMANDS);
    }

    #[test]
    fn agent_requests_shaped_like_requests_parse_or_are_refused_clearly(
        line in request_line(AgentRequest::COMMANDS),
    ) {
        check_request::<AgentRequest>(&line, AgentRequest::COMMANDS);
    }

    /// Hook payloads: refused with the intake's reason, or kept whole.
    #[test]
    fn hook_payloads_parse_whole_or_are_refused_clearly(
        payload in prop_oneof![
            wire_bytes(400),
            json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
            (json(), ".{0,30}").prop_map(|(v, name)| {
                serde_json::to_vec(&serde_json::json!({"hook_event_name": name, "x": v})).unwrap()
            }),
        ],
    ) {
        match HookEvent::parse(&payload) {
            Ok(event) => {
                prop_assert!(!event.name.is_empty());
                prop_assert_eq!(event.raw.as_bytes(), &payload[..]);
            }
            Err(err) => {
                let err = err.to_string();
                assert_clear(&err);
                prop_assert!(err.starts_with("hook payload"), "{}", err);
            }
        }
    }

    /// What another hive puts on the bus: a message, its sender and its
    /// address are each parsed or refused, never a panic.
    #[test]
    fn swarm_messages_senders_and_addresses_parse_or_are_refused(
        bytes in prop_oneof![
            wire_bytes(300),
            json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
        ],
        name in ".{0,100}",
    ) {
        let _ = serde_json::from_slice::<BusMessage>(&bytes);
        if let Err(err) = names::check_remote_sender(&name) {
            assert_clear(&err);
        }
        let own = Ident::new("hive-a").unwrap();
        for own in [Some(&own), None] {
            if let Err(err) = address::parse(&name, own) {
                assert_clear(&err.to_string());
            }
        }
    }

    /// journalctl's output is read, never trusted: any bytes give entries
    /// and a count of skipped lines.
    #[test]
    fn journal_output_of_any_bytes_is_read_or_skipped(output in wire_bytes(600)) {
        let parsed = parse_output(&output);
        let lines = output.split(|&b| b == b'\n').filter(|l| !l.is_empty()).count();
        prop_assert!(parsed.entries.len() + parsed.skipped <= lines);
    }

    /// The config: a file of any bytes is a config or an error naming the
    /// file, never a panic.
    #[test]
    fn config_files_of_any_bytes_load_or_are_refused_naming_the_file(
        bytes in prop_oneof![
            wire_bytes(300),
            json().prop_map(|v| serde_json::to_vec(&v).unwrap()),
            prop::collection::vec(
                (prop::sample::select(vec![
                    "state_dir", "runtime_dir", "driver", "profile", "manager", "max_agents",
                    "agent_max_connections", "inbox_max_bytes", "swarm", "hive_name",
                    "stop_deadline_secs", "approval_command", "journal_directory", "notify_command",
                    "meta_flake", "nix_command",
                ]), json()),
                0..5,
            ).prop_map(|kv| {
                let object: Map<String, Value> = kv.into_iter().map(|(k, v)| (k.to_owned(), v)).collect();
                serde_json::to_vec(&Value::Object(object)).unwrap()
            }),
        ],
    ) {
        let path = Path::new("/etc/hive-c0re/config.json");
        if let Err(err) = Config::parse(&bytes, path) {
            let chain = format!("{err}");
            prop_assert!(chain.contains("/etc/hive-c0re/config.json"), "{}", chain);
        }
    }
}
