//! The nixos profile's build of an agent's own NixOS module: a config
//! whose tree has `agent.nix` is built by the service, with
//! `nixos_build_command` given `h-<n>`, the exported tree and the commit
//! (it prints the system's store path, last line), and the container is
//! switched to that system ([`ContainerSpec::system`]). A config without
//! `agent.nix` (every agent seeded at the upgrade to config repos) keeps
//! the common path: the driver's builder, given `h-<n>` only.
//!
//! Decision: the build runs here, before the container is stopped, so a
//! failed build leaves the container as it was and becomes the proposal's
//! `failed/<id>` note; and only on an approved, exported tree (never the
//! proposed repo, never before approval). Rejected: building inside the
//! driver's settings write, which runs after the stop and, under `--driver
//! fake`, not at all (so the flow could not be shown without a NixOS).

use std::path::{Path, PathBuf};

use super::proposals::short;
use super::{Hive, HiveError};
use crate::command;
use crate::containers::{ContainerSpec, DriverError, Profile, machine_name};
use crate::hive::proposal::AGENT_NIX;
use crate::wire::ident::Ident;

impl Hive {
    /// nixos profile, a `tree` with `agent.nix`: build `n`'s system from
    /// it (commit `sha`) and answer its store path; `None` when there is
    /// nothing of the agent's own to build. The error is the note.
    pub(super) async fn build_system(
        &self,
        n: &Ident,
        tree: &Path,
        sha: &str,
    ) -> Result<Option<PathBuf>, String> {
        let c = self.config();
        if c.profile != Profile::Nixos || !tree.join(AGENT_NIX).is_file() {
            return Ok(None);
        }
        let machine = machine_name(n);
        let tree_arg = tree.to_string_lossy();
        tracing::info!(agent = %n, "{n}: building its system from {} ({AGENT_NIX})", short(sha));
        let out = command::run(
            "nixos_build_command",
            &c.nixos_build_command,
            &[&machine, &tree_arg, sha],
        )
        .await
        .map_err(|e| format!("building the system of {machine} from {}: {e}", short(sha)))?;
        let line = command::last_line(&out);
        if !line.starts_with('/') {
            return Err(format!(
                "the build of {machine} from {} printed no absolute store path (last line \
                 {line:?}); nixos_build_command must print the system's path last",
                short(sha)
            ));
        }
        Ok(Some(PathBuf::from(line)))
    }

    /// `n`'s container spec ([`Hive::container_spec`]) with the system
    /// built from its deployed config, when that has `agent.nix` (for a
    /// create, a start that creates, a rebuild).
    pub(super) async fn built_spec(&self, n: &Ident) -> Result<ContainerSpec, HiveError> {
        let mut spec = self.container_spec(n).await?;
        if let Some(sha) = self.deployed_sha_of(n) {
            spec.system = self
                .build_system(n, &self.deployed_tree(n), &sha)
                .await
                .map_err(|e| HiveError::Driver {
                    agent: n.clone(),
                    error: DriverError::Setup(e),
                })?;
        }
        Ok(spec)
    }
}

#[cfg(test)]
#[path = "system_build_tests.rs"]
mod tests;
