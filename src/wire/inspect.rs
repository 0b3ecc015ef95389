//! host.sock `inspect_agent`: one agent's facts in one answer (`hivectl
//! inspect NAME`, as `podman inspect` / `incus info`).
//!
//! A document of its own rather than the roster row with more keys: the
//! roster is sent on every change to every watcher, and these facts
//! (limits, egress sources, inbox depth, last turns) are read once, on
//! request. Every time in it is RFC 3339 UTC (the roster row's already
//! are), so a script reads one time format; money is micro-dollars as in
//! the rest of the protocol. The shape is documented in
//! `docs/src/hivectl.md`; keys are only ever added.

use serde::{Deserialize, Serialize};

use super::agenda::{Capability, ToolGroup};
use super::egress::EgressPattern;
use super::ident::Ident;
use super::roster::AgentStatusRow;
use super::turns::TurnOutcome;

/// How many turns `inspect_agent` answers.
pub const INSPECT_TURNS: u32 = 5;

/// The answer of `inspect_agent`: the roster row, deployed config,
/// limits, effective egress with each entry's source, grants, inbox
/// depth, what waits on the operator about the agent and its newest turns.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct AgentInspect {
    pub name: Ident,
    /// The agent's roster row (state, session state, budget and today's
    /// spend), as `agent_status` has it; omitted when the roster has no
    /// row for it yet.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub status: Option<AgentStatusRow>,
    /// Its deployed config.
    pub config: InspectConfig,
    /// The limits its container is started with.
    pub limits: InspectLimits,
    /// Every `host[:port]` it may reach now, with where each comes from.
    pub egress: Vec<EgressEntry>,
    pub capabilities: Vec<Capability>,
    pub tool_groups: Vec<ToolGroup>,
    pub inbox: InboxDepth,
    /// Approvals about this agent waiting for the operator.
    pub pending_approvals: u64,
    /// Open questions this agent asked (of the operator or an agent).
    pub questions_asked: u64,
    /// Open questions asked of this agent.
    pub questions_to_answer: u64,
    /// Its newest turns from the turn journal, newest first.
    pub turns: Vec<InspectTurn>,
}

/// What of the agent's config is deployed.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InspectConfig {
    /// The applied repo's commit it runs; omitted before its first deploy.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub deployed_sha: Option<String>,
    /// The model its deployed `agent.json` sets; omitted when it sets
    /// none (Claude Code's default). The model a turn last reported is
    /// the roster's `active_model`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
}

/// The limits in force for the agent's container: its `agent.json`'s
/// where it sets them, the hive's `agent_*` keys otherwise. An omitted
/// key is no limit.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InspectLimits {
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks_max: Option<u64>,
    pub inotify_instances: u32,
    pub inotify_watches: u32,
    /// Bytes its state directory may hold (`agent_disk_quota`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_quota_bytes: Option<u64>,
    /// Inodes under the same quota; only with `disk_quota_bytes`.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub disk_inodes: Option<u64>,
    /// `agent_disk_quota_required`: a start is refused when the file
    /// system cannot hold the agent to its quota.
    pub disk_quota_required: bool,
}

/// Where an egress entry comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum EgressSource {
    /// The hive's `egress_allow`, which every agent has.
    Hive,
    /// The agent's deployed (reviewed) `agent.json`.
    AgentJson,
    /// An operator's grant (or an approved `request_egress`).
    Grant,
}

impl EgressSource {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Hive => "hive",
            Self::AgentJson => "agent_json",
            Self::Grant => "grant",
        }
    }
}

/// One entry of the effective egress allow-list.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct EgressEntry {
    pub pattern: EgressPattern,
    pub source: EgressSource,
    /// RFC 3339 UTC: when a time-boxed grant ends; omitted otherwise.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub expires_at: Option<String>,
}

/// How many messages wait for the agent and how many its turn in progress
/// holds (taken by `recv`, not yet acknowledged).
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct InboxDepth {
    pub waiting: u64,
    pub in_flight: u64,
}

/// One turn, in short.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct InspectTurn {
    pub id: i64,
    /// RFC 3339 UTC.
    pub started_at: String,
    /// RFC 3339 UTC.
    pub ended_at: String,
    pub outcome: TurnOutcome,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<u64>,
}

#[cfg(test)]
#[path = "inspect_tests.rs"]
mod tests;
