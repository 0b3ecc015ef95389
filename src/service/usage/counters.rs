//! Each agent's counters since the daemon started, for `/metrics`: its
//! turns by outcome with their reported tokens and cost, fed by every turn
//! the room keeps, and its metered requests (the spend), fed by every row
//! the meter commits.
//!
//! Decision: in memory, starting at zero with the daemon, as a Prometheus
//! counter of any process does (`rate()` takes a restart as a reset).
//! Rejected: sums over the turn journal, which is pruned per agent, so a
//! counter read from it would go down.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};

use super::Usage;
use crate::wire::ident::Ident;
use crate::wire::model_log::{MeterRow, MeteredUsage};
use crate::wire::turns::TurnReport;

/// One agent's counters since the daemon started: `metered` is what it
/// spent, the rest what its turns reported.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct TurnCounters {
    /// Turns by outcome (`ok`, `failed`, `killed`).
    pub outcomes: BTreeMap<&'static str, u64>,
    pub input_tokens: u64,
    pub output_tokens: u64,
    pub cache_read_tokens: u64,
    pub cache_creation_tokens: u64,
    pub cost_micro_usd: u64,
    /// Its requests through the model gateway.
    pub metered: MeteredUsage,
}

/// The counters, by agent (destroyed agents included).
#[derive(Debug, Default)]
pub(super) struct Counters {
    turns: Mutex<BTreeMap<Ident, TurnCounters>>,
}

impl Counters {
    /// Count a turn `agent` reported.
    fn turn(&self, agent: &Ident, report: &TurnReport) {
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        let t = turns.entry(agent.clone()).or_default();
        *t.outcomes.entry(report.outcome.as_str()).or_default() += 1;
        if let Some(u) = &report.usage {
            t.input_tokens += u.input_tokens;
            t.output_tokens += u.output_tokens;
            t.cache_read_tokens += u.cache_read_input_tokens;
            t.cache_creation_tokens += u.cache_creation_input_tokens;
        }
        t.cost_micro_usd += report.cost_micro_usd.unwrap_or(0);
    }

    /// Count a request of `agent` the meter committed.
    fn request(&self, agent: &Ident, row: &MeterRow) {
        let mut turns = self.turns.lock().unwrap_or_else(PoisonError::into_inner);
        let priced = row.cost_micro_usd.is_some() || row.tokens.total() == 0;
        turns
            .entry(agent.clone())
            .or_default()
            .metered
            .add(&MeteredUsage {
                requests: 1,
                tokens: row.tokens,
                cost_micro_usd: row.cost_micro_usd.unwrap_or(0),
                unpriced: u64::from(!priced),
            });
    }
}

impl Usage {
    /// Every agent's turn counters since the daemon started.
    pub fn turn_counters(&self) -> BTreeMap<Ident, TurnCounters> {
        self.state
            .counters
            .turns
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    /// Count a request of `agent`'s the meter committed.
    pub(super) fn count_request(&self, agent: &Ident, row: &MeterRow) {
        self.state.counters.request(agent, row);
    }

    /// Count `reports` of `agent`'s turns, already in the journal.
    pub(super) fn count(&self, agent: &Ident, reports: &[TurnReport]) {
        for report in reports {
            self.state.counters.turn(agent, report);
        }
    }
}
