use super::*;
use crate::testing::{id, status_row};
use crate::wire::agenda::{Capability, ToolGroup};
use crate::wire::egress::EgressPattern;
use crate::wire::host::AgentStatusRow;
use crate::wire::inspect::{
    EgressEntry, EgressSource, InboxDepth, InspectConfig, InspectLimits, InspectTurn,
};
use crate::wire::turns::TurnOutcome;

fn facts() -> AgentInspect {
    AgentInspect {
        name: id("alice"),
        status: Some(AgentStatusRow {
            running: true,
            parent: Some(id("ruth")),
            status_text: Some("triaging \u{1b}[31mred".into()),
            spent_today_micro_usd: Some(2_500_000),
            ..status_row("alice")
        }),
        config: InspectConfig {
            deployed_sha: Some("0123456789ab".into()),
            model: Some("claude-x".into()),
        },
        limits: InspectLimits {
            memory_max: Some("8G".into()),
            cpu_quota: None,
            tasks_max: Some(512),
            inotify_instances: 128,
            inotify_watches: 65_536,
            disk_quota_bytes: Some(10 << 30),
            disk_inodes: Some(1_000_000),
            disk_quota_required: false,
        },
        egress: vec![
            EgressEntry {
                pattern: EgressPattern::new("api.anthropic.com:443").unwrap(),
                source: EgressSource::Hive,
                expires_at: None,
            },
            EgressEntry {
                pattern: EgressPattern::new("crates.io:443").unwrap(),
                source: EgressSource::Grant,
                expires_at: Some("2026-12-07T18:00:00Z".into()),
            },
        ],
        capabilities: vec![Capability::ReadHostJournal],
        tool_groups: vec![ToolGroup::Messaging, ToolGroup::Inbox],
        inbox: InboxDepth {
            waiting: 3,
            in_flight: 1,
        },
        pending_approvals: 2,
        questions_asked: 1,
        questions_to_answer: 0,
        turns: vec![InspectTurn {
            id: 7,
            started_at: "2026-12-07T15:00:00Z".into(),
            ended_at: "2026-12-07T15:00:30Z".into(),
            outcome: TurnOutcome::Ok,
            model: Some("claude-x".into()),
            cost_micro_usd: Some(250_000),
        }],
    }
}

#[test]
fn inspect_prints_aligned_sections_with_each_entrys_source_and_the_last_turns() {
    assert_eq!(
        inspect(&facts()),
        "\
agent:
  name:          alice
  state:         running
  session:       -
  parent:        ruth
  status:        triaging  [31mred
  needs update:  no

config:
  deployed sha:  0123456789ab
  model:         claude-x

limits:
  memory max:           8G
  cpu quota:            none
  tasks max:            512
  inotify instances:    128
  inotify watches:      65536
  disk quota:           10G
  disk inodes:          1000000
  disk quota required:  no

grants:
  capabilities:  read_host_journal
  tool groups:   messaging, inbox

spend:
  spent today:  $2.50
  budget:       not reached

waiting:
  inbox:                3
  in flight:            1
  approvals:            2
  questions asked:      1
  questions to answer:  0

egress:
  api.anthropic.com:443  hive
  crates.io:443          grant  until 2026-12-07T18:00:00Z

turns:
  7  2026-12-07T15:00:30Z  ok  claude-x  $0.25
"
    );
}

#[test]
fn inspect_of_an_agent_without_turns_or_a_roster_row_says_so() {
    let facts = AgentInspect {
        status: None,
        turns: vec![],
        ..facts()
    };
    let text = inspect(&facts);
    assert!(text.starts_with("agent:\n  name:  alice\n\n"), "{text}");
    assert!(text.ends_with("turns:\n  none\n"), "{text}");
}
