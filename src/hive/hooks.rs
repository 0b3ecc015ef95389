//! Claude Code lifecycle hooks: how a payload is taken in (the seed's
//! intake: a size cap, a JSON object, a required `hook_event_name`, the
//! payload kept whole) and what session state an event implies.
//!
//! The mapping is the seed's, in roster terms: `SessionStart` and
//! `UserPromptSubmit` → working; `Stop` → awaiting review; `StopFailure`
//! → turn failed; `Notification` → blocked on a person with a kind from
//! `notification_type` (`permission_prompt` → needs permission,
//! `idle_prompt` → idle, `elicitation_dialog`/`agent_needs_input` and any
//! type not known → needs answer; the informational ones change nothing);
//! `SessionEnd` during a turn (working or blocked) → turn failed, after a
//! turn → ended, after a failed turn → stays failed (the failure is the
//! fact worth showing). Unknown events are recorded and change nothing.

use serde_json::Value;

use crate::wire::agent::MAX_HOOK_PAYLOAD;
use crate::wire::host::SessionState;

/// An agent's session state with its message and since when (unix s).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Attention {
    pub state: SessionState,
    pub message: Option<String>,
    pub since: i64,
}

/// Why a payload was refused. All are the caller's fault; nothing is
/// stored for any of them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum HookError {
    #[error("hook payload is {0} bytes, past the {MAX_HOOK_PAYLOAD}-byte cap")]
    TooLarge(usize),
    #[error("hook payload is not UTF-8")]
    NotUtf8,
    #[error("hook payload is not JSON: {0}")]
    NotJson(String),
    #[error("hook payload must be a JSON object")]
    NotObject,
    #[error("hook payload has no \"hook_event_name\" string")]
    NoEventName,
}

/// The longest message kept on the roster (the raw payload keeps it all).
pub const MAX_MESSAGE: usize = 500;

/// One accepted hook, the fields read lifted out of the whole payload.
#[derive(Debug, Clone, PartialEq)]
pub struct HookEvent {
    /// `hook_event_name`, as sent (unknown names included).
    pub name: String,
    pub notification_type: Option<String>,
    pub message: Option<String>,
    pub error: Option<String>,
    pub reason: Option<String>,
    /// The payload exactly as received.
    pub raw: String,
}

impl HookEvent {
    /// The seed's intake over raw bytes.
    pub fn parse(bytes: &[u8]) -> Result<Self, HookError> {
        if bytes.len() > MAX_HOOK_PAYLOAD {
            return Err(HookError::TooLarge(bytes.len()));
        }
        let text = std::str::from_utf8(bytes).map_err(|_| HookError::NotUtf8)?;
        let value: Value =
            serde_json::from_str(text).map_err(|e| HookError::NotJson(e.to_string()))?;
        let Value::Object(map) = &value else {
            return Err(HookError::NotObject);
        };
        let field = |key: &str| map.get(key).and_then(Value::as_str).map(str::to_owned);
        let name = field("hook_event_name")
            .filter(|n| !n.is_empty())
            .ok_or(HookError::NoEventName)?;
        Ok(Self {
            name,
            notification_type: field("notification_type"),
            message: field("message"),
            error: field("error"),
            reason: field("reason"),
            raw: text.to_owned(),
        })
    }

    /// Whether a `Notification` waits on a person, and as which state.
    /// Unknown types are taken as a question: over-notifying is
    /// recoverable, an agent stuck invisibly is not.
    fn blocked_state(&self) -> Option<SessionState> {
        match self.notification_type.as_deref() {
            Some("permission_prompt") => Some(SessionState::NeedsPermission),
            Some("idle_prompt") => Some(SessionState::Idle),
            Some(
                "auth_success"
                | "elicitation_complete"
                | "elicitation_response"
                | "agent_completed",
            ) => None,
            _ => Some(SessionState::NeedsAnswer),
        }
    }

    /// The state this event moves a session in `current` to, with its
    /// message; `None` when it changes nothing.
    pub fn next(&self, current: Option<SessionState>) -> Option<(SessionState, Option<String>)> {
        use SessionState::*;
        let (state, message) = match self.name.as_str() {
            "SessionStart" | "UserPromptSubmit" => (Working, None),
            "Stop" => (AwaitingReview, None),
            "StopFailure" => (
                TurnFailed,
                Some(
                    self.error
                        .clone()
                        .or_else(|| self.message.clone())
                        .unwrap_or_else(|| "the turn ended with an API error".into()),
                ),
            ),
            "Notification" => (self.blocked_state()?, self.message.clone()),
            "SessionEnd" => match current {
                Some(Working | NeedsPermission | NeedsAnswer | Idle) => (
                    TurnFailed,
                    Some(match &self.reason {
                        Some(r) => format!("the session ended during a turn ({r})"),
                        None => "the session ended during a turn".into(),
                    }),
                ),
                Some(TurnFailed) => return None,
                _ => (Ended, self.reason.clone()),
            },
            _ => return None,
        };
        let message = message.map(|m| clip(&m));
        if current == Some(state) && message.is_none() {
            return None;
        }
        Some((state, message))
    }
}

/// `text` without control characters, at most [`MAX_MESSAGE`] bytes.
fn clip(text: &str) -> String {
    let mut out = String::new();
    for c in text.chars().map(|c| if c.is_control() { ' ' } else { c }) {
        if out.len() + c.len_utf8() > MAX_MESSAGE {
            break;
        }
        out.push(c);
    }
    out
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
