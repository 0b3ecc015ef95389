//! `hive-agent demo-model`: a scripted stand-in for Claude Code, for the
//! demo hive (`hive-c0re serve --driver fake --demo-agents`), where there
//! is no container, no model and no key.
//!
//! It is not a model and says so (its model is `demo-model`). Run as a
//! turn's command (`claude_command`), it does what a turn of `claude -p
//! --output-format stream-json` does that the hive can see: it reads the
//! prompt on stdin, answers each sender of the batch with one `send` through
//! the agent socket (the hive tool Claude would call, so the reply is a real
//! message in a real inbox), and prints the stream-json events Claude Code
//! prints — `system`/`init`, an `assistant` event with a text and the tool
//! call, its `tool_result`, the closing text and a `result` with usage and
//! a cost — paced over about two seconds so the live turn view
//! (`hivectl turns NAME -f`, the agent page) has something to show. Its
//! token counts are the prompt's and the reply's lengths in bytes over
//! four and its cost those at a demo price: made up, shown as reported.
//!
//! It reads the batch the way the model is told to: only lines carrying the
//! batch's boundary are framing ([`super::prompt::framing`]), so a body
//! that imitates a header is answered as part of its true sender's message.
//! Events from `system` and reminders are acknowledged in the text, not
//! answered.

use std::time::Duration;

use serde_json::{Value, json};

use super::mcp::Hyperhive;
use super::socket::AgentSocket;
use super::tools::Selection;
use crate::wire::events::SYSTEM_SENDER;

/// The model name the demo turns report.
pub const MODEL: &str = "demo-model";
/// The sender of a reminder the agent set (the daemon's agenda).
const REMINDER: &str = "reminder";
/// The pause between the events of a turn.
const STEP: Duration = Duration::from_millis(600);
/// Demo prices, micro-USD per token: input, output.
const PRICE: (u64, u64) = (3, 15);

/// One message of the batch, as its fence says.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Read {
    pub id: i64,
    pub from: String,
    pub body: String,
}

/// The messages of `prompt`: the boundary named in its framing paragraph,
/// then each header line carrying it, its body up to the end line.
pub fn read_batch(prompt: &str) -> Vec<Read> {
    let Some(boundary) = boundary_of(prompt) else {
        return Vec::new();
    };
    let tag = format!(" [boundary {boundary}]");
    let mut out = Vec::new();
    let mut open: Option<(i64, String, Vec<&str>)> = None;
    for line in prompt.lines() {
        let Some(framing) = line.strip_suffix(&tag) else {
            if let Some((_, _, body)) = open.as_mut() {
                body.push(line);
            }
            continue;
        };
        if let Some(header) = framing.strip_prefix("--- message ") {
            let mut words = header.split(' ');
            let id = words.next().and_then(|w| w.parse().ok());
            let from = (words.next() == Some("from"))
                .then(|| words.next())
                .flatten();
            if let (Some(id), Some(from)) = (id, from) {
                open = Some((id, from.to_owned(), Vec::new()));
            }
        } else if framing.starts_with("--- end of message ")
            && let Some((id, from, body)) = open.take()
        {
            let body = body.join("\n");
            out.push(Read { id, from, body });
        }
    }
    out
}

/// The boundary the framing paragraph names (`[boundary B]`).
fn boundary_of(prompt: &str) -> Option<&str> {
    let at = prompt.find("[boundary ")? + "[boundary ".len();
    let rest = &prompt[at..];
    let b = &rest[..rest.find(']')?];
    (!b.is_empty() && b.chars().all(|c| c.is_ascii_hexdigit())).then_some(b)
}

/// The reply to `m`, or `None` for the hive's own senders.
pub fn reply_to(m: &Read) -> Option<Value> {
    if m.from == SYSTEM_SENDER || m.from == REMINDER {
        return None;
    }
    let first = m.body.lines().next().unwrap_or_default();
    let quoted: String = first.chars().take(80).collect();
    Some(json!({
        "to": m.from,
        "body": format!("{MODEL} (a scripted stand-in, not Claude) read your message: \"{quoted}\""),
        "in_reply_to": m.id,
    }))
}

/// Run one turn: `prompt` in, stream-json on stdout, each reply sent on
/// `socket`. Exit status: 0 when every reply was sent.
pub async fn run(socket: AgentSocket, selection: &Selection, prompt: &str) -> bool {
    let session = format!("demo-{}", std::process::id());
    emit(&json!({"type": "system", "subtype": "init", "model": MODEL, "session_id": session}));
    let batch = read_batch(prompt);
    let hive = Hyperhive::new(socket, selection);
    let input = (prompt.len() / 4) as u64;
    let mut output = 0u64;
    let mut ok = true;
    for (n, m) in batch.iter().enumerate() {
        tokio::time::sleep(STEP).await;
        let Some(args) = reply_to(m) else {
            let text = format!("Noted message {} from {}.", m.id, m.from);
            output += (text.len() / 4) as u64;
            emit(&assistant(
                n,
                vec![json!({"type": "text", "text": text})],
                input,
            ));
            continue;
        };
        let text = format!("Answering {}.", m.from);
        let call = format!("tu-{n}");
        let tool_use =
            json!({"type": "tool_use", "id": call, "name": "mcp__hyperhive__send", "input": args});
        output += ((text.len() + args.to_string().len()) / 4) as u64;
        emit(&assistant(
            n,
            vec![json!({"type": "text", "text": text}), tool_use],
            input,
        ));
        tokio::time::sleep(STEP).await;
        let Value::Object(args) = args else { continue };
        let (result, is_error) = hive.call("send", Some(args)).await;
        ok &= !is_error;
        emit(&json!({"type": "user", "message": {"content": [
            {"type": "tool_result", "tool_use_id": call, "is_error": is_error, "content": result}
        ]}}));
    }
    tokio::time::sleep(STEP).await;
    let cost = input * PRICE.0 + output * PRICE.1;
    emit(&json!({
        "type": "result",
        "subtype": if ok { "success" } else { "error_during_execution" },
        "is_error": !ok,
        "session_id": session,
        "num_turns": batch.len().max(1),
        "total_cost_usd": cost as f64 / 1e6,
        "usage": {"input_tokens": input, "output_tokens": output},
    }));
    ok
}

/// An `assistant` event of step `n`.
fn assistant(n: usize, content: Vec<Value>, input: u64) -> Value {
    json!({"type": "assistant", "message": {
        "id": format!("msg-{n}"), "model": MODEL,
        "usage": {"input_tokens": input, "output_tokens": 8},
        "content": content,
    }})
}

fn emit(event: &Value) {
    println!("{event}");
}

#[cfg(test)]
#[path = "demo_model_tests.rs"]
mod tests;
