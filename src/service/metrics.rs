//! What the dashboard's `/metrics` exposes: a snapshot of the hive's
//! gauges (agents by state, inbox depths, pending approvals) read at
//! scrape time, and counters kept in memory since the daemon started (the
//! metered requests, tokens and cost, and the turns by outcome with what
//! they reported — the usage room's — and the hook-to-roster latency,
//! here).
//!
//! Decisions:
//! - **Counters live in memory and start at zero with the daemon**, as a
//!   Prometheus counter of any process does (`rate()` takes a restart as a
//!   reset). Rejected: sums over the turn journal, which is pruned per
//!   agent, so a counter read from it would go down.
//! - Gauges are read when scraped, from the roster (memory) and two SQLite
//!   reads; nothing is kept for them.
//! - The text format is the door's (`web::metrics`); this file holds numbers.

use std::collections::BTreeMap;
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

pub use super::usage::TurnCounters;
use super::{Hive, HiveError};
use crate::store::{approvals, messages};
use crate::wire::ident::Ident;

/// Upper bounds (seconds) of the hook-to-roster histogram's buckets.
pub const HOOK_LATENCY_BOUNDS: &[f64] = &[
    0.000_5, 0.001, 0.002_5, 0.005, 0.01, 0.025, 0.05, 0.1, 0.25, 0.5, 1.0,
];

/// A Prometheus histogram: per bound, the observations at most it
/// (cumulative when rendered), their sum and count.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct Histogram {
    /// Observations per bucket of [`HOOK_LATENCY_BOUNDS`] (not cumulative;
    /// those over the last bound count only in `count`).
    pub buckets: Vec<u64>,
    pub sum: f64,
    pub count: u64,
}

impl Histogram {
    fn observe(&mut self, seconds: f64) {
        self.buckets.resize(HOOK_LATENCY_BOUNDS.len(), 0);
        if let Some(i) = HOOK_LATENCY_BOUNDS.iter().position(|b| seconds <= *b) {
            self.buckets[i] += 1;
        }
        self.sum += seconds;
        self.count += 1;
    }

    /// `(bound, observations at most bound)` per bucket, cumulative.
    pub fn cumulative(&self) -> Vec<(f64, u64)> {
        let mut total = 0;
        HOOK_LATENCY_BOUNDS
            .iter()
            .enumerate()
            .map(|(i, bound)| {
                total += self.buckets.get(i).copied().unwrap_or(0);
                (*bound, total)
            })
            .collect()
    }
}

/// The counter the façade keeps for `/metrics` (the turns' are the usage
/// room's).
#[derive(Debug, Default)]
pub(super) struct MetricsState {
    hook_latency: Mutex<Histogram>,
}

impl MetricsState {
    fn with<T>(&self, f: impl FnOnce(&mut Histogram) -> T) -> T {
        f(&mut self
            .hook_latency
            .lock()
            .unwrap_or_else(PoisonError::into_inner))
    }

    /// A hook payload reached the roster after `took`.
    pub(super) fn hook_reached_roster(&self, took: Duration) {
        self.with(|h| h.observe(took.as_secs_f64()));
    }
}

/// Agents by state, as the roster shows them.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub enum AgentState {
    Running,
    Failed,
    Stopped,
}

impl AgentState {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Running => "running",
            Self::Failed => "failed",
            Self::Stopped => "stopped",
        }
    }
}

/// Everything `/metrics` shows, read at one moment.
#[derive(Debug, Clone)]
pub struct MetricsSnapshot {
    /// Each managed agent, its state and its inbox depth (pending messages).
    pub agents: Vec<(Ident, AgentState, u64)>,
    /// Messages waiting for the operator.
    pub operator_inbox: u64,
    pub approvals_pending: u64,
    /// Turn counters since start, by agent (destroyed agents included).
    pub turns: BTreeMap<Ident, TurnCounters>,
    pub hook_latency: Histogram,
}

impl Hive {
    /// The numbers `/metrics` renders.
    pub async fn metrics(&self) -> Result<MetricsSnapshot, HiveError> {
        let roster = self.roster();
        let (depths, approvals_pending) = self
            .store()
            .read(|c| {
                Ok((
                    messages::pending_by_recipient(c)?,
                    approvals::pending_count(c)?,
                ))
            })
            .await?;
        let depth = |name: &str| depths.get(name).copied().unwrap_or(0);
        let agents = roster
            .rows()
            .iter()
            .map(|row| {
                let state = if row.running {
                    AgentState::Running
                } else if row.failed {
                    AgentState::Failed
                } else {
                    AgentState::Stopped
                };
                (row.name.clone(), state, depth(row.name.as_str()))
            })
            .collect();
        Ok(MetricsSnapshot {
            agents,
            operator_inbox: depth(crate::hive::OPERATOR),
            approvals_pending,
            turns: self.usage().turn_counters(),
            hook_latency: self.inner.metrics.with(|h| h.clone()),
        })
    }
}

#[cfg(test)]
#[path = "metrics_tests.rs"]
mod tests;
