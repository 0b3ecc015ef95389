//! The live turns' state in memory, owned here and reached only through
//! these methods: each agent's turn in progress as its harness reported it
//! (`turn_progress`), and the channel its changes go out on (the agent
//! page's stream, `hivectl turns -f`).
//!
//! Decision: memory only, bounded, cleared at the turn's `report_turn`.
//! The journal keeps the finished turn; a turn in progress is worth
//! nothing after a restart (its harness reports the next event and the
//! view starts again from there). Rejected: a table of progress rows, a
//! durable write per tool call for something no one reads twice.
//!
//! Bounds: one turn per agent; each event is checked against the caps of
//! [`crate::wire::live`] before it gets here; at most
//! [`MAX_LIVE_TOOLS`] tool calls are kept (later ones counted). Changes go
//! out on a broadcast channel: a reader that lags loses changes, never
//! blocks the harness; it can read the snapshot again.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::broadcast;

use crate::wire::ident::Ident;
use crate::wire::live::{LiveChange, LiveTool, LiveTurn, MAX_LIVE_TOOLS, TurnProgress};
use crate::wire::turns::TurnRow;

/// How many changes a slow reader may fall behind before it lags.
const CHANNEL: usize = 256;

#[derive(Debug)]
pub(super) struct LiveState {
    turns: Mutex<Turns>,
    changes: broadcast::Sender<Arc<LiveChange>>,
}

#[derive(Debug, Default)]
struct Turns {
    current: HashMap<Ident, LiveTurn>,
    /// One sequence for every agent's changes.
    seq: u64,
}

impl Default for LiveState {
    fn default() -> Self {
        Self {
            turns: Mutex::new(Turns::default()),
            changes: broadcast::channel(CHANNEL).0,
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl LiveState {
    /// Take in one checked event of `agent`'s turn; `now_ms` starts a turn
    /// whose `started` was not seen (the daemon restarted mid-turn).
    pub(super) fn progress(&self, agent: &Ident, p: TurnProgress, dropped: u64, now_ms: i64) {
        let mut turns = lock(&self.turns);
        turns.seq += 1;
        let seq = turns.seq;
        let turn = turns
            .current
            .entry(agent.clone())
            .or_insert_with(|| LiveTurn {
                started_at_ms: now_ms,
                ..LiveTurn::default()
            });
        apply(turn, &p);
        turn.seq = seq;
        turn.dropped = turn.dropped.max(dropped);
        // Sent under the lock, so changes go out in `seq` order.
        let _ = self.changes.send(Arc::new(LiveChange {
            agent: agent.clone(),
            seq,
            progress: Some(p),
            ended: false,
            turn: None,
        }));
    }

    /// `agent`'s turn ended: forget it and say so, with its journal row
    /// when it was reported. Nothing is sent when no turn was live and no
    /// row came.
    pub(super) fn end(&self, agent: &Ident, row: Option<TurnRow>) {
        let mut turns = lock(&self.turns);
        let was = turns.current.remove(agent).is_some();
        if !was && row.is_none() {
            return;
        }
        turns.seq += 1;
        let seq = turns.seq;
        let _ = self.changes.send(Arc::new(LiveChange {
            agent: agent.clone(),
            seq,
            progress: None,
            ended: true,
            turn: row,
        }));
    }

    /// `agent`'s turn in progress, if any.
    pub(super) fn current(&self, agent: &Ident) -> Option<LiveTurn> {
        lock(&self.turns).current.get(agent).cloned()
    }

    /// The changes from now on.
    pub(super) fn subscribe(&self) -> broadcast::Receiver<Arc<LiveChange>> {
        self.changes.subscribe()
    }
}

/// `p` applied to `turn`, within the bounds.
fn apply(turn: &mut LiveTurn, p: &TurnProgress) {
    match p {
        TurnProgress::Started {
            started_at_ms,
            messages,
            total_messages,
        } => {
            *turn = LiveTurn {
                started_at_ms: *started_at_ms,
                messages: messages.clone(),
                total_messages: (*total_messages)
                    .max(u32::try_from(messages.len()).unwrap_or(u32::MAX)),
                ..LiveTurn::default()
            };
        }
        TurnProgress::ToolStarted { call, name } => {
            if turn.tools.iter().any(|t| t.call == *call) {
                return;
            }
            if turn.tools.len() >= MAX_LIVE_TOOLS {
                turn.tools_left_out = turn.tools_left_out.saturating_add(1);
                return;
            }
            turn.tools.push(LiveTool {
                call: *call,
                name: name.clone(),
                ok: None,
                duration_ms: None,
            });
        }
        TurnProgress::ToolEnded {
            call,
            ok,
            duration_ms,
        } => {
            if let Some(t) = turn.tools.iter_mut().find(|t| t.call == *call) {
                t.ok = Some(*ok);
                t.duration_ms = Some(*duration_ms);
            }
        }
        TurnProgress::Reply { text } => turn.reply = Some(text.clone()),
        TurnProgress::Usage {
            usage,
            cost_micro_usd,
            ..
        } => {
            turn.usage = Some(*usage);
            turn.cost_micro_usd = cost_micro_usd.or(turn.cost_micro_usd);
        }
    }
}
