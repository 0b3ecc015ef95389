//! `hivectl image ls|prune`'s arguments and request, apart from their
//! answers' rendering (`image`), which uses the table layout of `args`.

use clap::Subcommand;

use crate::wire::host::HostRequest;

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
