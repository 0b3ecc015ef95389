//! The turn journal's shapes: what `hive-agent run` reports of each turn
//! (agent socket, `report_turn`), the rows `turns` answers and the sums
//! `usage` answers (host.sock).
//!
//! Cost travels as integer micro-dollars (`cost_micro_usd`): Claude Code's
//! `total_cost_usd` times 10^6, rounded once in the harness, so sums are
//! exact and every type here stays `Eq`. A report's tokens and cost are
//! the `result` event's, as reported, and are only ever shown as such:
//! what was spent is the meter's (issue 46, step 2), carried beside them
//! as `metered` (additive fields: an older daemon's answer reads as none).

use serde::{Deserialize, Serialize};

use super::ident::Ident;
use super::model_log::MeteredUsage;

/// How a turn ended.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum TurnOutcome {
    /// The command exited 0 and its stream reported no error; the
    /// messages were acknowledged.
    Ok,
    /// The command failed (the API's error in `error`); the messages go
    /// back to the inbox.
    Failed,
    /// The harness ended it (its deadline, or the agent stopping).
    Killed,
    /// The operator ended it (`interrupt`); its messages count as handled.
    Interrupted,
    /// Not a harness turn: the new assistant messages of an interactive
    /// session's transcript (a Claude started by hand in the container),
    /// read by the daemon when one of its hooks arrived. Tokens only: a
    /// transcript carries no cost.
    Interactive,
}

impl TurnOutcome {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Ok => "ok",
            Self::Failed => "failed",
            Self::Killed => "killed",
            Self::Interrupted => "interrupted",
            Self::Interactive => "interactive",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [
            Self::Ok,
            Self::Failed,
            Self::Killed,
            Self::Interrupted,
            Self::Interactive,
        ]
        .into_iter()
        .find(|o| o.as_str() == s)
    }
}

/// The `result` event's `usage`: tokens as Claude Code counted them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnUsage {
    #[serde(default)]
    pub input_tokens: u64,
    #[serde(default)]
    pub output_tokens: u64,
    #[serde(default)]
    pub cache_read_input_tokens: u64,
    #[serde(default)]
    pub cache_creation_input_tokens: u64,
}

impl TurnUsage {
    /// Every token of the turn, cached or not.
    pub fn total(&self) -> u64 {
        self.input_tokens
            .saturating_add(self.output_tokens)
            .saturating_add(self.cache_read_input_tokens)
            .saturating_add(self.cache_creation_input_tokens)
    }

    /// Each count of `self` and `other` put together by `f`.
    #[must_use]
    pub fn zip_with(&self, other: &Self, f: impl Fn(u64, u64) -> u64) -> Self {
        Self {
            input_tokens: f(self.input_tokens, other.input_tokens),
            output_tokens: f(self.output_tokens, other.output_tokens),
            cache_read_input_tokens: f(self.cache_read_input_tokens, other.cache_read_input_tokens),
            cache_creation_input_tokens: f(
                self.cache_creation_input_tokens,
                other.cache_creation_input_tokens,
            ),
        }
    }
}

/// One tool call of a turn: its name, whether it succeeded, how long it
/// took (from its `tool_use` to its `tool_result`). Not its input.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ToolCall {
    pub name: String,
    pub ok: bool,
    pub duration_ms: u64,
}

/// One turn, as the harness saw it. Bounded: see `hive::turns` for the
/// caps the daemon enforces.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnReport {
    /// Unix milliseconds.
    pub started_at_ms: i64,
    pub ended_at_ms: i64,
    /// The broker ids of the messages the turn took.
    #[serde(default)]
    pub message_ids: Vec<i64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub session_id: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    pub outcome: TurnOutcome,
    /// Why it failed or was killed.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub error: Option<String>,
    #[serde(default)]
    pub tools: Vec<ToolCall>,
    /// Absent when the stream had no `result` event (a killed turn).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TurnUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub num_turns: Option<u32>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_api_ms: Option<u64>,
}

/// A stored turn, as `turns` answers it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct TurnRow {
    pub id: i64,
    pub agent: Ident,
    #[serde(flatten)]
    pub report: TurnReport,
    /// The agent's requests the meter still keeps from the turn's start
    /// to its end (a nested or hand-started Claude of the agent's running
    /// then counts here too); absent where not read (a live turn's end).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub metered: Option<MeteredUsage>,
}

/// What `usage` groups its sums by.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum UsageBy {
    #[default]
    Agent,
    /// An agent with every agent under it (the topology now).
    Subtree,
    Model,
    /// The UTC day the turn ended.
    Day,
}

impl UsageBy {
    pub const ALL: [Self; 4] = [Self::Agent, Self::Subtree, Self::Model, Self::Day];

    pub fn as_str(self) -> &'static str {
        match self {
            Self::Agent => "agent",
            Self::Subtree => "subtree",
            Self::Model => "model",
            Self::Day => "day",
        }
    }
}

/// One group's sums: what its metered requests spent (`metered`), and
/// what its turns reported (`turns`, the token counts, `cost_micro_usd`:
/// the reported figures, never the spend).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct UsageRow {
    /// The agent, model or day (`YYYY-MM-DD`); `-` for no model.
    pub key: String,
    pub turns: u64,
    #[serde(flatten)]
    pub usage: TurnUsage,
    pub cost_micro_usd: u64,
    #[serde(default)]
    pub metered: MeteredUsage,
}

impl UsageRow {
    /// Add `other`'s sums to this row's.
    pub fn add(&mut self, other: &UsageRow) {
        self.turns += other.turns;
        let (a, b) = (&mut self.usage, &other.usage);
        a.input_tokens += b.input_tokens;
        a.output_tokens += b.output_tokens;
        a.cache_read_input_tokens += b.cache_read_input_tokens;
        a.cache_creation_input_tokens += b.cache_creation_input_tokens;
        self.cost_micro_usd += other.cost_micro_usd;
        self.metered.add(&other.metered);
    }
}
