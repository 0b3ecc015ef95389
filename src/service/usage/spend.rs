//! Spend caps the host enforces (`hivectl budget`; the rules are
//! [`crate::hive::spend`]): the operator's caps kept in the store, the
//! config's defaults beside them, and the agents a reached cap holds.
//!
//! How a cap holds: `recv` pops nothing for a held agent — it waits as a
//! long poll does, and answers empty at its deadline — so the turn loop
//! starts no turn, and the messages stay pending in the inbox (nothing is
//! popped, so nothing can be lost). A turn in progress goes on until its
//! next model request, which the model gateway holds: the held set is
//! pushed to the egress service on every change (`gateway`,
//! `server::egress_control`). The roster row says why (`budget`), the
//! manager gets `budget_reached` once per cap reached, and so does the
//! operator's `notify_command`. Raising or unsetting the cap, or its
//! window moving on (checked every [`RECHECK`]), lets the agents go, wakes
//! their `recv`s and lets their held requests go. The holds are evaluated
//! at start-up before any agent socket serves, so they survive restarts.
//!
//! Decision: hold at `recv`, not refuse it. A refusal would need every
//! harness to back off on a new code; a held long poll already waits
//! without spinning, in every harness, and pops nothing. Ending the
//! running turn is the opt-in hard cap (`budget_hard_cap`).

use std::collections::BTreeMap;
use std::time::Duration;

use tokio_util::sync::CancellationToken;

use rusqlite::Connection;

use super::{HiveError, Usage};
use crate::hive::spend::{self, Amounts, Defaults, Evaluation, Spent};
use crate::hive::topology::Topology;
use crate::hive::{Outcome, Recipient};
use crate::service::messaging::Wakes;
use crate::store::{StoreError, agents, model_log, spend_caps};
use crate::wire::events::HelperEvent;
use crate::wire::ident::Ident;
use crate::wire::model_log::MeterRow;
use crate::wire::notify::NotifyEvent;
use crate::wire::spend::{BudgetRow, SpendCap, SpendScope};
use crate::wire::turns::UsageBy;

/// How often the caps are evaluated again without a turn or a change: a
/// window moving on lets held agents go within this.
pub const RECHECK: Duration = Duration::from_secs(30);

/// The scope an operator names: an agent's subtree, or the hive (`None`).
fn scope_of(agent: Option<&Ident>) -> SpendScope {
    agent.map_or(SpendScope::Hive, |n| SpendScope::Subtree(n.clone()))
}

impl Usage {
    /// Every cap in force with what its window holds now (`budgets`).
    pub async fn budgets(&self) -> Result<Vec<BudgetRow>, HiveError> {
        self.check_spend(true).await
    }

    /// Set `cap` on `agent`'s subtree (the hive: `None`), replacing the
    /// cap of its unit there. Spend already in the window counts: a cap
    /// below it holds at once.
    pub async fn set_budget(
        &self,
        agent: Option<&Ident>,
        cap: SpendCap,
    ) -> Result<Outcome, HiveError> {
        self.store_budget(agent, cap, None).await
    }

    async fn store_budget(
        &self,
        agent: Option<&Ident>,
        cap: SpendCap,
        approval: Option<i64>,
    ) -> Result<Outcome, HiveError> {
        if let Some(n) = agent {
            self.require(n).await?;
        }
        let (scope, now) = (scope_of(agent), self.now());
        let s = scope.clone();
        let changed = self
            .state
            .store
            .run(move |c| spend_caps::set(c, &s, &cap, approval, now))
            .await?;
        tracing::info!(budget = %cap, "budget on {} set to {cap}", scope.words());
        self.check_spend(true).await?;
        Ok(if changed {
            Outcome::Done
        } else {
            Outcome::AlreadyInState
        })
    }

    /// Remove the operator's caps on `agent`'s subtree (the hive: `None`);
    /// the config's defaults apply again.
    pub async fn unset_budget(&self, agent: Option<&Ident>) -> Result<Outcome, HiveError> {
        let scope = scope_of(agent);
        let s = scope.clone();
        let removed = self
            .state
            .store
            .run(move |c| spend_caps::unset(c, &s))
            .await?;
        if removed == 0 {
            if let Some(n) = agent {
                self.require(n).await?;
            }
            return Ok(Outcome::AlreadyInState);
        }
        tracing::info!("budget on {} unset", scope.words());
        self.check_spend(true).await?;
        Ok(Outcome::Done)
    }

    /// The action of an approved `budget` row (`approval`, the manager's
    /// `request_budget`): set `cap` on `agent`'s subtree, as `hivectl
    /// budget set` would, the row named as the cap's source.
    pub(crate) async fn set_approved_budget(
        &self,
        agent: &Ident,
        cap: SpendCap,
        approval: i64,
    ) -> Result<Outcome, HiveError> {
        self.store_budget(Some(agent), cap, Some(approval)).await
    }

    /// Evaluate every cap now and act on what changed: rows of agents held
    /// or let go are republished, let-go agents' `recv`s woken, and (with
    /// `announce`) the manager told of each cap newly reached. The caps'
    /// rows.
    pub async fn check_spend(&self, announce: bool) -> Result<Vec<BudgetRow>, HiveError> {
        let _one = self.state.spend.evaluating.lock().await;
        self.state.spend.clear_pending();
        let (evaluation, today) = self.evaluate_spend().await?;
        let change = self.state.spend.replace(&evaluation);
        let mut changed = change.changed.clone();
        for name in self.state.spend.replace_today(today) {
            if !changed.contains(&name) {
                changed.push(name);
            }
        }
        for name in &changed {
            self.state.roster.publish(name).await;
        }
        for name in change.released {
            tracing::info!(agent = %name, "{name}: no budget holds it now; its turns resume");
            self.mail().wake(Wakes::of(Recipient::Agent(name)));
        }
        if self.state.settings.budget_hard_cap {
            for (name, why) in change.newly_held {
                self.end_turn_over_budget(&name, &why).await;
            }
        }
        for row in change.newly_reached {
            let spent = row.amount.words(row.spent);
            tracing::warn!(budget = %row.amount, "budget on {} reached: {spent}; no new turn starts for it", row.scope.words());
            if announce {
                let agent = match &row.scope {
                    SpendScope::Hive => None,
                    SpendScope::Subtree(n) | SpendScope::Agent(n) => Some(n.clone()),
                };
                self.mail().to_operator(NotifyEvent::BudgetReached {
                    hive: agent.is_none(),
                    agent: agent
                        .clone()
                        .unwrap_or_else(|| self.state.settings.manager.clone()),
                    amount: row.amount.to_string(),
                    spent: spent.clone(),
                });
                self.mail()
                    .to_manager(HelperEvent::BudgetReached {
                        agent: agent.map(|n| n.to_string()),
                        amount: row.amount.to_string(),
                        spent,
                    })
                    .await;
            }
        }
        Ok(evaluation.rows)
    }

    /// The hard cap (`budget_hard_cap`): end `name`'s turn in progress, if
    /// any, as the operator's interrupt would, with a note saying why when
    /// its harness reported the turn running.
    async fn end_turn_over_budget(&self, name: &Ident, why: &str) {
        let note = format!(
            "Your last turn was ended by the hive: a budget was reached ({why}). New \
             turns start when the operator raises the budget or its window moves on."
        );
        // The note only with a live turn: a turn just reported (whose
        // report may be what reached the budget) has none while its
        // harness's wait may still be open, and ended by itself. A harness
        // too old to report progress still has its turn ended, without one.
        let note = self.state.live.current(name).map(|_| note);
        match self.interrupt(name, note).await {
            Ok(()) => tracing::warn!(agent = %name, "{name}: turn ended by the hard cap ({why})"),
            Err(HiveError::NoTurn(_)) => {}
            Err(err) => {
                tracing::warn!(agent = %name, "{name}: cannot end its turn over budget: {err}")
            }
        }
    }

    /// The caps' evaluation, and each agent's spend since 00:00 UTC (read
    /// with the caps' windows: no second query when a cap is per day).
    async fn evaluate_spend(&self) -> Result<(Evaluation, BTreeMap<Ident, u64>), HiveError> {
        let now = self.now();
        let settings = &self.state.settings;
        let (hive, each) = (
            settings.budget_hive.clone(),
            settings.budget_each_agent.clone(),
        );
        Ok(self
            .state
            .store
            .read(move |c| {
                let operator = spend_caps::all(c)?;
                let parents = agents::parents(c)?;
                let names: Vec<Ident> = parents.keys().cloned().collect();
                let defaults = Defaults {
                    hive: &hive,
                    each_agent: &each,
                };
                let caps = spend::in_force(&operator, defaults, &names);
                let mut spent = BTreeMap::new();
                for start in spend::window_starts(&caps, now) {
                    spent.insert(start, spent_since(c, start)?);
                }
                let midnight = now - now.rem_euclid(86_400);
                let today: BTreeMap<Ident, u64> = match spent.get(&midnight) {
                    Some(sums) => sums
                        .iter()
                        .filter_map(|(k, a)| Some((Ident::new(k.clone()).ok()?, a.micro_usd)))
                        .collect(),
                    None => spent_since(c, midnight)?
                        .into_iter()
                        .filter_map(|(k, a)| Some((Ident::new(k).ok()?, a.micro_usd)))
                        .collect(),
                };
                let topology = Topology::new(parents);
                let evaluation = spend::evaluate(&caps, &topology, &names, &spent, now);
                Ok((evaluation, today))
            })
            .await?)
    }

    /// Evaluate the caps every [`RECHECK`] until `shutdown`, so a window
    /// moving on lets held agents go. (Spend growing is evaluated where it
    /// is committed: [`Usage::metered`].)
    pub async fn watch_spend(self, shutdown: CancellationToken) {
        let mut tick = tokio::time::interval(RECHECK);
        tick.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = tick.tick() => {}
            }
            if let Err(err) = self.check_spend(true).await {
                tracing::warn!("budget check failed: {err}; retrying in {RECHECK:?}");
            }
        }
    }

    /// A metered request of `agent` (`row`) was committed: count it for
    /// `/metrics`, and evaluate the caps with it, so a cap it reached holds the agent's next `recv` (and, under
    /// the hard cap, ends its turn), and the roster's spend today moves.
    ///
    /// Coalesced: a request committed while an evaluation waits to start
    /// is covered by it (every evaluation clears the mark as it starts,
    /// under the lock, before it reads), so a burst of requests costs an
    /// evaluation or two, not one each. Rejected: evaluating only the caps
    /// covering `agent` — the hive's covers every agent, and one query of
    /// the hours answers every window's agents alike, so the saving would
    /// be the few caps' arithmetic.
    pub(crate) async fn metered(&self, agent: &Ident, row: &MeterRow) {
        self.count_request(agent, row);
        if self.state.spend.mark_pending() {
            return;
        }
        if let Err(err) = self.check_spend(true).await {
            tracing::error!(agent = %agent, "budgets not checked after a metered request: {err}");
        }
    }
}

/// What each agent spent since `since` (Unix seconds), by agent name: the
/// one read of an agent's spend, for every cap's window and the roster's
/// spend today. Its one source is the meter (issue 46, step 2): the
/// requests the model gateway metered, at their list cost, summed over
/// `store::model_log`'s hours (which outlive the rows' bound). Never the
/// turn journal: `report_turn` comes from inside the container, where any
/// process of the agent can send one with any figures.
fn spent_since(c: &Connection, since: i64) -> Result<Spent, StoreError> {
    let rows = model_log::spend(c, since.saturating_mul(1000), UsageBy::Agent)?;
    Ok(rows
        .into_iter()
        .map(|(agent, m)| {
            let amounts = Amounts {
                micro_usd: m.cost_micro_usd,
                tokens: m.tokens.total(),
            };
            (agent, amounts)
        })
        .collect())
}

#[cfg(test)]
#[path = "spend_tests.rs"]
mod tests;

#[cfg(test)]
#[path = "meter_tests.rs"]
mod meter_tests;
