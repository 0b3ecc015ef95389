//! The egress audit (issue 44): every connection an agent makes through
//! the hive's egress proxy, kept in the hive's store per agent and shown by
//! `hivectl egress-log` (host.sock `egress_log`).
//!
//! Before it, the only record was the egress service's journal lines, and
//! journald rate-limits per unit: the service is one unit for every agent,
//! so enough agents flooding together (the service's per-agent line budget
//! holds about 25 of them) still pushed everyone's lines out, and the
//! operator had no view of one agent's egress.
//!
//! The path: the daemon (`server::egress_socket`) is on every connection,
//! knows the agent from its socket, counts the bytes and the time; the
//! egress service says its verdict in-band
//! ([`crate::wire::egress_audit::VerdictLine`]). When a connection ends the
//! daemon calls [`Hive::record_egress`]; the record waits here at most
//! [`FLUSH_EVERY`] (or until [`FLUSH_ROWS`] wait) and all of them are
//! written in one job of the store's writer: one transaction, which also
//! trims each agent written for to its newest `egress_audit_rows_per_agent`
//! rows (`store::egress_log`). Rejected: a row written per connection (a
//! commit each, thousands a second under a 429 flood) and rows kept in
//! memory only (lost with the daemon, which an attacker can wait for).
//!
//! Bounded everywhere, per agent: refusals of one agent, verdict and
//! target in one minute are one row with a count (also while waiting
//! here), and an agent with more than its bound waiting drops its own
//! oldest (the write would delete them anyway), so no agent's records can
//! displace another's, in memory or in the table.
//!
//! Kept by a plain `destroy`, deleted by `destroy --purge`, as the turn
//! journal and the crash records are (`store::purge`): the audit of what an
//! agent did must outlive the agent, or destroying it would erase its
//! exfiltration; a re-spawn of the same name sees it, and `egress-log`
//! reads a destroyed agent's rows until they are purged. Its rows are
//! bounded per name, so what a destroy keeps is bounded too.
//!
//! What waits here when the daemon stops (at most [`FLUSH_EVERY`] of it) is
//! lost; the egress service's journal lines still have it.

use std::collections::{HashMap, VecDeque};
use std::sync::{Mutex, PoisonError};
use std::time::Duration;

use super::{Hive, HiveError};
use crate::hive::arguments;
use crate::store::{StoreError, agents, egress_log};
use crate::wire::egress_audit::{EgressLogRow, EgressRecord};
use crate::wire::ident::Ident;

/// How long a record waits before it is written: a few writes a second at
/// most, whatever the connection rate.
pub const FLUSH_EVERY: Duration = Duration::from_millis(250);

/// Records waiting that make the write happen at once.
pub const FLUSH_ROWS: usize = 512;

/// How many of an agent's newest waiting records a new one may be counted
/// into: a flood alternates between a few verdicts and targets.
const MERGE_LOOK: usize = 8;

/// The records not yet written, and whether a write is scheduled.
#[derive(Debug, Default)]
pub(super) struct EgressAuditState {
    pending: Mutex<Pending>,
    full: tokio::sync::Notify,
}

impl EgressAuditState {
    fn pending(&self) -> std::sync::MutexGuard<'_, Pending> {
        // A panic while holding it leaves whole records, nothing half-made.
        self.pending.lock().unwrap_or_else(PoisonError::into_inner)
    }
}

/// Records per agent, each tagged with its arrival, so the write keeps the
/// order they came in.
#[derive(Debug, Default)]
pub(super) struct Pending {
    agents: HashMap<Ident, VecDeque<(u64, EgressRecord)>>,
    arrived: u64,
    rows: usize,
    scheduled: bool,
}

impl Pending {
    /// Take `record`: counted into one of its agent's last [`MERGE_LOOK`]
    /// waiting ones that absorbs it (which then comes last), else added;
    /// past `keep` waiting for
    /// its agent, that agent's oldest goes. (The write counts exactly, by
    /// the table's index; this only keeps a flood small while it waits.)
    pub(super) fn add(&mut self, record: EgressRecord, keep: usize) {
        let queue = self.agents.entry(record.agent.clone()).or_default();
        self.arrived += 1;
        let from = queue.len().saturating_sub(MERGE_LOOK);
        if let Some(at) = (from..queue.len())
            .rev()
            .find(|&i| queue[i].1.absorbs(&record))
            && let Some((_, mut into)) = queue.remove(at)
        {
            // To the back, as the table moves a counted row to the newest
            // place.
            into.absorb(&record);
            queue.push_back((self.arrived, into));
            return;
        }
        queue.push_back((self.arrived, record));
        self.rows += 1;
        if queue.len() > keep.max(1) {
            queue.pop_front();
            self.rows -= 1;
        }
    }

    /// Records waiting.
    pub(super) fn rows(&self) -> usize {
        self.rows
    }

    /// Every waiting record, in the order they came.
    pub(super) fn take(&mut self) -> Vec<EgressRecord> {
        let mut all: Vec<_> = self.agents.drain().flat_map(|(_, q)| q).collect();
        all.sort_unstable_by_key(|(arrived, _)| *arrived);
        self.rows = 0;
        all.into_iter().map(|(_, r)| r).collect()
    }
}

impl Hive {
    /// Record one egress connection of `record.agent` (or refusals of it,
    /// `count`): written within [`FLUSH_EVERY`]. Never waits; call it from
    /// a task of the runtime (it may start the write's task).
    pub fn record_egress(&self, record: EgressRecord) {
        let keep = self.egress_keep() as usize;
        let state = &self.inner.egress_audit;
        let (schedule, full) = {
            let mut pending = state.pending();
            pending.add(record, keep);
            let schedule = !std::mem::replace(&mut pending.scheduled, true);
            (schedule, pending.rows() >= FLUSH_ROWS)
        };
        if schedule {
            let hive = self.clone();
            tokio::spawn(async move {
                let state = &hive.inner.egress_audit;
                tokio::select! {
                    () = tokio::time::sleep(FLUSH_EVERY) => {}
                    () = state.full.notified() => {}
                }
                hive.flush_egress().await;
            });
        }
        if full {
            state.full.notify_one();
        }
    }

    /// Write every waiting record now (the scheduled write, and tests).
    pub async fn flush_egress(&self) {
        let records = {
            let mut pending = self.inner.egress_audit.pending();
            pending.scheduled = false;
            pending.take()
        };
        if records.is_empty() {
            return;
        }
        let (n, keep) = (records.len(), self.egress_keep());
        // Taken and queued to the writer in one poll: writes keep the order
        // their records came in.
        let written = self
            .store()
            .run(move |c| egress_log::write(c, &records, keep))
            .await;
        if let Err(err) = written {
            tracing::error!("the egress audit could not write {n} records: {err}");
        }
    }

    fn egress_keep(&self) -> u32 {
        self.config().egress_audit_rows_per_agent.get()
    }

    /// Agent `name`'s newest `limit` egress records, oldest first. A
    /// destroyed agent's are kept until a purge; a name with neither rows
    /// nor an agent is unknown.
    pub async fn egress_log(
        &self,
        name: &Ident,
        limit: u32,
    ) -> Result<Vec<EgressLogRow>, HiveError> {
        arguments::check_egress_log_limit(limit)?;
        self.kept_rows(name, move |c, n| egress_log::recent(c, n, limit))
            .await
    }

    /// The rows `read` finds of agent `name` in a log kept past its
    /// destroy (until a purge): a name with neither rows nor an agent is
    /// unknown. One read, so a purge cannot fall between the two.
    pub(super) async fn kept_rows<R, F>(&self, name: &Ident, read: F) -> Result<Vec<R>, HiveError>
    where
        R: Send + 'static,
        F: FnOnce(&rusqlite::Connection, &Ident) -> Result<Vec<R>, StoreError> + Send + 'static,
    {
        let n = name.clone();
        let (rows, managed) = self
            .store()
            .read(move |c| Ok((read(c, &n)?, agents::get(c, &n)?.is_some())))
            .await?;
        if rows.is_empty() && !managed {
            return Err(HiveError::UnknownAgent(name.clone()));
        }
        Ok(rows)
    }
}

#[cfg(test)]
#[path = "egress_audit_tests.rs"]
mod tests;
