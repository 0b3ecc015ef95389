//! `interrupt`: the operator ends an agent's turn in progress. The agent's
//! harness waits on `await_interrupt` for as long as each turn runs; an
//! interrupt answers that wait, and the harness stops Claude's process
//! group, reports the turn `interrupted` and acknowledges its messages
//! (they were read; the operator chose to end the work on them). A note
//! goes to the agent's inbox as a message from `operator`, so it is the
//! agent's next prompt.
//!
//! Decision: "a turn is in progress" is known by the one process that runs
//! it, saying so by waiting; the daemon keeps only who waits, in memory.
//! Nothing is stored: a daemon restart ends every wait and the harness
//! waits again. Rejected: reading it from the inbox's in-flight messages,
//! which a harness that popped and died leaves behind (an interrupt would
//! be answered for a turn no one runs), and a flag the next turn would
//! find.

use std::collections::HashMap;
use std::future::Future;
use std::sync::{Mutex, MutexGuard, PoisonError};

use tokio::sync::watch;

use super::{HiveError, Usage};
use crate::wire::ident::Ident;

/// Who waits for an interrupt, per agent.
#[derive(Debug, Default)]
pub(super) struct InterruptState {
    turns: Mutex<HashMap<Ident, Waiting>>,
}

#[derive(Debug)]
struct Waiting {
    /// Open `await_interrupt`s (a harness has one; a second one, say after
    /// a reconnect the daemon has not noticed yet, is as good).
    waiters: usize,
    /// Bumped by each interrupt.
    signal: watch::Sender<u64>,
}

fn lock<T>(m: &Mutex<T>) -> MutexGuard<'_, T> {
    m.lock().unwrap_or_else(PoisonError::into_inner)
}

/// One wait, counted while it lives.
struct WaitGuard<'a> {
    state: &'a InterruptState,
    name: Ident,
}

impl Drop for WaitGuard<'_> {
    fn drop(&mut self) {
        let mut turns = lock(&self.state.turns);
        if let Some(w) = turns.get_mut(&self.name) {
            w.waiters = w.waiters.saturating_sub(1);
            if w.waiters == 0 {
                turns.remove(&self.name);
            }
        }
    }
}

impl InterruptState {
    fn wait(&self, name: &Ident) -> (watch::Receiver<u64>, WaitGuard<'_>) {
        let mut turns = lock(&self.turns);
        let w = turns.entry(name.clone()).or_insert_with(|| Waiting {
            waiters: 0,
            signal: watch::channel(0).0,
        });
        w.waiters += 1;
        let guard = WaitGuard {
            state: self,
            name: name.clone(),
        };
        (w.signal.subscribe(), guard)
    }

    fn in_turn(&self, name: &Ident) -> bool {
        lock(&self.turns).contains_key(name)
    }

    /// Answer `name`'s waits; `false` when none is open.
    fn interrupt(&self, name: &Ident) -> bool {
        match lock(&self.turns).get(name) {
            Some(w) => {
                w.signal.send_modify(|n| *n = n.wrapping_add(1));
                true
            }
            None => false,
        }
    }
}

impl Usage {
    /// The harness of agent `me`, for the length of a turn: `true` when the
    /// operator interrupts it, `false` when `gone` resolves first (the
    /// client hung up or the daemon stops).
    pub async fn await_interrupt(
        &self,
        me: &Ident,
        gone: impl Future<Output = ()>,
    ) -> Result<bool, HiveError> {
        let (mut signal, _counted) = self.state.interrupts.wait(me);
        tokio::select! {
            changed = signal.changed() => Ok(changed.is_ok()),
            () = gone => Ok(false),
        }
    }

    /// End agent `name`'s turn in progress (see the module docs); `note`,
    /// if any, is queued first as the agent's next message.
    pub async fn interrupt(&self, name: &Ident, note: Option<String>) -> Result<(), HiveError> {
        self.require(name).await?;
        if !self.state.interrupts.in_turn(name) {
            return Err(HiveError::NoTurn(name.clone()));
        }
        if let Some(note) = note {
            self.state
                .messaging
                .send_from_operator(name, None, note)
                .await?;
        }
        if self.state.interrupts.interrupt(name) {
            tracing::info!(agent = %name, "{name}: turn interrupted by the operator");
        } else {
            tracing::info!(agent = %name, "{name}: its turn ended by itself before the interrupt");
        }
        Ok(())
    }
}

#[cfg(test)]
#[path = "interrupt_tests.rs"]
mod tests;
