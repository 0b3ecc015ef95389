//! Cut turns resumed in their own conversation (issue 47, the harness's
//! part).
//!
//! A turn is *cut* when it ends without finishing and without the
//! operator ending it: Claude died (a crash, an OOM kill, a signal), it
//! reported an error, the turn passed its deadline, the harness stopped
//! past its grace, or the harness (or its container, or the host) died
//! under it. Its messages are requeued as before; what changes is the
//! next attempt: it runs `claude --resume <the cut turn's session>` —
//! the session the cut attempt resumed, or the one its stream had already
//! named (`system`/`init`) — so the transcript, partial turn included, is
//! still Claude's context, and its prompt says the turn was cut, when, by
//! what, which tool calls had completed, and asks Claude to check the
//! state of its work and carry on with the same messages.
//!
//! Before, a failed turn forgot the saved session so that a broken session
//! could not fail every turn after it. That guard is kept in two narrower
//! forms: a session Claude says it cannot resume (`No conversation found
//! with session ID: …`, on stderr and in its `result` event's `errors`)
//! starts a new conversation at once, and a turn cut `max_resumes` times
//! in a row is given up like a failed turn, its next attempt in a new
//! conversation. The reason is in the status, the turn report and the
//! harness's journal.
//!
//! **The record.** A harness that dies mid-turn cannot say anything at its
//! end, so a small record of the turn in progress is kept in the state
//! directory ([`RECORD_FILE`]): written when an attempt starts, again
//! when the stream names its session and as each tool call completes
//! (names and ok only, [`MAX_LISTED_TOOLS`] of them; never an input),
//! written to a temporary file and renamed over, removed when the turn
//! ends. A cut the harness saw itself is written into it; a record found
//! at start with no cut in it is a cut by the harness's own death, dated
//! by its last write. The state directory is the agent's own space
//! (Claude's Bash tool can write it), so the record is read as untrusted
//! input to the agent's own prompt only: at most [`MAX_RECORD_BYTES`],
//! strict JSON, every field validated (session ids and tool names from
//! closed character sets, bounded counts, a closed set of causes), and
//! anything else is discarded whole. What it can reach is this agent's
//! next prompt, outside the messages' fence and with nothing in it that
//! can carry a framing line (see [`super::prompt`]).
//!
//! Rejected: keeping the record only in memory (the harness-restart case
//! is the one that needs it); a host-side journal of the turn (the next
//! step of issue 47: it would survive the agent's own tampering and a lost
//! state directory, but it is the daemon's, outside this harness).

use std::io::{Read, Write};
use std::path::{Path, PathBuf};

use serde::{Deserialize, Serialize};
use serde_json::Value;

use super::claude::valid_session;

/// The record of the turn in progress, in the state directory.
pub const RECORD_FILE: &str = "turn-in-progress.json";
/// A record longer than this is discarded unread.
pub const MAX_RECORD_BYTES: u64 = 16 * 1024;
/// Completed tool calls listed by name (the rest are counted).
pub const MAX_LISTED_TOOLS: usize = 20;
/// The most message ids a record holds.
const MAX_IDS: usize = 200;
/// The longest tool name kept.
const MAX_TOOL_NAME: usize = 64;
/// The longest exit description kept (`signal: 9 (SIGKILL)`).
const MAX_HOW: usize = 60;

/// What cut a turn.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(tag = "kind", rename_all = "snake_case", deny_unknown_fields)]
pub enum CutBy {
    /// Claude exited or was killed; `how` is the exit (`exit status: 1`,
    /// `signal: 9 (SIGKILL)`).
    ClaudeExited { how: String },
    /// Claude exited 0 but its `result` reported an error.
    ClaudeError,
    /// The turn passed its deadline.
    Deadline { seconds: u64 },
    /// The harness was stopping and the turn outlived its grace.
    HarnessStopped,
    /// The harness (or its container, or the host) died mid-turn: found
    /// at the next start.
    HarnessRestarted,
}

impl CutBy {
    fn words(&self) -> String {
        match self {
            Self::ClaudeExited { how } => format!("Claude Code exiting ({how})"),
            Self::ClaudeError => "an error Claude Code reported".into(),
            Self::Deadline { seconds } => format!("the turn's deadline ({seconds} s)"),
            Self::HarnessStopped => "the hive's harness stopping (its service or container \
                                     was stopped)"
                .into(),
            Self::HarnessRestarted => "the hive's harness, its container or the host \
                                       restarting"
                .into(),
        }
    }

    fn valid(&self) -> bool {
        match self {
            Self::ClaudeExited { how } => valid_how(how),
            _ => true,
        }
    }
}

/// When and by what a turn was cut.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct Cut {
    /// Unix ms; for [`CutBy::HarnessRestarted`], the record's last write.
    pub at_ms: i64,
    pub by: CutBy,
}

/// One completed tool call: its name and whether it succeeded.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct ToolDone {
    pub name: String,
    pub ok: bool,
}

/// The record of one turn in progress, across its attempts.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct TurnRecord {
    /// The turn's id, the same for all its attempts: what its calls'
    /// idempotency keys are derived from ([`super::idempotency`]). Empty
    /// in a record an older harness wrote (the next attempt gets one).
    #[serde(default)]
    pub turn: String,
    /// Unix ms of the turn's first attempt.
    pub started_at_ms: i64,
    /// Unix ms of the last write.
    pub updated_at_ms: i64,
    /// The messages of the attempt.
    pub message_ids: Vec<i64>,
    /// The session the attempt runs in (resumed, or named by its
    /// stream); `None`: a new conversation not named yet. After a cut:
    /// the session the next attempt resumes, `None` for a new one.
    pub session: Option<String>,
    /// How many times this turn has been resumed.
    pub resumes: u32,
    /// Completed tool calls of the turn's attempts, the first
    /// [`MAX_LISTED_TOOLS`].
    pub tools: Vec<ToolDone>,
    /// All completed tool calls, listed or not.
    pub tools_total: u32,
    /// Set when the harness saw the attempt cut.
    pub cut: Option<Cut>,
}

impl TurnRecord {
    /// A first attempt of `message_ids` in `session`.
    pub fn new(message_ids: &[i64], session: Option<String>, now_ms: i64) -> Self {
        Self {
            turn: super::idempotency::new_turn_id(),
            started_at_ms: now_ms,
            updated_at_ms: now_ms,
            message_ids: message_ids.iter().copied().take(MAX_IDS).collect(),
            session,
            resumes: 0,
            tools: Vec::new(),
            tools_total: 0,
            cut: None,
        }
    }

    /// Whether every field is what the harness could have written.
    pub fn valid(&self) -> bool {
        (self.turn.is_empty() || super::idempotency::valid_turn_id(&self.turn))
            && self.started_at_ms >= 0
            && self.updated_at_ms >= 0
            && self.message_ids.len() <= MAX_IDS
            && self.message_ids.iter().all(|id| *id > 0)
            && self.session.as_deref().is_none_or(valid_session)
            && self.resumes <= 1000
            && self.tools.len() <= MAX_LISTED_TOOLS
            && self.tools.iter().all(|t| valid_tool_name(&t.name))
            && self.tools_total as usize >= self.tools.len()
            && self
                .cut
                .as_ref()
                .is_none_or(|c| c.at_ms >= 0 && c.by.valid())
    }

    /// Add a completed tool call; `name` is cleaned first (a name with
    /// nothing left is counted, not listed).
    pub fn tool_done(&mut self, name: &str, ok: bool) {
        self.tools_total = self.tools_total.saturating_add(1);
        let name = clean_tool_name(name);
        if self.tools.len() < MAX_LISTED_TOOLS && !name.is_empty() {
            self.tools.push(ToolDone { name, ok });
        }
    }

    /// Whether the batch `ids` continues this turn (shares a message).
    pub fn continues(&self, ids: &[i64]) -> bool {
        ids.iter().any(|id| self.message_ids.contains(id))
    }
}

/// A tool name as the record keeps it: `[A-Za-z0-9_.:-]`, at most
/// [`MAX_TOOL_NAME`] characters (`mcp__hyperhive__send`, `Bash`).
pub fn clean_tool_name(name: &str) -> String {
    name.chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '-' | '.' | ':'))
        .take(MAX_TOOL_NAME)
        .collect()
}

fn valid_tool_name(name: &str) -> bool {
    !name.is_empty() && clean_tool_name(name) == name
}

fn valid_how(how: &str) -> bool {
    !how.is_empty()
        && how.len() <= MAX_HOW
        && how
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | ':' | '(' | ')' | '_' | '-'))
}

/// An exit description as a [`CutBy::ClaudeExited`] keeps it.
pub fn clean_how(how: &str) -> String {
    let kept: String = how
        .chars()
        .filter(|c| c.is_ascii_alphanumeric() || matches!(c, ' ' | ':' | '(' | ')' | '_' | '-'))
        .take(MAX_HOW)
        .collect();
    if kept.trim().is_empty() {
        "it failed".into()
    } else {
        kept
    }
}

/// How the next attempt of a cut turn starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Next {
    /// In the cut turn's own session.
    Resume { session: String },
    /// In a new conversation; `why`, when there is a reason to report
    /// (none: the cut attempt had not named a session yet).
    Fresh { why: Option<String> },
}

/// The resume decision, after `record`'s attempt was cut.
/// `unresumable`: Claude said it has no conversation for the session.
pub fn next_after_cut(record: &TurnRecord, max_resumes: u32, unresumable: bool) -> Next {
    match &record.session {
        Some(s) if unresumable => Next::Fresh {
            why: Some(format!(
                "Claude Code cannot resume session {s} (it has no such conversation): \
                 the next attempt starts a new conversation"
            )),
        },
        None => Next::Fresh { why: None },
        Some(_) if record.resumes >= max_resumes => Next::Fresh {
            why: Some(format!(
                "the turn was cut after {} resume(s), the limit (max_resumes {max_resumes}): \
                 the next attempt starts a new conversation",
                record.resumes
            )),
        },
        Some(s) => Next::Resume { session: s.clone() },
    }
}

/// `record` after its attempt was cut by `cut`, ready for the next one
/// (its session is the next attempt's; `resumes` restarts with a new
/// conversation); and the decision.
pub fn after_cut(
    mut record: TurnRecord,
    cut: Cut,
    max_resumes: u32,
    unresumable: bool,
) -> (TurnRecord, Next) {
    let next = next_after_cut(&record, max_resumes, unresumable);
    if matches!(next, Next::Fresh { .. }) {
        record.session = None;
        record.resumes = 0;
    }
    record.updated_at_ms = record.updated_at_ms.max(cut.at_ms);
    record.cut = Some(cut);
    (record, next)
}

/// How an attempt starts.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Plan {
    /// `--resume` this (none: a new conversation).
    pub session: Option<String>,
    /// The attempt's record (written before Claude starts).
    pub record: TurnRecord,
    /// The cut attempt this one continues, for the prompt's note.
    pub continues: Option<TurnRecord>,
    /// A reason the conversation is new, found at this start (a record
    /// the harness's death left, past its resume limit).
    pub fresh_why: Option<String>,
    /// The saved session is to be forgotten (the new conversation
    /// replaces it).
    pub forget_saved: bool,
}

/// The plan of an attempt at `ids`, given the record found (`previous`,
/// already validated) and the agent's saved session.
pub fn plan(
    previous: Option<TurnRecord>,
    ids: &[i64],
    saved: Option<String>,
    max_resumes: u32,
    now_ms: i64,
) -> Plan {
    let Some(previous) = previous.filter(|r| r.continues(ids)) else {
        return Plan {
            record: TurnRecord::new(ids, saved.clone(), now_ms),
            session: saved,
            continues: None,
            fresh_why: None,
            forget_saved: false,
        };
    };
    let (previous, fresh_why) = match previous.cut {
        Some(_) => (previous, None),
        // The harness died under it: the cut is found now.
        None => {
            let cut = Cut {
                at_ms: previous.updated_at_ms,
                by: CutBy::HarnessRestarted,
            };
            let (record, next) = after_cut(previous, cut, max_resumes, false);
            let why = match next {
                Next::Fresh { why } => why,
                Next::Resume { .. } => None,
            };
            (record, why)
        }
    };
    let session = previous.session.clone();
    let turn = if previous.turn.is_empty() {
        super::idempotency::new_turn_id()
    } else {
        previous.turn.clone()
    };
    let record = TurnRecord {
        turn,
        updated_at_ms: now_ms,
        message_ids: ids.iter().copied().take(MAX_IDS).collect(),
        session: session.clone(),
        resumes: previous.resumes + u32::from(session.is_some()),
        cut: None,
        ..previous.clone()
    };
    Plan {
        forget_saved: session.is_none(),
        session,
        record,
        continues: Some(previous),
        fresh_why,
    }
}

/// The paragraph a continued attempt's prompt carries before its
/// messages: only the harness's words, validated tool names, numbers and
/// times (nothing a message or the model wrote).
pub fn note(cut: &TurnRecord, ids: &[i64]) -> String {
    let when = cut
        .cut
        .as_ref()
        .map(|c| crate::clock::rfc3339(c.at_ms.div_euclid(1000)))
        .unwrap_or_else(|| "an unknown time".into());
    let by = cut
        .cut
        .as_ref()
        .map(|c| c.by.words())
        .unwrap_or_else(|| "an unknown cause".into());
    let last_seen = if matches!(
        cut.cut.as_ref().map(|c| &c.by),
        Some(CutBy::HarnessRestarted)
    ) {
        " (the last time it was seen working)"
    } else {
        ""
    };
    let same: Vec<String> = ids
        .iter()
        .filter(|id| cut.message_ids.contains(id))
        .map(i64::to_string)
        .collect();
    let conversation = if cut.session.is_some() {
        "This is the same conversation, resumed: what the cut attempt did is above in it."
    } else {
        "Its conversation could not be resumed, so this is a new one: what the cut attempt \
         did is not in your context."
    };
    let tools = if cut.tools.is_empty() {
        if cut.tools_total == 0 {
            "No tool call had completed.".to_owned()
        } else {
            format!("{} tool call(s) had completed.", cut.tools_total)
        }
    } else {
        let listed: Vec<String> = cut
            .tools
            .iter()
            .map(|t| format!("{} ({})", t.name, if t.ok { "ok" } else { "failed" }))
            .collect();
        let more = cut.tools_total as usize - cut.tools.len();
        let more = if more > 0 {
            format!(", and {more} more")
        } else {
            String::new()
        };
        format!(
            "Tool calls that had completed, in order: {}{more}.",
            listed.join(", ")
        )
    };
    format!(
        "This turn was cut off before it ended: its previous attempt was stopped at {when}{last_seen} \
         by {by}. {conversation} {tools} The messages below numbered {} are the ones that attempt \
         was working on: they are not new{}. Check the state of your work first (files, commands \
         you ran, messages you already sent — a send made before the cut is not undone, so do not \
         repeat it blindly; a hive tool call repeated exactly, same tool and arguments, is answered \
         as the first time and not done again, a reworded one is new), then carry on and finish \
         the turn.",
        if same.is_empty() {
            "(none)".into()
        } else {
            same.join(", ")
        },
        if same.len() < ids.len() {
            "; any other message below is new"
        } else {
            ""
        }
    )
}

/// The record's path in `state_dir`.
pub fn record_path(state_dir: &Path) -> PathBuf {
    state_dir.join(RECORD_FILE)
}

/// The record in `state_dir`, if there is a valid one. Anything else
/// (too long, not the format, a field out of bounds) is removed and
/// logged: it is the agent's own space, read as untrusted.
pub fn load(state_dir: &Path) -> Option<TurnRecord> {
    let path = record_path(state_dir);
    let file = match open_nofollow(&path) {
        Ok(f) => f,
        Err(e) if e.kind() == std::io::ErrorKind::NotFound => return None,
        Err(e) => {
            tracing::warn!(
                "cannot read {}: {e}; the cut turn is not resumed",
                path.display()
            );
            let _ = std::fs::remove_file(&path);
            return None;
        }
    };
    let mut text = String::new();
    let read = file.take(MAX_RECORD_BYTES + 1).read_to_string(&mut text);
    let record = read
        .ok()
        .filter(|n| (*n as u64) <= MAX_RECORD_BYTES)
        .and_then(|_| serde_json::from_str::<TurnRecord>(&text).ok())
        .filter(TurnRecord::valid);
    if record.is_none() {
        tracing::warn!(
            "discarding {}: not a turn record this harness wrote; the cut turn is not resumed",
            path.display()
        );
        let _ = std::fs::remove_file(&path);
    }
    record
}

fn open_nofollow(path: &Path) -> std::io::Result<std::fs::File> {
    use std::os::unix::fs::OpenOptionsExt;
    std::fs::OpenOptions::new()
        .read(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)
}

/// Write `record` atomically (a temporary file renamed over; the
/// temporary opened without following a link). A failure is logged: it
/// costs the resume after a harness restart, never the turn.
pub fn store(state_dir: &Path, record: &TurnRecord) {
    use std::os::unix::fs::OpenOptionsExt;
    let path = record_path(state_dir);
    let tmp = state_dir.join(format!("{RECORD_FILE}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let text = serde_json::to_vec(record).unwrap_or_default();
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(&text))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        tracing::warn!("cannot write {}: {e}", path.display());
    }
}

/// Remove the record (the turn ended).
pub fn clear(state_dir: &Path) {
    let _ = std::fs::remove_file(record_path(state_dir));
}

/// Follows a running attempt's stream for the record: the session its
/// `system` event names, and each tool call as its result comes back.
#[derive(Debug, Default)]
pub struct Follow {
    /// Tool calls started: id → name (bounded like the record's list).
    open: Vec<(String, String)>,
}

/// What one stream event changed in the record.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Seen {
    Nothing,
    /// The stream named this (valid) session, a new one for the record.
    Session(String),
    /// A tool call completed.
    Tool,
}

impl Follow {
    /// Take in one event, updating `record`.
    pub fn observe(&mut self, record: &mut TurnRecord, event: &Value) -> Seen {
        match event["type"].as_str() {
            Some("system") => match event["session_id"].as_str() {
                Some(id) if valid_session(id) && record.session.as_deref() != Some(id) => {
                    record.session = Some(id.to_owned());
                    Seen::Session(id.to_owned())
                }
                _ => Seen::Nothing,
            },
            Some("assistant") => {
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_use"
                        && self.open.len() < 4 * MAX_LISTED_TOOLS
                        && let (Some(id), Some(name)) =
                            (block["id"].as_str(), block["name"].as_str())
                    {
                        self.open
                            .push((id.chars().take(128).collect(), name.to_owned()));
                    }
                }
                Seen::Nothing
            }
            Some("user") => {
                let mut seen = Seen::Nothing;
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] != "tool_result" {
                        continue;
                    }
                    let Some(id) = block["tool_use_id"].as_str() else {
                        continue;
                    };
                    if let Some(i) = self.open.iter().position(|(open, _)| open == id) {
                        let (_, name) = self.open.swap_remove(i);
                        record.tool_done(&name, block["is_error"].as_bool() != Some(true));
                        seen = Seen::Tool;
                    }
                }
                seen
            }
            _ => Seen::Nothing,
        }
    }
}

#[cfg(test)]
#[path = "resume_tests.rs"]
mod tests;
