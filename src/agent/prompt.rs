//! The prompt of a turn, rendered from the messages `recv` handed out.
//!
//! Each message gets a header line with its sender, broker id and thread
//! (`in reply to`), then its body verbatim. Bodies from `system` are the
//! daemon's `HelperEvent`s: they are rendered as "hive event: <name>" with
//! one `key: value` line per field instead of raw JSON. A redelivered
//! message (popped before, never acked: the harness crashed mid-turn) says
//! it may already be handled, so the model can check before acting twice.

use serde_json::Value;

use crate::wire::agent::DeliveredMessage;
use crate::wire::events::{HelperEvent, SYSTEM_SENDER};

/// What the model is told before the messages of a turn.
pub const TURN_PREAMBLE: &str = "New messages for you in the hive. Act on them; reply with the \
mcp__hyperhive__send tool (`to`: the sender's name, `operator` for the human, `<parent>` for \
your parent agent). Senders: `operator` is the human, `system` is the hive itself, `reminder` \
is a reminder you set.";

/// The whole prompt of a turn.
pub fn turn_prompt(messages: &[DeliveredMessage]) -> String {
    format!("{TURN_PREAMBLE}\n\n{}", render(messages))
}

/// The messages, oldest first, one block each.
pub fn render(messages: &[DeliveredMessage]) -> String {
    messages
        .iter()
        .map(render_one)
        .collect::<Vec<_>>()
        .join("\n\n")
}

fn render_one(m: &DeliveredMessage) -> String {
    let mut header = format!("--- message {} from {}", m.id, m.from);
    if let Some(parent) = m.in_reply_to {
        header.push_str(&format!(" (in reply to {parent})"));
    }
    if m.redelivered {
        header.push_str(" [redelivered: an earlier turn may already have handled it]");
    }
    let body = if m.from == SYSTEM_SENDER {
        event_text(&m.body).unwrap_or_else(|| m.body.clone())
    } else {
        m.body.clone()
    };
    format!("{header}\n{body}")
}

/// A `HelperEvent` body as readable lines; `None` when it is not one.
fn event_text(body: &str) -> Option<String> {
    serde_json::from_str::<HelperEvent>(body).ok()?;
    let Value::Object(mut fields) = serde_json::from_str::<Value>(body).ok()? else {
        return None;
    };
    let name = fields.remove("event")?;
    let mut out = format!("hive event: {}", name.as_str().unwrap_or_default());
    for (key, value) in fields {
        let value = match value {
            Value::String(s) => s,
            other => other.to_string(),
        };
        out.push_str(&format!("\n  {key}: {value}"));
    }
    Some(out)
}

#[cfg(test)]
#[path = "prompt_tests.rs"]
mod tests;
