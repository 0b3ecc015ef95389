//! Spend caps (the operator's budgets) as rules, without IO: which caps
//! are in force, what each covers, what its window holds, and which agents
//! the hive starts no new turn for.
//!
//! - **In force**: the operator's caps (`hivectl budget set`, an approved
//!   `request_budget`), one per scope and unit; the config's defaults
//!   (`budget_hive`, `budget_each_agent`) where the operator set none of
//!   that scope and unit.
//! - **Covers**: the hive cap every agent (and counts every turn kept,
//!   a destroyed agent's too); a subtree cap its agent and every agent
//!   under it now (the topology); a config `budget_each_agent` cap the
//!   agent's own turns.
//! - **Spent** counts every turn that ended in the window, also those
//!   before the cap was set: a cap set below the window's spend is
//!   reached at once. Reached = spent at or past the limit.
//! - **Held**: an agent covered by a reached cap; the one shown is the
//!   nearest (its own, then its ancestors' from the parent up, then the
//!   hive's).

use std::collections::{BTreeMap, BTreeSet};

use super::topology::Topology;
use crate::wire::egress::GatewayHold;
use crate::wire::ident::Ident;
use crate::wire::spend::{BudgetRow, SpendCap, SpendScope, SpendSource, SpendUnit};

/// One cap in force.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct InForce {
    pub scope: SpendScope,
    pub cap: SpendCap,
    pub source: SpendSource,
}

/// The config's default caps.
#[derive(Debug, Clone, Copy, Default)]
pub struct Defaults<'a> {
    /// `budget_hive`: on the whole hive.
    pub hive: &'a [SpendCap],
    /// `budget_each_agent`: on each agent's own turns.
    pub each_agent: &'a [SpendCap],
}

/// The caps in force: the operator's (hive, then subtrees), then the
/// config's where the operator set none of that scope and unit.
pub fn in_force(
    operator: &[(SpendScope, SpendCap)],
    defaults: Defaults<'_>,
    agents: &[Ident],
) -> Vec<InForce> {
    let set: BTreeSet<(SpendScope, SpendUnit)> = operator
        .iter()
        .map(|(scope, cap)| (scope.clone(), cap.unit))
        .collect();
    let mut out: Vec<InForce> = operator
        .iter()
        .map(|(scope, cap)| InForce {
            scope: scope.clone(),
            cap: *cap,
            source: SpendSource::Operator,
        })
        .collect();
    let config = |scope: SpendScope, cap: &SpendCap| InForce {
        scope,
        cap: *cap,
        source: SpendSource::Config,
    };
    for cap in defaults.hive {
        if !set.contains(&(SpendScope::Hive, cap.unit)) {
            out.push(config(SpendScope::Hive, cap));
        }
    }
    for agent in agents {
        for cap in defaults.each_agent {
            if !set.contains(&(SpendScope::Subtree(agent.clone()), cap.unit)) {
                out.push(config(SpendScope::Agent(agent.clone()), cap));
            }
        }
    }
    out.sort_by(|a, b| (&a.scope, a.cap.unit).cmp(&(&b.scope, b.cap.unit)));
    out
}

/// What one agent spent since a window's start.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct Amounts {
    pub micro_usd: u64,
    pub tokens: u64,
}

impl Amounts {
    fn of(self, unit: SpendUnit) -> u64 {
        match unit {
            SpendUnit::Usd => self.micro_usd,
            SpendUnit::Tokens => self.tokens,
        }
    }
}

/// Per agent (any agent with turns kept), what it spent since one start.
pub type Spent = BTreeMap<String, Amounts>;

/// The window starts (unix seconds) the caps need sums for at `now`.
pub fn window_starts(caps: &[InForce], now: i64) -> BTreeSet<i64> {
    caps.iter().map(|c| c.cap.window.start(now)).collect()
}

/// An agent the hive starts no turn for, and why, in the roster's words
/// (`$20.00 of $20.00 today`, `... for ruth and under` when the cap is
/// not the agent's own).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Hold {
    pub scope: SpendScope,
    pub cap: SpendCap,
    pub words: String,
}

impl Hold {
    /// The hold as the model gateway says it to a request it refused after
    /// `wait_ms`: the budget with its scope, what it holds, and the command
    /// that raises it (a subtree's budget, or a config default on the agent
    /// or the hive, each replaced by the operator's of its unit).
    pub fn at_gateway(&self, wait_ms: u64) -> GatewayHold {
        let raise = match &self.scope {
            SpendScope::Hive => "hivectl budget set --hive AMOUNT".to_owned(),
            SpendScope::Subtree(n) | SpendScope::Agent(n) => {
                format!("hivectl budget set {n} AMOUNT")
            }
        };
        GatewayHold {
            budget: format!("{} on {}", self.cap, self.scope.words()),
            spent: self.words.clone(),
            raise,
            wait_ms,
        }
    }
}

/// Every cap with its window's spend, and the agents held.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Evaluation {
    pub rows: Vec<BudgetRow>,
    pub held: BTreeMap<Ident, Hold>,
}

/// Evaluate `caps` at `now` over `topology`, with `spent` holding the sums
/// since every start of [`window_starts`] (a start missing counts as
/// nothing spent).
pub fn evaluate(
    caps: &[InForce],
    topology: &Topology,
    agents: &[Ident],
    spent: &BTreeMap<i64, Spent>,
    now: i64,
) -> Evaluation {
    let none = Spent::new();
    let mut rows = Vec::with_capacity(caps.len());
    // Per agent: (distance, hold) of the nearest reached cap covering it.
    let mut held: BTreeMap<Ident, (usize, Hold)> = BTreeMap::new();
    for c in caps {
        let since = c.cap.window.start(now);
        let sums = spent.get(&since).unwrap_or(&none);
        let covered: Vec<Ident> = match &c.scope {
            SpendScope::Hive => agents.to_vec(),
            SpendScope::Subtree(n) => std::iter::once(n.clone())
                .chain(topology.descendants(n))
                .collect(),
            SpendScope::Agent(n) => vec![n.clone()],
        };
        let amount = match &c.scope {
            SpendScope::Hive => sums
                .values()
                .fold(0u64, |t, a| t.saturating_add(a.of(c.cap.unit))),
            _ => covered.iter().fold(0u64, |t, n| {
                t.saturating_add(sums.get(n.as_str()).map_or(0, |a| a.of(c.cap.unit)))
            }),
        };
        let reached = c.cap.reached_by(amount);
        rows.push(BudgetRow {
            scope: c.scope.clone(),
            amount: c.cap,
            source: c.source,
            spent: amount,
            since,
            reached,
        });
        if !reached {
            continue;
        }
        for agent in covered {
            let distance = distance(topology, &agent, &c.scope);
            let own =
                matches!(&c.scope, SpendScope::Subtree(n) | SpendScope::Agent(n) if *n == agent);
            let words = if own {
                c.cap.words(amount)
            } else {
                format!("{} for {}", c.cap.words(amount), c.scope.words())
            };
            let hold = Hold {
                scope: c.scope.clone(),
                cap: c.cap,
                words,
            };
            match held.get(&agent) {
                Some((d, _)) if *d <= distance => {}
                _ => {
                    held.insert(agent, (distance, hold));
                }
            }
        }
    }
    Evaluation {
        rows,
        held: held.into_iter().map(|(n, (_, h))| (n, h)).collect(),
    }
}

/// How far up from `agent` the cap's scope sits: 0 its own, 1 its
/// parent's, ..., the hive's past every ancestor.
fn distance(topology: &Topology, agent: &Ident, scope: &SpendScope) -> usize {
    let target = match scope {
        SpendScope::Subtree(n) | SpendScope::Agent(n) => n,
        SpendScope::Hive => return usize::MAX,
    };
    let mut at = Some(agent);
    // The hop bound ends a walk through a cycle in bad data.
    for d in 0..=topology.len() {
        match at {
            Some(n) if n == target => return d,
            Some(n) => at = topology.parent_of(n),
            None => break,
        }
    }
    usize::MAX - 1
}

#[cfg(test)]
#[path = "spend_tests.rs"]
mod tests;
