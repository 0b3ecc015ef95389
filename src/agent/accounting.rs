//! What a turn cost and did, read from Claude Code's `stream-json`: the
//! final `result` event's `usage`, `total_cost_usd`, `num_turns` and
//! durations, taken as reported (never summed from the `assistant` events,
//! whose usage repeats per content block; never priced here), and each tool
//! call from its `tool_use` block to its `tool_result` (name, ok, how long;
//! not its input). The turn loop sends it as the turn's `report_turn`.

use std::collections::HashMap;
use std::time::Instant;

use serde_json::Value;

use crate::wire::turns::{ToolCall, TurnUsage};

/// Calls past this many are not recorded (the daemon's cap too).
const MAX_TOOLS: usize = 500;
/// The longest tool name kept.
const MAX_TOOL_NAME: usize = 128;

/// One turn's account, built line by line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnAccount {
    pub usage: Option<TurnUsage>,
    pub cost_micro_usd: Option<u64>,
    pub num_turns: Option<u32>,
    pub duration_ms: Option<u64>,
    pub duration_api_ms: Option<u64>,
    /// Finished tool calls, in the order they finished.
    pub tools: Vec<ToolCall>,
    /// Tool calls started and not finished: id -> (name, start).
    open: HashMap<String, (String, Instant)>,
}

impl TurnAccount {
    /// Take in one parsed stream event.
    pub fn observe(&mut self, event: &Value) {
        match event["type"].as_str() {
            Some("assistant") => self.tool_uses(&event["message"]["content"]),
            Some("user") => self.tool_results(&event["message"]["content"]),
            Some("result") => self.result(event),
            _ => {}
        }
    }

    /// Calls still open at the end (a killed turn) count as failed.
    pub fn finish(&mut self) {
        let now = Instant::now();
        let mut open: Vec<_> = self.open.drain().collect();
        open.sort_by_key(|(_, (_, start))| *start);
        for (_, (name, start)) in open {
            self.push(name, false, now.duration_since(start).as_millis());
        }
    }

    fn tool_uses(&mut self, content: &Value) {
        for block in content.as_array().into_iter().flatten() {
            if block["type"] != "tool_use" || self.open.len() + self.tools.len() >= MAX_TOOLS {
                continue;
            }
            let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
                continue;
            };
            let name: String = name
                .chars()
                .filter(|c| !c.is_control())
                .take(MAX_TOOL_NAME)
                .collect();
            if !name.is_empty() {
                self.open.insert(id.to_owned(), (name, Instant::now()));
            }
        }
    }

    fn tool_results(&mut self, content: &Value) {
        for block in content.as_array().into_iter().flatten() {
            if block["type"] != "tool_result" {
                continue;
            }
            let Some(id) = block["tool_use_id"].as_str() else {
                continue;
            };
            if let Some((name, start)) = self.open.remove(id) {
                let ok = block["is_error"].as_bool() != Some(true);
                self.push(name, ok, start.elapsed().as_millis());
            }
        }
    }

    fn push(&mut self, name: String, ok: bool, millis: u128) {
        let duration_ms = u64::try_from(millis).unwrap_or(u64::MAX);
        self.tools.push(ToolCall {
            name,
            ok,
            duration_ms,
        });
    }

    fn result(&mut self, event: &Value) {
        if event["usage"].is_object() {
            self.usage = serde_json::from_value(event["usage"].clone()).ok();
        }
        self.cost_micro_usd = event["total_cost_usd"]
            .as_f64()
            .filter(|c| c.is_finite() && *c >= 0.0)
            // Representation, not pricing: dollars as Claude Code reported
            // them, in integer millionths.
            .map(|c| (c * 1e6).round() as u64);
        self.num_turns = event["num_turns"]
            .as_u64()
            .and_then(|n| u32::try_from(n).ok());
        self.duration_ms = event["duration_ms"].as_u64();
        self.duration_api_ms = event["duration_api_ms"].as_u64();
    }
}

#[cfg(test)]
#[path = "accounting_tests.rs"]
mod tests;
