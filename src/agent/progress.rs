//! The live view's feed: while a turn runs, bounded progress events
//! (`turn_progress`) read from Claude Code's `stream-json` — the turn's
//! messages (senders and first lines), each tool call as it starts and
//! ends (name, ok, how long; never its input), Claude's latest text, and
//! tokens so far — sent to the daemon beside the turn.
//!
//! Decision: fire and forget. Events go into a queue of [`QUEUE`] and one
//! task sends them; when the queue is full an event is dropped and
//! counted (the count rides on the next event sent), and a failing or
//! slow daemon costs events, never the turn. Rejected: sending from the
//! turn's own loop, where a slow answer would hold Claude's stdout.
//!
//! At the turn's end [`Progress::finish`] lets the queue drain for at most
//! [`FINISH_WAIT`] (a few ms against a daemon that answers; the `result`
//! event's usage is usually the last one queued), then discards what is
//! left and waits out the event being sent within the same bound, so no
//! event of a finished turn reaches the daemon after its `report_turn`.

use std::collections::HashMap;
use std::sync::Arc;
use std::sync::atomic::{AtomicU64, Ordering};
use std::time::{Duration, Instant};

use serde_json::Value;
use tokio::sync::mpsc;

use super::socket::AgentSocket;
use crate::wire::agent::{DeliveredMessage, Request, Response};
use crate::wire::live::{
    MAX_FIRST_LINE, MAX_LIVE_TOOL_NAME, MAX_PROMPT_MESSAGES, MAX_REPLY, MAX_SENDER, PromptLine,
    TurnProgress, cut,
};
use crate::wire::turns::TurnUsage;

/// Events waiting to be sent; more are dropped.
pub const QUEUE: usize = 64;
/// The longest one event's request may take.
const SEND_BUDGET: Duration = Duration::from_secs(2);
/// How long a turn's end waits, at most, for its queued events to be sent.
pub const FINISH_WAIT: Duration = Duration::from_millis(500);
/// Tool calls and assistant messages tracked per turn (past them, none).
const MAX_TRACKED: usize = 500;

struct Item {
    generation: u64,
    progress: TurnProgress,
    dropped: u64,
}

#[derive(Debug, Default)]
struct Shared {
    /// Bumped at each turn's end: queued items of an older one are stale.
    generation: AtomicU64,
    /// Events dropped in this turn.
    dropped: AtomicU64,
    /// Held while an event is being sent.
    sending: tokio::sync::Mutex<()>,
}

/// The sending side: cheap to clone; a disabled one sends nothing.
#[derive(Debug, Clone)]
pub struct Progress {
    tx: Option<mpsc::Sender<Item>>,
    shared: Arc<Shared>,
}

impl std::fmt::Debug for Item {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Item")
            .field("progress", &self.progress)
            .finish()
    }
}

impl Progress {
    /// Sends nothing (tests, or no socket).
    pub fn disabled() -> Self {
        Self {
            tx: None,
            shared: Arc::default(),
        }
    }

    /// A sender and the queue it fills.
    fn queue() -> (Self, mpsc::Receiver<Item>) {
        let (tx, rx) = mpsc::channel::<Item>(QUEUE);
        let sender = Self {
            tx: Some(tx),
            shared: Arc::default(),
        };
        (sender, rx)
    }

    /// Start the sending task on `socket` (inside a tokio runtime).
    pub fn start(socket: AgentSocket) -> Self {
        let (sender, mut rx) = Self::queue();
        let worker = Arc::clone(&sender.shared);
        tokio::spawn(async move {
            while let Some(item) = rx.recv().await {
                let _sending = worker.sending.lock().await;
                if item.generation != worker.generation.load(Ordering::SeqCst) {
                    continue;
                }
                let request = Request::TurnProgress {
                    progress: item.progress,
                    dropped: item.dropped,
                };
                match socket.call(&request, SEND_BUDGET).await {
                    Ok(Response::Ok { .. }) => {}
                    other => tracing::debug!("turn_progress: {other:?}"),
                }
            }
        });
        sender
    }

    /// Queue `progress`, or drop it (counted) when the queue is full.
    pub fn send(&self, progress: TurnProgress) {
        let Some(tx) = &self.tx else { return };
        let item = Item {
            generation: self.shared.generation.load(Ordering::SeqCst),
            progress,
            dropped: self.shared.dropped.load(Ordering::SeqCst),
        };
        if tx.try_send(item).is_err() {
            self.shared.dropped.fetch_add(1, Ordering::SeqCst);
        }
    }

    /// The turn ended: let the queue drain (within [`FINISH_WAIT`]),
    /// discard what is left, wait out the event being sent (within the same
    /// bound); how many events this turn dropped.
    pub async fn finish(&self) -> u64 {
        let deadline = tokio::time::Instant::now() + FINISH_WAIT;
        if let Some(tx) = &self.tx {
            while tx.capacity() < tx.max_capacity() && tokio::time::Instant::now() < deadline {
                tokio::time::sleep(Duration::from_millis(5)).await;
            }
        }
        self.shared.generation.fetch_add(1, Ordering::SeqCst);
        let _ = tokio::time::timeout_at(deadline, self.shared.sending.lock()).await;
        self.shared.dropped.swap(0, Ordering::SeqCst)
    }
}

/// The `started` event of a turn over `messages`.
pub fn started(messages: &[DeliveredMessage], started_at_ms: i64) -> TurnProgress {
    TurnProgress::Started {
        started_at_ms,
        messages: messages
            .iter()
            .take(MAX_PROMPT_MESSAGES)
            .map(|m| PromptLine {
                from: label(&m.from, MAX_SENDER, "?"),
                first_line: first_line(&m.body),
            })
            .collect(),
        total_messages: u32::try_from(messages.len()).unwrap_or(u32::MAX),
    }
}

/// `text` without control characters, cut to `max` bytes; `empty` when
/// nothing is left.
fn label(text: &str, max: usize, empty: &str) -> String {
    let clean: String = text.chars().filter(|c| !c.is_control()).collect();
    let kept = cut(clean.trim(), max);
    if kept.is_empty() {
        empty.to_owned()
    } else {
        kept.to_owned()
    }
}

/// A message's first non-empty line, cut to [`MAX_FIRST_LINE`].
fn first_line(body: &str) -> String {
    let line = body.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
    label(line, MAX_FIRST_LINE, "")
}

/// Reads a turn's stream events and sends what the live view shows.
#[derive(Debug)]
pub struct Tracker {
    progress: Progress,
    /// Open tool calls: `tool_use` id -> (call number, start).
    open: HashMap<String, (u32, Instant)>,
    calls: u32,
    /// Each assistant message's latest usage, by message id.
    messages: HashMap<String, TurnUsage>,
    sum: TurnUsage,
}

impl Tracker {
    pub fn new(progress: Progress) -> Self {
        Self {
            progress,
            open: HashMap::new(),
            calls: 0,
            messages: HashMap::new(),
            sum: TurnUsage::default(),
        }
    }

    /// Take in one parsed stream event.
    pub fn observe(&mut self, event: &Value) {
        match event["type"].as_str() {
            Some("assistant") => {
                self.usage(&event["message"]);
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    match block["type"].as_str() {
                        Some("tool_use") => self.tool_use(block),
                        Some("text") => self.text(block),
                        _ => {}
                    }
                }
            }
            Some("user") => {
                for block in event["message"]["content"].as_array().into_iter().flatten() {
                    if block["type"] == "tool_result" {
                        self.tool_result(block);
                    }
                }
            }
            Some("result") => {
                let Ok(usage) = serde_json::from_value::<TurnUsage>(event["usage"].clone()) else {
                    return;
                };
                let cost = event["total_cost_usd"]
                    .as_f64()
                    .filter(|c| c.is_finite() && *c >= 0.0)
                    .map(|c| (c * 1e6).round() as u64);
                self.progress.send(TurnProgress::Usage {
                    usage,
                    cost_micro_usd: cost,
                    is_final: true,
                });
            }
            _ => {}
        }
    }

    fn tool_use(&mut self, block: &Value) {
        let (Some(id), Some(name)) = (block["id"].as_str(), block["name"].as_str()) else {
            return;
        };
        if self.open.contains_key(id) || self.calls as usize >= MAX_TRACKED {
            return;
        }
        let call = self.calls;
        self.calls += 1;
        self.open.insert(id.to_owned(), (call, Instant::now()));
        self.progress.send(TurnProgress::ToolStarted {
            call,
            name: label(name, MAX_LIVE_TOOL_NAME, "?"),
        });
    }

    fn tool_result(&mut self, block: &Value) {
        let Some(id) = block["tool_use_id"].as_str() else {
            return;
        };
        if let Some((call, start)) = self.open.remove(id) {
            self.progress.send(TurnProgress::ToolEnded {
                call,
                ok: block["is_error"].as_bool() != Some(true),
                duration_ms: u64::try_from(start.elapsed().as_millis()).unwrap_or(u64::MAX),
            });
        }
    }

    fn text(&mut self, block: &Value) {
        let Some(text) = block["text"].as_str() else {
            return;
        };
        let clean: String = text
            .chars()
            .filter(|c| !c.is_control() || *c == '\n' || *c == '\t')
            .collect();
        let kept = cut(clean.trim(), MAX_REPLY);
        if !kept.is_empty() {
            self.progress.send(TurnProgress::Reply {
                text: kept.to_owned(),
            });
        }
    }

    /// Tokens so far: each assistant message's usage once (the stream
    /// repeats it per content block), summed over the turn's messages.
    fn usage(&mut self, message: &Value) {
        let (Some(id), true) = (message["id"].as_str(), message["usage"].is_object()) else {
            return;
        };
        let Ok(usage) = serde_json::from_value::<TurnUsage>(message["usage"].clone()) else {
            return;
        };
        if !self.messages.contains_key(id) && self.messages.len() >= MAX_TRACKED {
            return;
        }
        if self.messages.insert(id.to_owned(), usage) == Some(usage) {
            return;
        }
        let sum = self.messages.values().fold(TurnUsage::default(), |sum, u| {
            sum.zip_with(u, u64::saturating_add)
        });
        if sum != self.sum {
            self.sum = sum;
            self.progress.send(TurnProgress::Usage {
                usage: sum,
                cost_micro_usd: None,
                is_final: false,
            });
        }
    }
}

#[cfg(test)]
#[path = "progress_tests.rs"]
mod tests;
