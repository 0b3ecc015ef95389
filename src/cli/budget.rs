//! `hivectl budget`: the spend caps the host enforces — listed with what
//! each window holds (the table is `usage`'s), set on an agent's subtree
//! or on the hive, unset.
//! AMOUNT is `20usd/day`, `2000000tokens/day` or a rolling `5usd/5h`
//! (parsed by [`SpendCap`], the one parser the daemon uses too).

use clap::{Args, Subcommand};

use super::complete::agent_names;
use crate::wire::host::HostRequest;
use crate::wire::ident::Ident;
use crate::wire::spend::{SpendCap, SpendScope};

/// `budget set` / `budget unset`; none lists.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum BudgetAction {
    /// Put a budget on an agent and every agent under it (a leaf: the
    /// agent alone), or with --hive on the whole hive. It replaces the
    /// budget of its unit (usd or tokens) there. Spend already in the
    /// window counts: a budget below it holds at once.
    #[command(after_help = "Examples:\n  hivectl budget set alice 20usd/day\n  \
                            hivectl budget set alice 2000000tokens/day\n  \
                            hivectl budget set ruth 5usd/5h        rolling: the last 5 hours\n  \
                            hivectl budget set --hive 100usd/day")]
    Set(SetArgs),
    /// Remove the budgets set on an agent (or with --hive on the hive);
    /// the config's defaults apply again.
    #[command(
        after_help = "Examples:\n  hivectl budget unset alice\n  hivectl budget unset --hive"
    )]
    Unset(UnsetArgs),
}

#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct SetArgs {
    /// The agent whose subtree the budget covers.
    #[arg(add = agent_names(), required_unless_present = "hive", conflicts_with = "hive")]
    pub name: Option<Ident>,
    /// AMOUNT: 20usd/day (the UTC day), 2000000tokens/day, 5usd/5h (rolling).
    #[arg(value_name = "AMOUNT", required_unless_present = "hive")]
    pub amount: Option<SpendCap>,
    /// The budget of the whole hive.
    #[arg(long, value_name = "AMOUNT")]
    pub hive: Option<SpendCap>,
}

#[derive(Debug, Clone, PartialEq, Eq, Args)]
pub struct UnsetArgs {
    /// The agent whose budgets to remove.
    #[arg(add = agent_names(), required_unless_present = "hive", conflicts_with = "hive")]
    pub name: Option<Ident>,
    /// The hive's budgets.
    #[arg(long)]
    pub hive: bool,
}

/// The request `hivectl budget [set|unset]` sends.
pub fn request(action: Option<&BudgetAction>) -> HostRequest {
    match action {
        None => HostRequest::Budgets,
        Some(BudgetAction::Set(a)) => match (&a.name, a.amount, a.hive) {
            (Some(name), Some(amount), _) => HostRequest::SetBudget {
                name: Some(name.clone()),
                hive: false,
                amount,
            },
            (_, _, Some(amount)) => HostRequest::SetBudget {
                name: None,
                hive: true,
                amount,
            },
            // clap requires a name and an amount, or --hive.
            _ => HostRequest::Budgets,
        },
        Some(BudgetAction::Unset(a)) => HostRequest::UnsetBudget {
            name: a.name.clone(),
            hive: a.hive,
        },
    }
}

/// The line a set or unset prints.
pub fn done(request: &HostRequest) -> String {
    let covers = |name: &Option<Ident>| match name {
        Some(n) => SpendScope::Subtree(n.clone()).words(),
        None => SpendScope::Hive.words(),
    };
    match request {
        HostRequest::SetBudget { name, amount, .. } => {
            format!("budget on {}: {amount}\n", covers(name))
        }
        HostRequest::UnsetBudget { name, .. } => {
            format!("budgets on {} unset\n", covers(name))
        }
        _ => String::new(),
    }
}

#[cfg(test)]
#[path = "budget_tests.rs"]
mod tests;
