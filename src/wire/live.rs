//! The live turn: what `hive-agent run` reports while a turn runs (agent
//! socket, `turn_progress`), the current turn the daemon keeps of it in
//! memory, and the changes host.sock's `turns` with `follow` streams.
//!
//! Everything here is bounded: the harness cuts each field to the caps
//! below before it sends, and the daemon refuses a progress event past
//! them (`hive::arguments::check_turn_progress`) and keeps at most
//! [`MAX_LIVE_TOOLS`] tool calls per turn (later ones are counted, not
//! kept). Never a tool's input: its name only.

use serde::{Deserialize, Serialize};

use super::ident::Ident;
use super::turns::{TurnRow, TurnUsage};

/// The most prompt messages a `started` event lists (the rest counted).
pub const MAX_PROMPT_MESSAGES: usize = 20;
/// The longest sender name a `started` event carries, in bytes.
pub const MAX_SENDER: usize = 64;
/// The longest first line of a message a `started` event carries, in bytes.
pub const MAX_FIRST_LINE: usize = 200;
/// The longest tool name, in bytes (the turn journal's cap too).
pub const MAX_LIVE_TOOL_NAME: usize = 128;
/// The longest reply text kept, in bytes.
pub const MAX_REPLY: usize = 2000;
/// The most tool calls the daemon keeps of one live turn.
pub const MAX_LIVE_TOOLS: usize = 100;

/// One thing that happened in a running turn, tagged `event`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "event", rename_all = "snake_case")]
pub enum TurnProgress {
    /// A turn began with these messages (who sent each, its first line).
    Started {
        /// Unix milliseconds.
        started_at_ms: i64,
        #[serde(default)]
        messages: Vec<PromptLine>,
        /// How many messages the turn took (`messages` lists at most
        /// [`MAX_PROMPT_MESSAGES`]).
        #[serde(default)]
        total_messages: u32,
    },
    /// Claude called a tool; `call` numbers the turn's calls from 0.
    ToolStarted { call: u32, name: String },
    /// Tool call `call` returned.
    ToolEnded {
        call: u32,
        ok: bool,
        duration_ms: u64,
    },
    /// Claude's latest text (its reply so far), cut to [`MAX_REPLY`].
    Reply { text: String },
    /// Tokens so far (each assistant message counted once, by its id) and,
    /// once the `result` event came (`final`), its usage and cost.
    Usage {
        usage: TurnUsage,
        #[serde(default, skip_serializing_if = "Option::is_none")]
        cost_micro_usd: Option<u64>,
        #[serde(default, rename = "final", skip_serializing_if = "super::is_false")]
        is_final: bool,
    },
}

/// One message of a turn's prompt, as the live view shows it.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct PromptLine {
    pub from: String,
    /// The message's first non-empty line, cut to [`MAX_FIRST_LINE`].
    pub first_line: String,
}

/// One tool call of a live turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveTool {
    pub call: u32,
    pub name: String,
    /// `None` while it runs.
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub ok: Option<bool>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub duration_ms: Option<u64>,
}

/// An agent's turn in progress, as the daemon holds it (memory only).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveTurn {
    /// Bumped by every change of this agent's live turn (across turns), so
    /// a reader that took this snapshot skips the changes it holds.
    pub seq: u64,
    /// Unix milliseconds; the daemon's clock when no `started` came.
    pub started_at_ms: i64,
    #[serde(default)]
    pub messages: Vec<PromptLine>,
    #[serde(default)]
    pub total_messages: u32,
    #[serde(default)]
    pub tools: Vec<LiveTool>,
    /// Calls past [`MAX_LIVE_TOOLS`]: counted, not kept.
    #[serde(default)]
    pub tools_left_out: u32,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub reply: Option<String>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub usage: Option<TurnUsage>,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cost_micro_usd: Option<u64>,
    /// Events the harness dropped (its queue was full or the daemon slow).
    #[serde(default)]
    pub dropped: u64,
}

/// One change of an agent's live turn: a progress event, or its end (the
/// turn's journal row; none when it ended unreported, e.g. its harness
/// started again).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct LiveChange {
    pub agent: Ident,
    pub seq: u64,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub progress: Option<TurnProgress>,
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub ended: bool,
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub turn: Option<TurnRow>,
}

/// `text` cut to at most `max` bytes at a character boundary.
pub fn cut(text: &str, max: usize) -> &str {
    let mut end = text.len().min(max);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    &text[..end]
}
