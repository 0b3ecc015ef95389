//! The turn journal and usage: what each agent's turns took and cost, as
//! its harness reported them (verb `report_turn`), and the sums the
//! operator asks for (`turns`, `usage` on host.sock).
//!
//! Decision: the harness reports, the daemon keeps. Only `hive-agent run`
//! sees Claude Code's `result` event (its `usage` and `total_cost_usd`) and
//! the tool calls in the stream; the daemon checks the report's shape and
//! caps (`hive::arguments`) and trusts its numbers as the agent's own
//! account, the way a `send` is trusted to be the agent's words. Rejected:
//! reading transcripts from the host for headless turns, which would parse
//! a file the untrusted container writes for numbers the harness already
//! holds.

use std::collections::BTreeMap;

use super::{HiveError, Usage};
use crate::hive::arguments;
use crate::store::{agents, turns};
use crate::wire::ident::Ident;
use crate::wire::turns::{TurnReport, TurnRow, UsageBy, UsageRow};

impl Usage {
    /// Keep a turn `agent`'s harness reported; committed, and the spend
    /// caps evaluated, before the answer, so whatever asks next already
    /// sees it. Answers the turn's id.
    pub async fn report_turn(&self, agent: &Ident, report: TurnReport) -> Result<i64, HiveError> {
        arguments::check_turn_report(&report)?;
        let n = agent.clone();
        let counted = report.clone();
        let kept = report.clone();
        let id = self
            .state
            .store
            .run_as(move |c| {
                if agents::get(c, &n)?.is_none() {
                    return Err(HiveError::UnknownAgent(n));
                }
                Ok(turns::insert(c, &n, &report)?)
            })
            .await?;
        self.count(agent, std::slice::from_ref(&counted));
        let row = TurnRow {
            id,
            agent: agent.clone(),
            report: kept,
        };
        self.state.live.end(agent, Some(row));
        tracing::debug!(agent = %agent, turn = id, "turn reported");
        // Before the answer (and so before the turn's ack): the next
        // `recv` already meets a budget this turn reached.
        if let Err(err) = self.check_spend(true).await {
            tracing::error!(agent = %agent, "budgets not checked after turn {id}: {err}");
        }
        Ok(id)
    }

    /// `agent`'s newest `limit` turns, newest first. A destroyed agent's
    /// turns stay readable until it is purged.
    pub async fn turns(&self, agent: &Ident, limit: u32) -> Result<Vec<TurnRow>, HiveError> {
        let n = agent.clone();
        let (rows, managed) = self
            .state
            .store
            .read(move |c| Ok((turns::recent(c, &n, limit)?, agents::get(c, &n)?.is_some())))
            .await?;
        if rows.is_empty() && !managed {
            return Err(HiveError::UnknownAgent(agent.clone()));
        }
        Ok(rows)
    }

    /// The sums of every turn that ended in the last `since_secs` (every
    /// turn kept when `None`), grouped `by` agent, subtree (an agent with
    /// every agent under it now), model or UTC day (host.sock `usage`).
    pub async fn sums(
        &self,
        since_secs: Option<u64>,
        by: UsageBy,
    ) -> Result<Vec<UsageRow>, HiveError> {
        let since_ms = since_secs.map_or(0, |s| {
            let s = i64::try_from(s).unwrap_or(i64::MAX);
            self.now().saturating_sub(s).saturating_mul(1000)
        });
        let (rows, parents) = self
            .state
            .store
            .read(move |c| Ok((turns::usage(c, since_ms, by)?, agents::parents(c)?)))
            .await?;
        if by != UsageBy::Subtree {
            return Ok(rows);
        }
        Ok(subtree_sums(rows, &parents))
    }

    /// `agent`'s turns read from its transcripts (interactive turns, which
    /// no harness reports), already in the journal: counted, and the caps
    /// evaluated, as after a report.
    pub(crate) async fn counted(&self, agent: &Ident, reports: &[TurnReport]) {
        self.count(agent, reports);
        if let Err(err) = self.check_spend(true).await {
            tracing::error!(agent = %agent, "budgets not checked after a transcript: {err}");
        }
    }
}

/// Each agent's row plus its descendants', from per-agent rows and the
/// topology (`child -> parent`). An agent no longer in the topology counts
/// for itself only.
fn subtree_sums(rows: Vec<UsageRow>, parents: &BTreeMap<Ident, Option<Ident>>) -> Vec<UsageRow> {
    let mut sums: BTreeMap<String, UsageRow> = BTreeMap::new();
    for row in rows {
        let mut key = Some(row.key.clone());
        // Up the tree; the hop bound guards against a cycle in bad data.
        for _ in 0..=parents.len() {
            let Some(k) = key else { break };
            let sum = sums.entry(k.clone()).or_insert_with(|| UsageRow {
                key: k.clone(),
                ..UsageRow::default()
            });
            sum.add(&row);
            key = Ident::new(k)
                .ok()
                .and_then(|n| parents.get(&n).cloned().flatten())
                .map(|p| p.to_string());
        }
    }
    sums.into_values().collect()
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
