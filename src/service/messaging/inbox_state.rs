//! The inboxes' state in memory, owned here and reached only through these
//! methods: each agent's wake-up handle (what a long-polling `recv` waits
//! on), each agent's transient wakes (`wake {transient: true}`: memory
//! only, lost on restart by design), and the operator's view version (what
//! the dashboard's inbox and questions wait on).
//!
//! Decision: one owner, so every lock of these fields is in this file; it
//! knows nothing of the store or of the rest of the room: the room
//! commits a message, then asks this part to wake its recipient.
//! Rejected: the maps on the hive itself, where any of the service's files
//! could lock them.

use std::collections::{HashMap, VecDeque};
use std::sync::{Arc, Mutex, MutexGuard, PoisonError};

use tokio::sync::{Notify, watch};

use crate::hive::Recipient;
use crate::wire::agent::DeliveredMessage;
use crate::wire::ident::Ident;

/// Transient wakes kept per agent; past this (or `transient_max_bytes`)
/// the oldest are dropped.
const TRANSIENT_CAP: usize = 1000;

#[derive(Debug)]
pub(super) struct InboxState {
    /// Per-agent inbox wake-ups for long-polling `recv`.
    wakers: Mutex<HashMap<Ident, Arc<Notify>>>,
    /// Per-agent transient wakes, oldest first.
    transient: Mutex<HashMap<Ident, VecDeque<DeliveredMessage>>>,
    /// Bumped when the operator's inbox or the open questions change.
    operator_view: watch::Sender<u64>,
}

impl Default for InboxState {
    fn default() -> Self {
        Self {
            wakers: Mutex::default(),
            transient: Mutex::default(),
            operator_view: watch::Sender::new(0),
        }
    }
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

impl InboxState {
    /// The wake-up handle of an agent's inbox (one per agent, made on first
    /// use).
    pub(super) fn waker(&self, name: &Ident) -> Arc<Notify> {
        let mut wakers = lock(&self.wakers);
        // Looked up before `entry`, which needs an owned key: a name copied
        // on every send and every `recv` was a visible cost (issue 31).
        if let Some(waker) = wakers.get(name) {
            return Arc::clone(waker);
        }
        Arc::clone(wakers.entry(name.clone()).or_default())
    }

    /// Wake whoever waits on `to`'s inbox: an agent's long polls, or the
    /// operator's live views.
    pub(super) fn wake(&self, to: &Recipient) {
        match to {
            Recipient::Agent(name) => self.waker(name).notify_waiters(),
            Recipient::Operator => self.operator_view_changed(),
        }
    }

    /// The operator's inbox or the open questions changed.
    fn operator_view_changed(&self) {
        self.operator_view.send_modify(|v| *v = v.wrapping_add(1));
    }

    /// A new version each time the operator's view changes.
    pub(super) fn watch_operator_view(&self) -> watch::Receiver<u64> {
        self.operator_view.subscribe()
    }

    /// Queue a transient wake for `agent` (the oldest dropped past
    /// [`TRANSIENT_CAP`] or `cap_bytes`); the caller wakes its waiters.
    pub(super) fn push_transient(
        &self,
        agent: &Ident,
        message: DeliveredMessage,
        cap_bytes: usize,
    ) {
        let mut queues = lock(&self.transient);
        let queue = queues.entry(agent.clone()).or_default();
        let mut held: usize = queue.iter().map(|m| m.body.len()).sum();
        let size = message.body.len();
        while !queue.is_empty() && (queue.len() >= TRANSIENT_CAP || held + size > cap_bytes) {
            if let Some(old) = queue.pop_front() {
                held -= old.body.len();
            }
            tracing::warn!(
                agent = %agent,
                "{agent}: transient wakes over {TRANSIENT_CAP} or {cap_bytes} bytes (transient_max_bytes); \
                 dropped the oldest"
            );
        }
        queue.push_back(message);
    }

    /// Take up to `max` of `agent`'s transient wakes, oldest first, within
    /// `budget` bytes of bodies (the first always goes).
    pub(super) fn take_transient(
        &self,
        agent: &Ident,
        max: u32,
        budget: usize,
    ) -> Vec<DeliveredMessage> {
        let mut queues = lock(&self.transient);
        let Some(q) = queues.get_mut(agent) else {
            return Vec::new();
        };
        let (mut n, mut used) = (0, 0usize);
        while n < q.len().min(max as usize) {
            used += q[n].body.len();
            if used > budget && n > 0 {
                break;
            }
            n += 1;
        }
        q.drain(..n).collect()
    }

    /// Put taken transient wakes back at the front of `agent`'s queue.
    pub(super) fn requeue_transient(&self, agent: &Ident, messages: Vec<DeliveredMessage>) {
        if messages.is_empty() {
            return;
        }
        let mut queues = lock(&self.transient);
        let queue = queues.entry(agent.clone()).or_default();
        for m in messages.into_iter().rev() {
            queue.push_front(m);
        }
    }

    /// How many transient wakes `agent` has queued.
    pub(super) fn transient_count(&self, agent: &Ident) -> u64 {
        lock(&self.transient)
            .get(agent)
            .map_or(0, |q| q.len() as u64)
    }

    /// Forget `agent`'s transient wakes (it was destroyed).
    pub(super) fn drop_transient(&self, agent: &Ident) {
        lock(&self.transient).remove(agent);
    }
}
