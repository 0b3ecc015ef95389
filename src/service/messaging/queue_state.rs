//! Each agent's stored inbox as the broker serves it: the ids of its
//! pending rows in order, which of them are in flight (handed to a `recv`,
//! not yet acked), and the bodies of recent arrivals.
//!
//! Decision: a `recv` is answered from here, not from a write transaction.
//! The table stays the truth of what was accepted and what was handled
//! (`store::messages`); this part is the truth of who holds what right now,
//! rebuilt from the table at start (rows marked popped are in flight
//! again). A row enters only after the transaction that inserted it
//! committed (the mail port's `wake` files it), so a `recv` never hands out a
//! row that could still roll back. Rejected: popping in the writer (a
//! write, a savepoint and a commit wait per `recv`, and two index pages
//! per message, for state that a restart rebuilds anyway).
//!
//! Bodies of arrivals are kept while they fit in [`BODY_CACHE_BYTES`]
//! (across the hive); a row without one (loaded at start, or past the
//! bound) is read from the table when it is handed out.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use crate::hive::broker::InboxLoad;
use crate::store::messages::QueuedRow;
use crate::wire::ident::Ident;

/// The most body bytes kept in memory across every agent's queue.
pub(super) const BODY_CACHE_BYTES: usize = 32 << 20;

/// A message's content, kept so a `recv` need not read it back.
#[derive(Debug, PartialEq, Eq)]
pub(crate) struct Content {
    pub(crate) from: String,
    pub(crate) body: String,
    pub(crate) in_reply_to: Option<i64>,
}

/// One pending row of an agent's inbox.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(crate) struct Queued {
    pub(crate) id: i64,
    /// The body's length in bytes (what the answer budget counts).
    pub(crate) len: usize,
    pub(crate) redelivered: bool,
    /// The content, unless it is to be read from the table.
    pub(crate) content: Option<Arc<Content>>,
}

#[derive(Debug, Default)]
struct Queue {
    /// Waiting, oldest first.
    waiting: VecDeque<Queued>,
    /// The body bytes of `waiting`.
    waiting_bytes: usize,
    /// Handed to a `recv` since the last ack, in the order handed out.
    inflight: Vec<Queued>,
}

impl Queue {
    fn holds(&self, id: i64) -> bool {
        self.inflight.iter().any(|q| q.id == id)
            || self.waiting.binary_search_by_key(&id, |q| q.id).is_ok()
    }

    /// Add `q` to the waiting rows, in id order.
    fn wait(&mut self, q: Queued) {
        self.waiting_bytes += q.len;
        let at = self.waiting.partition_point(|w| w.id < q.id);
        self.waiting.insert(at, q);
    }
}

#[derive(Debug, Default)]
struct Queues {
    by_agent: HashMap<Ident, Queue>,
    /// Body bytes held in `content`s.
    cached: usize,
}

impl Queues {
    fn release(&mut self, q: &Queued) {
        if let Some(c) = &q.content {
            self.cached = self.cached.saturating_sub(c.body.len());
        }
    }
}

#[derive(Debug, Default)]
pub(super) struct QueueState {
    queues: Mutex<Queues>,
    /// Ids handed out whose `popped_at` is not yet queued for the writer.
    marks: Mutex<Vec<i64>>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl QueueState {
    /// File a committed row of `to`'s inbox, in id order; a row already
    /// held is left as it is (filing is idempotent).
    pub(super) fn file(&self, to: &Ident, mut row: Queued) {
        let mut queues = lock(&self.queues);
        let fits = queues.cached + row.len <= BODY_CACHE_BYTES;
        if !fits {
            row.content = None;
        }
        // Looked up first: `entry` would copy the name for every send.
        if !queues.by_agent.contains_key(to) {
            queues.by_agent.insert(to.clone(), Queue::default());
        }
        let Some(queue) = queues.by_agent.get_mut(to) else {
            return;
        };
        if queue.holds(row.id) {
            return;
        }
        let cached = row.content.as_ref().map_or(0, |c| c.body.len());
        queue.wait(row);
        queues.cached += cached;
    }

    /// Put rows read from the table in their queues (at start, or an
    /// agent's harness starting): those marked popped in flight, the rest
    /// waiting; rows already held are left as they are.
    pub(super) fn load(&self, rows: Vec<QueuedRow>) {
        let mut queues = lock(&self.queues);
        for row in rows {
            let Ok(agent) = Ident::new(&row.recipient) else {
                tracing::warn!(
                    id = row.id,
                    "message {} is for {:?}, not an agent name; not queued",
                    row.id,
                    row.recipient
                );
                continue;
            };
            let queue = queues.by_agent.entry(agent).or_default();
            if queue.holds(row.id) {
                continue;
            }
            let q = Queued {
                id: row.id,
                len: usize::try_from(row.len).unwrap_or(usize::MAX),
                redelivered: row.redelivered,
                content: None,
            };
            if row.popped {
                queue.inflight.push(q);
            } else {
                queue.wait(q);
            }
        }
    }

    /// Hand out up to `max` of `agent`'s waiting rows, oldest first, whose
    /// bodies fit in `budget` bytes (the first always goes when `first` is
    /// free, i.e. nothing else is in the answer yet); they are in flight
    /// until [`QueueState::settle`] or [`QueueState::requeue`].
    pub(super) fn take(
        &self,
        agent: &Ident,
        max: usize,
        budget: usize,
        first: bool,
    ) -> Vec<Queued> {
        let mut queues = lock(&self.queues);
        let Some(queue) = queues.by_agent.get_mut(agent) else {
            return Vec::new();
        };
        let (mut n, mut used) = (0, 0usize);
        while n < queue.waiting.len().min(max) {
            used = used.saturating_add(queue.waiting[n].len);
            if used > budget && !(first && n == 0) {
                break;
            }
            n += 1;
        }
        let taken: Vec<Queued> = queue.waiting.drain(..n).collect();
        queue.waiting_bytes -= taken.iter().map(|q| q.len).sum::<usize>();
        queue.inflight.extend(taken.iter().cloned());
        taken
    }

    /// Put rows taken for an answer that could not be written back at the
    /// front, marked redelivered; their ids (a row acked meanwhile is not
    /// among them).
    pub(super) fn give_back(&self, agent: &Ident, ids: &[i64]) -> Vec<i64> {
        self.back(agent, |q| ids.contains(&q.id))
    }

    /// Every in-flight row of `agent` waits again, first, marked
    /// redelivered; their ids.
    pub(super) fn requeue(&self, agent: &Ident) -> Vec<i64> {
        self.back(agent, |_| true)
    }

    fn back(&self, agent: &Ident, pick: impl Fn(&Queued) -> bool) -> Vec<i64> {
        let mut queues = lock(&self.queues);
        let Some(queue) = queues.by_agent.get_mut(agent) else {
            return Vec::new();
        };
        let (back, kept): (Vec<_>, Vec<_>) = queue.inflight.drain(..).partition(|q| pick(q));
        queue.inflight = kept;
        let ids = back.iter().map(|q| q.id).collect();
        for mut q in back {
            q.redelivered = true;
            queue.wait(q);
        }
        ids
    }

    /// Take `agent`'s in-flight rows to be acked; if the ack cannot be
    /// written, [`QueueState::unsettle`] puts them back.
    pub(super) fn settle(&self, agent: &Ident) -> Vec<Queued> {
        let mut queues = lock(&self.queues);
        let Some(queue) = queues.by_agent.get_mut(agent) else {
            return Vec::new();
        };
        let settled = std::mem::take(&mut queue.inflight);
        settled.iter().for_each(|q| queues.release(q));
        settled
    }

    /// Rows whose ack failed are in flight again.
    pub(super) fn unsettle(&self, agent: &Ident, rows: Vec<Queued>) {
        let mut queues = lock(&self.queues);
        let queue = queues.by_agent.entry(agent.clone()).or_default();
        let mut rows: Vec<Queued> = rows.into_iter().filter(|q| !queue.holds(q.id)).collect();
        for q in &mut rows {
            q.content = None;
        }
        queue.inflight.splice(0..0, rows);
    }

    /// How many rows wait for `agent` (not counting those in flight).
    pub(super) fn waiting(&self, agent: &Ident) -> u64 {
        self.inbox_load(agent).messages
    }

    /// How many rows `agent`'s turn in progress holds (taken, not yet
    /// acknowledged).
    pub(super) fn in_flight(&self, agent: &Ident) -> u64 {
        let queues = lock(&self.queues);
        queues
            .by_agent
            .get(agent)
            .map_or(0, |q| q.inflight.len() as u64)
    }

    /// How full `agent`'s inbox is: the rows waiting (not those in flight)
    /// and their body bytes.
    pub(super) fn inbox_load(&self, agent: &Ident) -> InboxLoad {
        let queues = lock(&self.queues);
        let (messages, bytes) = queues
            .by_agent
            .get(agent)
            .map_or((0, 0), |q| (q.waiting.len(), q.waiting_bytes));
        InboxLoad {
            messages: messages as u64,
            bytes: bytes as u64,
        }
    }

    /// Forget `agent`'s queue (its rows were purged).
    pub(super) fn forget(&self, agent: &Ident) {
        let mut queues = lock(&self.queues);
        if let Some(queue) = queues.by_agent.remove(agent) {
            queue
                .waiting
                .iter()
                .chain(&queue.inflight)
                .for_each(|q| queues.release(q));
        }
    }

    /// Note ids handed out; true when the list was empty, so the caller
    /// queues one write to record them (which takes the list then).
    pub(super) fn mark(&self, ids: impl IntoIterator<Item = i64>) -> bool {
        let mut marks = lock(&self.marks);
        let was_empty = marks.is_empty();
        marks.extend(ids);
        was_empty && !marks.is_empty()
    }

    /// The ids noted since the last take.
    pub(super) fn take_marks(&self) -> Vec<i64> {
        std::mem::take(&mut lock(&self.marks))
    }
}

#[cfg(test)]
#[path = "queue_state_tests.rs"]
mod tests;
