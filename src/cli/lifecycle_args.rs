//! The arguments the lifecycle verbs share (`start`, `stop`, `restart`,
//! `kill`, `spawn`): which agents, and whether to wait. Beside `args`, which
//! holds the command line's shape, so neither file grows past what one
//! reads at once.

use clap::Args;

use super::complete::agent_names;
use crate::wire::ident::Ident;

/// Which agents a lifecycle verb acts on: names, or `--all`; one is
/// required.
#[derive(Debug, Clone, Args)]
#[group(id = "which", required = true, multiple = false)]
pub struct Selection {
    /// Agents to act on.
    #[arg(value_name = "NAME", add = agent_names())]
    pub names: Vec<Ident>,
    /// Every agent of the roster it applies to, the manager too (the
    /// others are reported, not failed: `stop --all` leaves stopped agents
    /// alone, `restart --all` and `kill --all` act on running ones).
    #[arg(long)]
    pub all: bool,
}

/// Whether a lifecycle verb waits for the outcome.
#[derive(Debug, Clone, Copy, Args)]
pub struct Wait {
    /// Return as soon as hive-c0re accepted the request (exit 4 when it is
    /// still in progress) instead of waiting for the outcome.
    #[arg(long)]
    pub no_block: bool,
}
