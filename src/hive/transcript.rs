//! Interactive sessions' spend, from the Claude Code transcript a hook
//! points at: where on the host that file may be (only inside the agent's
//! own state, `/var/lib/hive` in the container, lexically, no `..`), and
//! what a chunk of it counts (each `assistant` message once, by its id).
//!
//! Nothing in the payload or the file is trusted: the path is checked
//! before anything is opened, each line is capped and parsed on its own (a
//! line that is not JSON, not an assistant message, or has no id counts
//! nothing), and numbers are read as they are (never a price: the
//! transcript has no cost, so these rows carry tokens only).

use std::collections::{BTreeMap, BTreeSet, VecDeque};

use serde_json::Value;

use super::arguments::{MAX_MODEL, MAX_SESSION_ID};
use crate::wire::turns::TurnUsage;

/// Where an agent's state directory is bound inside its container.
pub const CONTAINER_STATE: &str = "/var/lib/hive";

/// The most one hook event reads of a transcript, in bytes.
pub const MAX_READ: usize = 4 << 20;

/// The longest transcript line parsed; a longer one is skipped whole.
pub const MAX_LINE: usize = 1 << 20;

/// How many message ids a cursor remembers across reads (a message's
/// content blocks are consecutive lines, so a message cut by a read's end
/// is among the newest few).
pub const RECENT_IDS: usize = 64;

/// The longest message id taken.
const MAX_MESSAGE_ID: usize = 200;

/// The transcript a hook payload names: its `transcript_path` and
/// `session_id` (the latter only if a sane label). `None` when the payload
/// names no path.
pub fn pointer(raw: &str) -> Option<(String, Option<String>)> {
    let v: Value = serde_json::from_str(raw).ok()?;
    let path = v.get("transcript_path")?.as_str()?.to_owned();
    let session = v
        .get("session_id")
        .and_then(Value::as_str)
        .filter(|s| !s.is_empty() && s.len() <= MAX_SESSION_ID && !s.chars().any(char::is_control))
        .map(str::to_owned);
    Some((path, session))
}

/// The components of `path` under the agent's state directory, if `path`
/// (as the container sees it) is inside [`CONTAINER_STATE`]: absolute,
/// normalised lexically (empty and `.` components dropped), no `..`
/// anywhere, no NUL, something under the directory itself. `Err` says why
/// not, for the log line.
pub fn inside_state(path: &str) -> Result<Vec<String>, &'static str> {
    if path.contains('\0') {
        return Err("has a NUL byte");
    }
    if !path.starts_with('/') {
        return Err("is not absolute");
    }
    let parts: Vec<&str> = path
        .split('/')
        .filter(|p| !p.is_empty() && *p != ".")
        .collect();
    if parts.contains(&"..") {
        return Err("has a `..` component");
    }
    let prefix: Vec<&str> = CONTAINER_STATE
        .split('/')
        .filter(|p| !p.is_empty())
        .collect();
    if parts.len() <= prefix.len() || parts[..prefix.len()] != prefix[..] {
        return Err("is not inside /var/lib/hive");
    }
    Ok(parts[prefix.len()..]
        .iter()
        .map(|p| (*p).to_owned())
        .collect())
}

/// The spend of one model's messages in a chunk.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct ModelSpend {
    pub messages: u32,
    pub usage: TurnUsage,
}

/// What a chunk counted, and where the next read starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Counted {
    /// Bytes of the chunk taken (complete lines, and an over-long line's
    /// start); the rest, a half-written last line, is read again later.
    pub consumed: usize,
    /// Inside an over-long line at the chunk's end: the next read drops
    /// everything up to its first newline.
    pub skipping: bool,
    /// New messages' spend by model (`None`: the message named none).
    pub by_model: BTreeMap<Option<String>, ModelSpend>,
    /// The cursor's remembered ids after this chunk (oldest first).
    pub recent: VecDeque<String>,
}

impl Counted {
    pub fn messages(&self) -> u32 {
        self.by_model.values().map(|s| s.messages).sum()
    }
}

/// Count `chunk`, read from a transcript where the last read left off:
/// `skipping` if that read ended inside an over-long line, `recent` the ids
/// counted lately. Each assistant message with an id is counted once: its
/// lines in this chunk merged (each token field the largest seen, as the
/// stream repeats a message's usage per content block), and an id in
/// `recent` not again.
pub fn count(chunk: &[u8], skipping: bool, recent: &VecDeque<String>) -> Counted {
    let mut at = 0;
    if skipping {
        match chunk.iter().position(|&b| b == b'\n') {
            Some(nl) => at = nl + 1,
            None => {
                return Counted {
                    consumed: chunk.len(),
                    skipping: true,
                    recent: recent.clone(),
                    ..Counted::default()
                };
            }
        }
    }
    let known: BTreeSet<&str> = recent.iter().map(String::as_str).collect();
    // id -> (model, usage), in first-seen order.
    let mut order: Vec<String> = Vec::new();
    let mut seen: BTreeMap<String, (Option<String>, TurnUsage)> = BTreeMap::new();
    let mut out = Counted::default();
    while at < chunk.len() {
        let Some(len) = chunk[at..].iter().position(|&b| b == b'\n') else {
            // A last line with no newline yet: left for later, unless it
            // is already too long to ever parse.
            if chunk.len() - at > MAX_LINE {
                at = chunk.len();
                out.skipping = true;
            }
            break;
        };
        let line = &chunk[at..at + len];
        at += len + 1;
        if line.len() > MAX_LINE {
            continue;
        }
        let Some((id, model, usage)) = assistant(line) else {
            continue;
        };
        if known.contains(id.as_str()) {
            continue;
        }
        match seen.get_mut(&id) {
            Some((_, kept)) => *kept = kept.zip_with(&usage, u64::max),
            None => {
                order.push(id.clone());
                seen.insert(id, (model, usage));
            }
        }
    }
    out.consumed = at;
    out.recent = recent.clone();
    for id in order {
        let Some((model, usage)) = seen.remove(&id) else {
            continue;
        };
        let spend = out.by_model.entry(model).or_default();
        spend.messages += 1;
        spend.usage = spend.usage.zip_with(&usage, u64::saturating_add);
        out.recent.push_back(id);
        while out.recent.len() > RECENT_IDS {
            out.recent.pop_front();
        }
    }
    out
}

/// An assistant message line's id, model and usage; `None` for any other
/// line (not JSON, another type, no id, an id or model past its cap).
fn assistant(line: &[u8]) -> Option<(String, Option<String>, TurnUsage)> {
    let v: Value = serde_json::from_slice(line).ok()?;
    if v.get("type")?.as_str()? != "assistant" {
        return None;
    }
    let message = v.get("message")?;
    let id = message.get("id")?.as_str()?;
    if id.is_empty() || id.len() > MAX_MESSAGE_ID {
        return None;
    }
    let model = message
        .get("model")
        .and_then(Value::as_str)
        .filter(|m| !m.is_empty() && m.len() <= MAX_MODEL && !m.chars().any(char::is_control))
        .map(str::to_owned);
    let u = message.get("usage");
    let n = |field: &str| {
        u.and_then(|u| u.get(field))
            .and_then(Value::as_u64)
            .unwrap_or(0)
    };
    let usage = TurnUsage {
        input_tokens: n("input_tokens"),
        output_tokens: n("output_tokens"),
        cache_read_input_tokens: n("cache_read_input_tokens"),
        cache_creation_input_tokens: n("cache_creation_input_tokens"),
    };
    Some((id.to_owned(), model, usage))
}

#[cfg(test)]
#[path = "transcript_tests.rs"]
mod tests;
