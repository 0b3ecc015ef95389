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

use super::{HiveError, Usage};
use crate::hive::arguments;
use crate::wire::ident::Ident;
use crate::wire::live::{LiveChange, LiveTurn, TurnProgress};

impl Usage {
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
        self.state.live.progress(agent, progress, dropped, now_ms);
        Ok(())
    }

    /// `agent`'s turn in progress, if its harness reported one.
    pub fn live_turn(&self, agent: &Ident) -> Option<LiveTurn> {
        self.state.live.current(agent)
    }

    /// Every agent's live-turn changes from now on. A receiver that lags
    /// loses changes, never blocks; [`Usage::live_turn`] has the state.
    pub fn subscribe_live(&self) -> broadcast::Receiver<Arc<LiveChange>> {
        self.state.live.subscribe()
    }

    /// `agent`'s turn ended without a report (its harness starting again,
    /// or giving a failed turn's messages back).
    pub(crate) fn end_unreported_turn(&self, agent: &Ident) {
        self.state.live.end(agent, None);
    }
}

#[cfg(test)]
#[path = "live_tests.rs"]
mod tests;
