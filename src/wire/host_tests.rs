//! Golden lines: the exact bytes of every host.sock request and response
//! shape. Existing clients parse these; a diff here is a protocol change.

use super::codes::ErrorCode;
use super::host::*;

use crate::testing::id;

/// Each request, and the line it is on the wire.
fn requests() -> Vec<(HostRequest, &'static str)> {
    let scope = LifecycleScope::agents(vec![id("alice")]);
    vec![
        (HostRequest::List, r#"{"cmd":"list"}"#),
        (HostRequest::AgentStatus, r#"{"cmd":"agent_status"}"#),
        (
            HostRequest::SubscribeAgentStatus,
            r#"{"cmd":"subscribe_agent_status"}"#,
        ),
        (HostRequest::Urls, r#"{"cmd":"urls"}"#),
        (HostRequest::SwarmStatus, r#"{"cmd":"swarm_status"}"#),
        (
            HostRequest::SetPaused {
                name: id("alice"),
                paused: true,
            },
            r#"{"cmd":"set_paused","name":"alice","paused":true}"#,
        ),
        (
            HostRequest::Start {
                scope: scope.clone(),
            },
            r#"{"cmd":"start","scope":{"agent_names":["alice"],"agents":false,"ci":false,"forge":false,"gateway":false,"matrix":false}}"#,
        ),
        (
            HostRequest::Stop {
                scope: LifecycleScope::default(),
                graceful: true,
                deadline_secs: None,
            },
            r#"{"cmd":"stop","scope":{"agent_names":[],"agents":false,"ci":false,"forge":false,"gateway":false,"matrix":false},"graceful":true}"#,
        ),
        (
            HostRequest::Stop {
                scope: LifecycleScope::default(),
                graceful: true,
                deadline_secs: Some(30),
            },
            r#"{"cmd":"stop","scope":{"agent_names":[],"agents":false,"ci":false,"forge":false,"gateway":false,"matrix":false},"graceful":true,"deadline_secs":30}"#,
        ),
        (
            HostRequest::Restart { name: id("alice") },
            r#"{"cmd":"restart","name":"alice"}"#,
        ),
        (HostRequest::RestartAll, r#"{"cmd":"restart_all"}"#),
        (
            HostRequest::Spawn { name: id("alice") },
            r#"{"cmd":"spawn","name":"alice"}"#,
        ),
        (
            HostRequest::RequestSpawn { name: id("alice") },
            r#"{"cmd":"request_spawn","name":"alice"}"#,
        ),
        (
            HostRequest::Kill { name: id("alice") },
            r#"{"cmd":"kill","name":"alice"}"#,
        ),
        (
            HostRequest::Destroy {
                name: id("alice"),
                purge: false,
            },
            r#"{"cmd":"destroy","name":"alice","purge":false}"#,
        ),
        (
            HostRequest::Rebuild { name: id("alice") },
            r#"{"cmd":"rebuild","name":"alice"}"#,
        ),
        (HostRequest::Pending, r#"{"cmd":"pending"}"#),
        (
            HostRequest::Approve {
                id: 7,
                expires_in_secs: None,
            },
            r#"{"cmd":"approve","id":7}"#,
        ),
        (
            HostRequest::Deny { id: 7, note: None },
            r#"{"cmd":"deny","id":7}"#,
        ),
        (
            HostRequest::Deny {
                id: 7,
                note: Some("keep 4G".into()),
            },
            r#"{"cmd":"deny","id":7,"note":"keep 4G"}"#,
        ),
        (HostRequest::Show { id: 7 }, r#"{"cmd":"show","id":7}"#),
        (
            HostRequest::Rollback {
                name: id("alice"),
                id: 3,
            },
            r#"{"cmd":"rollback","name":"alice","id":3}"#,
        ),
        (
            HostRequest::SetParent {
                child: id("alice"),
                new_parent: Some(id("ruth")),
            },
            r#"{"cmd":"set_parent","child":"alice","new_parent":"ruth"}"#,
        ),
        (
            HostRequest::SetParent {
                child: id("alice"),
                new_parent: None,
            },
            r#"{"cmd":"set_parent","child":"alice","new_parent":null}"#,
        ),
        (
            HostRequest::Logs {
                name: id("alice"),
                lines: Some(5),
                unit: None,
                follow: true,
            },
            r#"{"cmd":"logs","name":"alice","lines":5,"follow":true}"#,
        ),
        (
            HostRequest::Inbox {
                limit: Some(20),
                id: None,
            },
            r#"{"cmd":"inbox","limit":20}"#,
        ),
        (
            HostRequest::Inbox {
                limit: None,
                id: Some(7),
            },
            r#"{"cmd":"inbox","id":7}"#,
        ),
        (HostRequest::Questions, r#"{"cmd":"questions"}"#),
        (
            HostRequest::Answer {
                id: 3,
                answer: "yes".into(),
            },
            r#"{"cmd":"answer","id":3,"answer":"yes"}"#,
        ),
        (HostRequest::Schedules, r#"{"cmd":"schedules"}"#),
        (
            HostRequest::CancelSchedule {
                id: 2,
                targets: Some(vec!["alice".into()]),
            },
            r#"{"cmd":"cancel_schedule","id":2,"targets":["alice"]}"#,
        ),
        (HostRequest::Grants { name: None }, r#"{"cmd":"grants"}"#),
        (
            HostRequest::Grant {
                name: id("alice"),
                capability: Some(super::agenda::Capability::ReadHostJournal),
                tool_group: None,
                egress: None,
                expires_in_secs: None,
            },
            r#"{"cmd":"grant","name":"alice","capability":"read_host_journal"}"#,
        ),
        (
            HostRequest::Revoke {
                name: id("alice"),
                capability: None,
                tool_group: Some(super::agenda::ToolGroup::Lifecycle),
                egress: None,
            },
            r#"{"cmd":"revoke","name":"alice","tool_group":"lifecycle"}"#,
        ),
        (
            HostRequest::Grant {
                name: id("alice"),
                capability: None,
                tool_group: None,
                egress: Some(super::egress::EgressPattern::new("pypi.org:443").unwrap()),
                expires_in_secs: Some(3600),
            },
            r#"{"cmd":"grant","name":"alice","egress":"pypi.org:443","expires_in_secs":3600}"#,
        ),
        (
            HostRequest::Revoke {
                name: id("alice"),
                capability: None,
                tool_group: None,
                egress: Some(super::egress::EgressPattern::new("*.pypi.org").unwrap()),
            },
            r#"{"cmd":"revoke","name":"alice","egress":"*.pypi.org"}"#,
        ),
        (
            HostRequest::Send {
                to: id("alice"),
                body: "hi".into(),
                hive: None,
            },
            r#"{"cmd":"send","to":"alice","body":"hi"}"#,
        ),
        (
            HostRequest::Send {
                to: id("bob"),
                body: "hi".into(),
                hive: Some(id("hive-b")),
            },
            r#"{"cmd":"send","to":"bob","body":"hi","hive":"hive-b"}"#,
        ),
        (
            HostRequest::Journal {
                filters: super::agenda::HostJournalFilters {
                    unit: Some("hive-c0re.service".into()),
                    container: None,
                    lines: None,
                    priority: Some(super::agenda::JournalPriority::Warning),
                    grep: None,
                    since: Some("-1h".into()),
                    until: None,
                },
                follow: false,
            },
            r#"{"cmd":"journal","unit":"hive-c0re.service","priority":"warning","since":"-1h"}"#,
        ),
        (
            HostRequest::Journal {
                filters: super::agenda::HostJournalFilters {
                    container: Some("h-alice".into()),
                    lines: Some(5),
                    ..Default::default()
                },
                follow: true,
            },
            r#"{"cmd":"journal","container":"h-alice","lines":5,"follow":true}"#,
        ),
        (
            HostRequest::Signal {
                name: id("alice"),
                signal: Signal::Term,
            },
            r#"{"cmd":"signal","name":"alice","signal":"TERM"}"#,
        ),
        (
            HostRequest::Interrupt {
                name: id("alice"),
                note: Some("stop".into()),
            },
            r#"{"cmd":"interrupt","name":"alice","note":"stop"}"#,
        ),
        (
            HostRequest::Turns {
                name: id("alice"),
                limit: Some(5),
                follow: false,
            },
            r#"{"cmd":"turns","name":"alice","limit":5}"#,
        ),
        (
            HostRequest::Turns {
                name: id("alice"),
                limit: None,
                follow: true,
            },
            r#"{"cmd":"turns","name":"alice","follow":true}"#,
        ),
        (
            HostRequest::Usage {
                since_secs: Some(86400),
                by: super::turns::UsageBy::Subtree,
            },
            r#"{"cmd":"usage","since_secs":86400,"by":"subtree"}"#,
        ),
        (HostRequest::Budgets, r#"{"cmd":"budgets"}"#),
        (
            HostRequest::SetBudget {
                name: Some(id("alice")),
                hive: false,
                amount: "20usd/day".parse().unwrap(),
            },
            r#"{"cmd":"set_budget","name":"alice","amount":"20usd/day"}"#,
        ),
        (
            HostRequest::UnsetBudget {
                name: None,
                hive: true,
            },
            r#"{"cmd":"unset_budget","hive":true}"#,
        ),
        (
            HostRequest::EgressLog {
                name: id("alice"),
                limit: Some(500),
            },
            r#"{"cmd":"egress_log","name":"alice","limit":500}"#,
        ),
        (
            HostRequest::InspectAgent { name: id("alice") },
            r#"{"cmd":"inspect_agent","name":"alice"}"#,
        ),
        (HostRequest::Version, r#"{"cmd":"version"}"#),
        (
            HostRequest::ModelLog {
                name: id("alice"),
                limit: Some(20),
            },
            r#"{"cmd":"model_log","name":"alice","limit":20}"#,
        ),
        (HostRequest::Images, r#"{"cmd":"images"}"#),
        (
            HostRequest::PruneImages { dry_run: true },
            r#"{"cmd":"prune_images","dry_run":true}"#,
        ),
    ]
}

#[test]
fn every_request_serializes_to_its_golden_line_and_parses_back() {
    for (request, line) in requests() {
        assert_eq!(serde_json::to_string(&request).unwrap(), line);
        assert_eq!(serde_json::from_str::<HostRequest>(line).unwrap(), request);
    }
}

#[test]
fn every_request_is_described_by_its_cmd() {
    for (request, line) in requests() {
        let value: serde_json::Value = serde_json::from_str(line).unwrap();
        assert_eq!(value["cmd"], request.describe().0, "{line}");
    }
}

#[test]
fn every_cmd_in_the_table_has_a_golden_line() {
    let covered: Vec<String> = requests()
        .iter()
        .map(|(_, line)| {
            serde_json::from_str::<serde_json::Value>(line).unwrap()["cmd"].to_string()
        })
        .collect();
    for cmd in HostRequest::COMMANDS {
        assert!(
            covered.contains(&format!("\"{cmd}\"")),
            "{cmd} has no golden line"
        );
    }
}

#[test]
fn optional_request_fields_may_be_omitted_and_unknown_keys_are_ignored() {
    let r: HostRequest = serde_json::from_str(r#"{"cmd":"destroy","name":"a","x":1}"#).unwrap();
    assert_eq!(
        r,
        HostRequest::Destroy {
            name: id("a"),
            purge: false
        }
    );
    let r: HostRequest = serde_json::from_str(r#"{"cmd":"stop","scope":{}}"#).unwrap();
    assert_eq!(
        r,
        HostRequest::Stop {
            scope: LifecycleScope::default(),
            graceful: false,
            deadline_secs: None,
        }
    );
    assert!(LifecycleScope::default().selects_all_agents());
    let names_only: LifecycleScope = serde_json::from_str(r#"{"agent_names":[]}"#).unwrap();
    assert!(names_only.selects_nothing());
    let flags_only: LifecycleScope = serde_json::from_str(r#"{"forge":true}"#).unwrap();
    assert!(
        !flags_only.selects_all_agents(),
        "a service flag alone selects no agent"
    );
}

#[test]
fn a_bad_name_in_a_request_is_refused_at_parse_time() {
    for line in [
        r#"{"cmd":"kill","name":"../x"}"#,
        r#"{"cmd":"kill","name":"Alice"}"#,
        r#"{"cmd":"start","scope":{"agent_names":["a/b"]}}"#,
        r#"{"cmd":"set_parent","child":"a","new_parent":""}"#,
    ] {
        assert!(serde_json::from_str::<HostRequest>(line).is_err(), "{line}");
    }
}

fn row() -> AgentStatusRow {
    AgentStatusRow {
        name: id("alice"),
        running: true,
        failed: false,
        needs_update: false,
        needs_login: false,
        deployed_sha: Some("0123456789ab".into()),
        pending_reminders: 2,
        paused: false,
        parent: Some(id("ruth")),
        active_model: None,
        status_text: Some("triaging".into()),
        status_set_at: Some("2026-11-30T12:00:00Z".into()),
        url: Some("https://hive.example/agent/alice/".into()),
        failure: None,
        session_state: None,
        session_message: None,
        session_since: None,
        crashed: false,
        running_since: None,
        budget: None,
        spent_today_micro_usd: None,
        transition: None,
    }
}

#[test]
fn every_response_shape_has_its_golden_line() {
    let approval = Approval {
        id: 4,
        agent: id("alice"),
        kind: ApprovalKind::Spawn,
        commit_ref: String::new(),
        fetched_sha: None,
        requested_at: 1_796_040_000,
        status: ApprovalStatus::Failed,
        resolved_at: Some(1_796_040_060),
        note: Some("boom".into()),
        description: None,
    };
    let cases = [
        (HostResponse::success(), r#"{"version":1,"ok":true}"#),
        // The spec's error line, with the additive `code` after `error`.
        (
            HostResponse::error(ErrorCode::UnknownAgent, "nope"),
            r#"{"version":1,"ok":false,"error":"nope","code":"unknown_agent"}"#,
        ),
        (
            HostResponse::agents(vec![id("a"), id("b")]),
            r#"{"version":1,"ok":true,"agents":["a","b"]}"#,
        ),
        // The spec's own example, byte for byte.
        (
            HostResponse::agent_statuses(vec![row()]),
            r#"{"version":1,"ok":true,"agent_statuses":[{"name":"alice","running":true,"failed":false,"needs_update":false,"needs_login":false,"deployed_sha":"0123456789ab","pending_reminders":2,"paused":false,"parent":"ruth","status_text":"triaging","status_set_at":"2026-11-30T12:00:00Z","url":"https://hive.example/agent/alice/"}]}"#,
        ),
        (
            HostResponse::urls(HiveUrls {
                domain: Some("hive.example".into()),
                home: Some("https://hive.example/".into()),
                forge: None,
                matrix: Some("https://m.example/".into()),
            }),
            r#"{"version":1,"ok":true,"urls":{"domain":"hive.example","home":"https://hive.example/","matrix":"https://m.example/"}}"#,
        ),
        (
            HostResponse::urls(HiveUrls::default()),
            r#"{"version":1,"ok":true,"urls":{}}"#,
        ),
        (
            HostResponse::entries(vec![crate::systemd::journal::JournalEntry {
                time_us: Some(1_796_040_000_000_000),
                priority: Some(super::agenda::JournalPriority::Info),
                unit: Some("hello.service".into()),
                message: "hi".into(),
                ..Default::default()
            }]),
            r#"{"version":1,"ok":true,"entries":[{"time_us":1796040000000000,"priority":"info","unit":"hello.service","message":"hi"}]}"#,
        ),
        (
            HostResponse::budgets(vec![super::spend::BudgetRow {
                scope: super::spend::SpendScope::Hive,
                amount: "5usd/5h".parse().unwrap(),
                source: super::spend::SpendSource::Config,
                spent: 5_000_000,
                since: 1_796_022_000,
                reached: true,
            }]),
            r#"{"version":1,"ok":true,"budgets":[{"scope":"hive","amount":"5usd/5h","source":"config","spent":5000000,"since":1796022000,"reached":true}]}"#,
        ),
        (
            HostResponse::egress_log(vec![super::egress_audit::EgressLogRow {
                id: 9,
                at_ms: 1_796_040_000_250,
                verdict: super::egress_audit::Verdict::Allowed,
                count: 1,
                target: Some("pypi.org:443".into()),
                address: Some("151.101.0.223:443".into()),
                reason: None,
                up: 517,
                down: 4096,
                ms: 812,
            }]),
            r#"{"version":1,"ok":true,"egress_log":[{"id":9,"at_ms":1796040000250,"verdict":"allowed","count":1,"target":"pypi.org:443","address":"151.101.0.223:443","up":517,"down":4096,"ms":812}]}"#,
        ),
        (
            HostResponse::approvals(vec![approval]),
            r#"{"version":1,"ok":true,"approvals":[{"id":4,"agent":"alice","kind":"spawn","commit_ref":"","requested_at":1796040000,"status":"failed","resolved_at":1796040060,"note":"boom"}]}"#,
        ),
    ];
    for (response, line) in cases {
        assert_eq!(response.to_line(), line);
        assert_eq!(
            serde_json::from_str::<HostResponse>(line).unwrap(),
            response
        );
    }
}

#[test]
fn a_client_ignores_unknown_response_keys() {
    let line = r#"{"version":2,"ok":true,"agents":["a"],"new_thing":{"x":[1]}}"#;
    let r: HostResponse = serde_json::from_str(line).unwrap();
    assert_eq!((r.version, r.agents), (2, Some(vec![id("a")])));
}

#[test]
fn approval_kinds_and_statuses_use_their_snake_case_names() {
    for k in ApprovalKind::ALL {
        assert_eq!(
            serde_json::to_string(k).unwrap(),
            format!("\"{}\"", k.as_str())
        );
    }
    for s in ApprovalStatus::ALL {
        assert_eq!(
            serde_json::to_string(s).unwrap(),
            format!("\"{}\"", s.as_str())
        );
    }
}

/// Every variant name serde knows for a `cmd`-tagged enum, read from its
/// "unknown variant" error (which lists them all): derived from the enum
/// itself, so no variant can be left out.
pub(crate) fn serde_commands<T: serde::de::DeserializeOwned + std::fmt::Debug>() -> Vec<String> {
    let err = serde_json::from_str::<T>(r#"{"cmd":"\u0001"}"#).unwrap_err();
    let text = err.to_string();
    let list = text
        .split("expected one of ")
        .nth(1)
        .unwrap_or_else(|| panic!("no variant list in {text:?}"));
    list.split(',')
        .map(|v| {
            v.trim()
                .trim_start_matches('`')
                .split('`')
                .next()
                .unwrap()
                .to_owned()
        })
        .collect()
}

/// The enum's command names and the table's, each sorted.
fn enum_and_table<T: serde::de::DeserializeOwned + std::fmt::Debug>(
    table: &[&str],
) -> (Vec<String>, Vec<String>) {
    let mut from_enum = serde_commands::<T>();
    let mut table: Vec<String> = table.iter().map(|c| (*c).to_owned()).collect();
    from_enum.sort();
    table.sort();
    (from_enum, table)
}

#[test]
fn every_host_request_variant_has_its_command_name_in_the_table() {
    // A variant missing from COMMANDS would compile and pass its own tests
    // but be refused at runtime as an unknown cmd.
    let (from_enum, table) = enum_and_table::<HostRequest>(HostRequest::COMMANDS);
    assert_eq!(from_enum, table);
}

#[test]
fn every_agent_request_variant_has_its_command_name_in_the_table() {
    use crate::wire::agent::Request;
    let (from_enum, table) = enum_and_table::<Request>(Request::COMMANDS);
    assert_eq!(from_enum, table);
}

#[test]
fn the_roster_line_around_pre_serialized_rows_is_byte_equal_to_the_serde_form() {
    for rows in [vec![], vec![row()], vec![row(), row()]] {
        let json = serde_json::to_string(&rows).unwrap();
        assert_eq!(
            HostResponse::agent_statuses_line(&json),
            HostResponse::agent_statuses(rows).to_line()
        );
    }
}
