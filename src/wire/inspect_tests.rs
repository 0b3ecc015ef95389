use super::*;
use crate::wire::host::HostResponse;
use crate::wire::ident::Ident;

fn id(n: &str) -> Ident {
    Ident::new(n).unwrap()
}

#[test]
fn the_inspect_answer_has_its_golden_line_and_omits_what_is_absent() {
    let facts = AgentInspect {
        name: id("alice"),
        status: None,
        config: InspectConfig {
            deployed_sha: Some("0123".into()),
            model: None,
        },
        limits: InspectLimits {
            memory_max: Some("8G".into()),
            cpu_quota: None,
            tasks_max: Some(4096),
            inotify_instances: 128,
            inotify_watches: 65_536,
            disk_quota_bytes: None,
            disk_inodes: None,
            disk_quota_required: false,
        },
        egress: vec![EgressEntry {
            pattern: EgressPattern::new("crates.io:443").unwrap(),
            source: EgressSource::Grant,
            expires_at: Some("2026-12-07T18:00:00Z".into()),
        }],
        capabilities: vec![],
        tool_groups: vec![ToolGroup::Messaging],
        inbox: InboxDepth {
            waiting: 3,
            in_flight: 1,
        },
        pending_approvals: 2,
        questions_asked: 0,
        questions_to_answer: 1,
        turns: vec![InspectTurn {
            id: 7,
            started_at: "2026-12-07T15:00:00Z".into(),
            ended_at: "2026-12-07T15:00:30Z".into(),
            outcome: super::super::turns::TurnOutcome::Ok,
            model: None,
            cost_micro_usd: Some(250_000),
        }],
    };
    let line = r#"{"version":1,"ok":true,"inspect":{"name":"alice","config":{"deployed_sha":"0123"},"limits":{"memory_max":"8G","tasks_max":4096,"inotify_instances":128,"inotify_watches":65536,"disk_quota_required":false},"egress":[{"pattern":"crates.io:443","source":"grant","expires_at":"2026-12-07T18:00:00Z"}],"capabilities":[],"tool_groups":["messaging"],"inbox":{"waiting":3,"in_flight":1},"pending_approvals":2,"questions_asked":0,"questions_to_answer":1,"turns":[{"id":7,"started_at":"2026-12-07T15:00:00Z","ended_at":"2026-12-07T15:00:30Z","outcome":"ok","cost_micro_usd":250000}]}}"#;
    let response = HostResponse::inspect(facts);
    assert_eq!(response.to_line(), line);
    assert_eq!(
        serde_json::from_str::<HostResponse>(line).unwrap(),
        response
    );
}
