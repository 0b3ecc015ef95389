//! The replies room: the answers kept for repeated requests (issue 47,
//! "nothing done twice"). A request that acts ([`crate::wire::agent::Request::keyed`]) may
//! carry an idempotency key; the harness derives it from the turn and the
//! call (`agent::idempotency`), so a cut turn's resumed attempt that
//! repeats a call repeats its key. The door ([`crate::server`]'s agent
//! socket) asks this room before serving such a request: a key answered
//! before gets that first answer and nothing is done again.
//!
//! It follows the messaging room's pattern (one struct, [`Replies`], its
//! handles given at construction); it needs no other room.
//!
//! # What is in this room, and why
//! - The kept answers (`store::replies`, per agent, bounded): read by
//!   [`Replies::recall`], written by [`Replies::remember`] after an act
//!   that could not write its row itself.
//! - The keys being served now ([`Replies::hold`]): a repeat that arrives
//!   while its first is still being served (a resumed attempt can start
//!   while the daemon still serves the cut attempt's last call, say a
//!   container restart) waits for it and then finds its answer, instead of
//!   acting beside it. Per `(agent, key)`, so one slow call holds nothing
//!   else up. In memory: after a daemon restart nothing is being served.
//!
//! # Where the row is written
//! The best place is the act's own transaction: then a crash between the
//! act and its row cannot happen, and a repeat can never act twice. The
//! broker's `send` does that (`Messaging::send_once` writes its message
//! rows and the kept answer in one commit). Every other act (questions,
//! reminders, approvals, schedules, lifecycle) commits through its own
//! service call, so its row is written by [`Replies::remember`] right
//! after the act answered: a daemon killed between the two commits (a few
//! milliseconds) has acted without keeping the answer, and a repeat of
//! that key acts again. Rejected for now: threading a key through each of
//! those calls' transactions (a dozen signatures for a window the broker's
//! path, the one a turn uses most, does not have).
//!
//! An error answer is not kept: a refused request did not act (a full
//! inbox, an unknown agent), so its repeat is served again and may succeed.

use std::collections::HashMap;
use std::sync::{Arc, Mutex, PoisonError};

use tokio::sync::OwnedMutexGuard;

use super::HiveError;
use crate::clock::SharedClock;
use crate::store::{Store, replies};
use crate::wire::agent::Response;
use crate::wire::ident::Ident;

/// The room. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Replies {
    state: Arc<State>,
}

/// An agent and one of its keys.
type AgentKey = (Ident, String);

#[derive(Debug)]
struct State {
    store: Store,
    clock: SharedClock,
    /// The keys being served now, each with the lock its serving holds
    /// (an entry lives while someone holds or waits for it).
    serving: Mutex<HashMap<AgentKey, Arc<tokio::sync::Mutex<()>>>>,
}

/// A key being served: dropped when its answer is out (or kept).
#[derive(Debug)]
pub struct Held {
    state: Arc<State>,
    key: AgentKey,
    guard: Option<OwnedMutexGuard<()>>,
}

impl Drop for Held {
    fn drop(&mut self) {
        drop(self.guard.take());
        let mut serving = self
            .state
            .serving
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        // Only the map's own handle left: nobody waits for this key.
        if serving
            .get(&self.key)
            .is_some_and(|lock| Arc::strong_count(lock) == 1)
        {
            serving.remove(&self.key);
        }
    }
}

impl Replies {
    pub fn open(store: Store, clock: SharedClock) -> Self {
        Self {
            state: Arc::new(State {
                store,
                clock,
                serving: Mutex::default(),
            }),
        }
    }

    fn now_ms(&self) -> i64 {
        self.state.clock.now_unix().saturating_mul(1000)
    }

    /// Mark `agent`'s `key` as being served, waiting while it already is.
    pub async fn hold(&self, agent: &Ident, key: &str) -> Held {
        let entry = (agent.clone(), key.to_owned());
        let lock = Arc::clone(
            self.state
                .serving
                .lock()
                .unwrap_or_else(PoisonError::into_inner)
                .entry(entry.clone())
                .or_default(),
        );
        let guard = lock.lock_owned().await;
        Held {
            state: Arc::clone(&self.state),
            key: entry,
            guard: Some(guard),
        }
    }

    /// The first answer to `agent`'s `key`, if one is kept. A row that is
    /// not a `Response` this build reads (a newer daemon's, after a
    /// downgrade) is no answer: the request is served.
    pub async fn recall(&self, agent: &Ident, key: &str) -> Result<Option<Response>, HiveError> {
        let (agent, key, now) = (agent.clone(), key.to_owned(), self.now_ms());
        let kept = self
            .state
            .store
            .read(move |c| replies::recall(c, &agent, &key, now))
            .await?;
        Ok(kept.and_then(|text| match serde_json::from_str(&text) {
            Ok(answer) => Some(answer),
            Err(e) => {
                tracing::warn!("a kept answer does not read ({e}); the request is served again");
                None
            }
        }))
    }

    /// Keep `answer` as the first answer to `agent`'s `key`; an error
    /// answer is not kept (see the module docs).
    pub async fn remember(
        &self,
        agent: &Ident,
        key: &str,
        answer: &Response,
    ) -> Result<(), HiveError> {
        if matches!(answer, Response::Err { .. }) {
            return Ok(());
        }
        let text = serde_json::to_string(answer).unwrap_or_default();
        let (agent, key, now) = (agent.clone(), key.to_owned(), self.now_ms());
        self.state
            .store
            .run(move |c| replies::remember(c, &agent, &key, &text, now))
            .await?;
        Ok(())
    }
}

#[cfg(test)]
#[path = "replies_tests.rs"]
mod tests;
