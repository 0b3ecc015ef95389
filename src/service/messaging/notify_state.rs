//! The events waiting for `notify_command`: fair per agent, deduplicated
//! before they take a place.
//!
//! Decisions (issue 44: one agent's approval spam filled the old 64-slot
//! channel, whose deduplication ran only as the worker read it, and bob's
//! approval was dropped with 1,036 others):
//! - **Deduplicated at the door**: an event of the same name for the same
//!   agent accepted less than the interval ago is dropped at once
//!   ([`Pushed::TooSoon`]), so a flood costs nothing queued.
//! - **A place per agent, a turn per agent**: each agent has its own small
//!   queue holding at most one event per event name (a newer one, past the
//!   interval while the older still waits, replaces it in its place: the
//!   operator hears the latest), and the worker takes one event per agent
//!   in turn from a FIFO of agents with something waiting. What waits is
//!   thus bounded by agents × event names, and one agent's events never
//!   drop, nor hold back by more than one run, another's. Rejected: a
//!   bigger channel (a flood fills any size) and a global cap that drops
//!   the newest (the victim is whoever comes after the flood).
//! - Time is the hive's clock (unix seconds, each event's `at`), so a test
//!   moves it.

use std::collections::{HashMap, VecDeque};
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Mutex, PoisonError};

use tokio::sync::Notify;

use crate::wire::ident::Ident;
use crate::wire::notify::Notification;

/// The queue, its doorbell, and whether a worker took it.
#[derive(Debug, Default)]
pub(super) struct NotifyState {
    queue: Mutex<NotifyQueue>,
    ready: Notify,
    taken: AtomicBool,
}

impl NotifyState {
    /// Queue `n` unless the same event for the same agent was accepted
    /// within `interval` seconds; ring the worker.
    pub(super) fn push(&self, n: Notification, interval: i64) -> Pushed {
        let pushed = self
            .queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(n, interval);
        if pushed != Pushed::TooSoon {
            // A permit is kept when the worker is not waiting yet.
            self.ready.notify_one();
        }
        pushed
    }

    /// The next event, one agent after another.
    pub(super) fn pop(&self) -> Option<Notification> {
        self.queue
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .pop()
    }

    /// Resolves once something was queued since the last wake.
    pub(super) async fn ready(&self) {
        self.ready.notified().await;
    }

    /// True once: the first worker takes the queue.
    pub(super) fn take(&self) -> bool {
        !self.taken.swap(true, Ordering::SeqCst)
    }
}

/// What [`NotifyQueue::push`] did with an event.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Pushed {
    /// Waits at the back of its agent's queue.
    Queued,
    /// Took the place of the same event of that agent, not yet run.
    Replaced,
    /// The same event for that agent was accepted within the interval:
    /// dropped, taking no place.
    TooSoon,
}

/// The per-agent queues (see the module docs).
#[derive(Debug, Default)]
pub(super) struct NotifyQueue {
    /// When each (event name, agent) was last accepted.
    last: HashMap<(&'static str, Ident), i64>,
    /// Each agent's waiting events, oldest first, one per event name.
    waiting: HashMap<Ident, VecDeque<Notification>>,
    /// The agents with something waiting, in turn order.
    turns: VecDeque<Ident>,
}

/// `last` is swept of entries older than the interval past this size.
const SWEEP_AT: usize = 4096;

impl NotifyQueue {
    pub(super) fn push(&mut self, n: Notification, interval: i64) -> Pushed {
        let agent = n.event.agent().clone();
        let key = (n.event.name(), agent.clone());
        if self
            .last
            .get(&key)
            .is_some_and(|t| n.at.saturating_sub(*t) < interval)
        {
            return Pushed::TooSoon;
        }
        if self.last.len() >= SWEEP_AT {
            self.last.retain(|_, t| n.at.saturating_sub(*t) < interval);
        }
        self.last.insert(key, n.at);
        let queue = self.waiting.entry(agent.clone()).or_default();
        if let Some(older) = queue.iter_mut().find(|w| w.event.name() == n.event.name()) {
            *older = n;
            return Pushed::Replaced;
        }
        if queue.is_empty() {
            self.turns.push_back(agent);
        }
        queue.push_back(n);
        Pushed::Queued
    }

    /// The oldest event of the agent whose turn it is; that agent goes to
    /// the back if it has more.
    pub(super) fn pop(&mut self) -> Option<Notification> {
        let agent = self.turns.pop_front()?;
        let queue = self.waiting.get_mut(&agent)?;
        let next = queue.pop_front();
        if queue.is_empty() {
            self.waiting.remove(&agent);
        } else {
            self.turns.push_back(agent);
        }
        next
    }

    /// Events waiting.
    #[cfg(test)]
    pub(super) fn len(&self) -> usize {
        self.waiting.values().map(VecDeque::len).sum()
    }
}

#[cfg(test)]
#[path = "notify_state_tests.rs"]
mod tests;
