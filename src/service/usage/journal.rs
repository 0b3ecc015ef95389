//! The turn journal and usage: what each agent's turns took, as its
//! harness reported them (verb `report_turn`), what its model requests
//! spent, as the meter counted them, and the sums the operator asks for
//! (`turns`, `usage` on host.sock).
//!
//! Decision: the harness reports what only it knows — the turn's outcome,
//! its messages, tool calls, session — and the daemon keeps it. Its tokens
//! and cost are kept and shown as *reported*, never summed into spend:
//! a report comes from inside the container, where any process of the
//! agent can send one with any figures (issue 46). What was spent is the
//! meter's (`store::model_log`), and `usage` answers both side by side.
//! Rejected: reading transcripts from the host for headless turns, which
//! would parse a file the untrusted container writes for numbers the
//! meter now holds.

use std::collections::BTreeMap;

use super::{HiveError, Usage};
use crate::hive::arguments;
use crate::store::{agents, model_log, turns};
use crate::wire::ident::Ident;
use crate::wire::turns::{TurnReport, TurnRow, UsageBy, UsageRow};

impl Usage {
    /// Keep a turn `agent`'s harness reported; committed before the
    /// answer, so whatever asks next already sees it. Answers the turn's
    /// id. The caps are not evaluated: a report moves no spend figure (the
    /// meter's rows do, each evaluated as it is committed), and a report
    /// anyone in the container can send should cost the host no more than
    /// its write.
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
            metered: None,
        };
        self.state.live.end(agent, Some(row));
        tracing::debug!(agent = %agent, turn = id, "turn reported");
        Ok(id)
    }

    /// `agent`'s newest `limit` turns, newest first, each with the agent's
    /// metered requests of its time that are still kept. A destroyed
    /// agent's turns stay readable until it is purged.
    pub async fn turns(&self, agent: &Ident, limit: u32) -> Result<Vec<TurnRow>, HiveError> {
        let n = agent.clone();
        let (rows, managed) = self
            .state
            .store
            .read(move |c| {
                let mut rows = turns::recent(c, &n, limit)?;
                for row in &mut rows {
                    let r = &row.report;
                    let (from, to) = (r.started_at_ms, r.ended_at_ms);
                    row.metered = Some(model_log::between(c, &n, from, to)?);
                }
                Ok((rows, agents::get(c, &n)?.is_some()))
            })
            .await?;
        if rows.is_empty() && !managed {
            return Err(HiveError::UnknownAgent(agent.clone()));
        }
        Ok(rows)
    }

    /// The sums of every metered request made and every turn that ended
    /// in the last `since_secs` (all when `None`), grouped `by` agent,
    /// subtree (an agent with every agent under it now), model or UTC day
    /// (host.sock `usage`): a row per key either has.
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
            .read(move |c| {
                let mut rows: BTreeMap<String, UsageRow> = turns::usage(c, since_ms, by)?
                    .into_iter()
                    .map(|r| (r.key.clone(), r))
                    .collect();
                for (key, metered) in model_log::spend(c, since_ms, by)? {
                    let row = rows.entry(key.clone()).or_insert_with(|| UsageRow {
                        key,
                        ..UsageRow::default()
                    });
                    row.metered = metered;
                }
                Ok((rows.into_values().collect::<Vec<_>>(), agents::parents(c)?))
            })
            .await?;
        if by != UsageBy::Subtree {
            return Ok(rows);
        }
        Ok(subtree_sums(rows, &parents))
    }

    /// `agent`'s turns read from its transcripts (interactive turns, which
    /// no harness reports), already in the journal: counted, as after a
    /// report (reported figures: no cap is evaluated).
    pub(crate) fn counted(&self, agent: &Ident, reports: &[TurnReport]) {
        self.count(agent, reports);
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
