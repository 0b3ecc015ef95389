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
        Response::Ok { delivered: Some(0) } => (
            "sent, but it reached nobody: no agent answers to that recipient now \
             (`<children>` of an agent without children)"
                .into(),
            false,
        ),
        Response::Ok { delivered: Some(n) } => (format!("ok: delivered to {n} inbox(es)"), false),
        Response::Ok { delivered: None } => ("ok".into(), false),
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
mod tests {
    use super::*;

    #[test]
    fn a_long_result_is_cut_on_a_char_boundary_and_says_so() {
        let text = "é".repeat(MAX_TOOL_OUTPUT);
        let out = cap(&text, MAX_TOOL_OUTPUT);
        assert!(out.len() <= MAX_TOOL_OUTPUT);
        assert!(out.ends_with(&format!("capped at {MAX_TOOL_OUTPUT} bytes]")));
        assert_eq!(cap("short", 10), "short");
    }

    #[test]
    fn a_refusal_is_an_error_result_with_the_daemons_words() {
        let (text, is_error) = response_text(&Response::err(
            ErrorCode::UnknownRecipient,
            "unknown recipient \"zed\"",
        ));
        assert!(is_error);
        assert_eq!(
            text,
            "unknown recipient \"zed\"\n[code: unknown_recipient; change the request]"
        );
        let (text, _) = response_text(&Response::err(ErrorCode::InboxFull, "bob's inbox is full"));
        assert!(text.ends_with("[code: inbox_full; retry later]"), "{text}");
        assert_eq!(response_text(&Response::ok()), ("ok".into(), false));
        let (text, is_error) = response_text(&Response::sent(0));
        assert!(!is_error);
        assert!(text.contains("reached nobody"), "{text}");
        let (text, is_error) = response_text(&Response::Status { unread: 2 });
        assert!(!is_error);
        assert_eq!(text, r#"{"kind":"status","unread":2}"#);
    }
}
