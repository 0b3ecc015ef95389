//! The live turn: what each agent is doing now, as its harness reports it
//! during the turn (verb `turn_progress`), for the agent page's stream and
//! `hivectl turns -f` (host.sock `turns` with `follow`). The state is
//! `live_state`'s; this file checks what comes in and ends a turn when
//! its report is kept (`report_turn`) or its harness starts again.
//!
//! Decision: fire-and-forget from the harness, checked here like any
//! agent input (`hive::arguments::check_turn_progress`), never stored.
//! The harness queues a few events and drops the rest when the daemon is
//! slow, so a turn never waits on its view.

use std::sync::Arc;

use tokio::sync::broadcast;

use super::{Hive, HiveError};
use crate::hive::arguments;
use crate::wire::ident::Ident;
use crate::wire::live::{LiveChange, LiveTurn, TurnProgress};
use crate::wire::turns::TurnRow;

impl Hive {
    /// One progress event of `agent`'s turn in progress; `dropped` is how
    /// many its harness dropped before it.
    pub fn turn_progress(
        &self,
        agent: &Ident,
        progress: TurnProgress,
        dropped: u64,
    ) -> Result<(), HiveError> {
        arguments::check_turn_progress(&progress)?;
        let now_ms = self.now().saturating_mul(1000);
        self.inner.live.progress(agent, progress, dropped, now_ms);
        Ok(())
    }

    /// `agent`'s turn in progress, if its harness reported one.
    pub fn live_turn(&self, agent: &Ident) -> Option<LiveTurn> {
        self.inner.live.current(agent)
    }

    /// Every agent's live-turn changes from now on. A receiver that lags
    /// loses changes, never blocks; [`Hive::live_turn`] has the state.
    pub fn subscribe_live(&self) -> broadcast::Receiver<Arc<LiveChange>> {
        self.inner.live.subscribe()
    }

    /// Every popped-unacked message of `agent` waits again (the messaging
    /// room's `requeue_inflight`), and the turn it did not report is over:
    /// a harness starting (or giving a failed turn's messages back) has no
    /// turn in progress. The agent's door calls this; it composes two
    /// concerns, so it is the façade's, not the room's (the room knows
    /// nothing of live turns).
    pub async fn requeue_inflight(&self, agent: &Ident) -> Result<usize, HiveError> {
        let count = self.messaging().requeue_inflight(agent).await?;
        self.end_live_turn(agent, None);
        Ok(count)
    }

    /// `agent`'s turn ended (reported as `row`, or not reported at all).
    pub(super) fn end_live_turn(&self, agent: &Ident, row: Option<TurnRow>) {
        self.inner.live.end(agent, row);
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
