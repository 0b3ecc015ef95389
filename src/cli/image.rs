//! `hivectl image ls`: the agent images the host has — each version of
//! the shared image (the current one marked) with the agents that bind
//! it, then the agents that run a full copy or the host's `/usr`.
//! `hivectl image prune [--dry-run]`: the versions removed (or that would
//! be), one per line.

use clap::Subcommand;

use crate::wire::host::HostRequest;
use crate::wire::images::{ImageKind, ImageRow};

use super::table::{or_dash, table};

/// `image ls`, `image prune`.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum ImageAction {
    /// List the agent images: each version of the shared image (the
    /// current one, which new agents and rebuilds bind, marked) and the
    /// agents that run it; then the agents that run a full copy of the
    /// image (a rebuild moves them onto the shared one) or the host's
    /// /usr. A version the store lacks but an agent names is marked
    /// missing.
    #[command(after_help = "Examples:\n  hivectl image ls\n  hivectl image ls --json")]
    Ls,
    /// Remove the versions of the shared image that no agent uses and
    /// that are not the newest (the current one, or one shared after it),
    /// and print them. A version any container's .nspawn file names is
    /// kept. Spawns, rebuilds and restarts wait meanwhile.
    #[command(after_help = "Examples:\n  hivectl image prune --dry-run\n  hivectl image prune")]
    Prune {
        /// Only print what would be removed.
        #[arg(long)]
        dry_run: bool,
    },
}

/// The request `hivectl image ...` sends.
pub fn request(action: &ImageAction) -> HostRequest {
    match action {
        ImageAction::Ls => HostRequest::Images,
        ImageAction::Prune { dry_run } => HostRequest::PruneImages { dry_run: *dry_run },
    }
}

/// What `image prune` did: each version, or that there was none.
pub fn pruned(versions: &[String], dry_run: bool) -> String {
    match (versions.is_empty(), dry_run) {
        (true, true) => "no unused image versions: nothing to remove\n".into(),
        (true, false) => "no unused image versions: nothing removed\n".into(),
        (false, _) => {
            let verb = if dry_run { "would remove" } else { "removed" };
            versions
                .iter()
                .map(|v| format!("{verb} {}\n", or_dash(Some(v))))
                .collect()
        }
    }
}

/// The table of `rows`, or a line saying there are none.
pub fn table_of(rows: &[ImageRow]) -> String {
    if rows.is_empty() {
        return "no agent images (the driver keeps none, or no agent has one yet)\n".into();
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let image = match r.kind {
                ImageKind::Shared => or_dash(r.version.as_deref()),
                ImageKind::FullCopy => "(full copy)".into(),
                ImageKind::Host => "(host /usr)".into(),
            };
            let state = match (r.current, r.missing) {
                (true, _) => "current",
                (_, true) => "missing",
                _ => "-",
            };
            let agents = if r.agents.is_empty() {
                "-".to_owned()
            } else {
                r.agents
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            vec![image, state.into(), agents]
        })
        .collect();
    table(&["IMAGE", "STATE", "AGENTS"], &body)
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
