//! A socket answer as the text of a tool result, capped.
//!
//! Every tool result passes through [`cap`]: at most [`MAX_TOOL_OUTPUT`]
//! bytes reach the model, the rest is replaced by a line saying how much
//! was cut, so one `get_logs` or `recv` cannot flood the context window.
//! Messages are rendered like the turn prompt ([`super::prompt`]); other
//! answers as compact JSON, which models read well and which keeps every
//! field the daemon sent.

use crate::wire::agent::Response;
#[cfg(test)]
use crate::wire::codes::ErrorCode;

use super::prompt;

/// The most bytes of one tool result.
pub const MAX_TOOL_OUTPUT: usize = 16 * 1024;

/// The text of an answer and whether it is a refusal (`isError`).
pub fn response_text(response: &Response) -> (String, bool) {
    match response {
        // The code goes with the words so the model can tell "retry later"
        // (inbox_full) from "fix the name" (unknown_recipient).
        Response::Err {
            message,
            code: Some(code),
        } => (
            cap(
                &format!("{message}\n[code: {code}; {}]", code.advice()),
                MAX_TOOL_OUTPUT,
            ),
            true,
        ),
        Response::Err {
            message,
            code: None,
        } => (cap(message, MAX_TOOL_OUTPUT), true),
        Response::Ok {
            delivered: Some(0), ..
        } => (
            "sent, but it reached nobody: no agent answers to that recipient now \
             (`<children>` of an agent without children)"
                .into(),
            false,
        ),
        Response::Ok {
            delivered: Some(n), ..
        } => (format!("ok: delivered to {n} inbox(es)"), false),
        Response::Ok {
            approval: Some(id),
            already_pending: true,
            ..
        } => (
            format!(
                "already pending: approval {id} asks the same; the operator has not decided it \
                 yet (asking again adds nothing)"
            ),
            false,
        ),
        Response::Ok {
            approval: Some(id), ..
        } => (
            format!("ok: approval {id} queued; the operator decides"),
            false,
        ),
        Response::Ok { .. } => ("ok".into(), false),
        Response::Messages { messages } if messages.is_empty() => {
            ("no messages are pending".into(), false)
        }
        Response::Messages { messages } => (cap(&prompt::render(messages), MAX_TOOL_OUTPUT), false),
        Response::Logs { content } | Response::HostJournal { content } => {
            (cap(content, MAX_TOOL_OUTPUT), false)
        }
        other => (
            cap(
                &serde_json::to_string(other).unwrap_or_default(),
                MAX_TOOL_OUTPUT,
            ),
            false,
        ),
    }
}

/// `text` cut to at most `max` bytes on a character boundary, with a
/// closing line saying how much was left out.
pub fn cap(text: &str, max: usize) -> String {
    if text.len() <= max {
        return text.to_owned();
    }
    let mut end = max.saturating_sub(80);
    while !text.is_char_boundary(end) {
        end -= 1;
    }
    format!(
        "{}\n[... {} more bytes cut: results are capped at {max} bytes]",
        &text[..end],
        text.len() - end
    )
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
