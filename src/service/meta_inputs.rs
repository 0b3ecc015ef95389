//! `update_meta_inputs` (nixos profile): the manager asks, the operator
//! approves, and the hive runs `nix flake update` of the named inputs (all
//! when none are named) in its meta flake (`meta_flake`, a git repository
//! the operator gives the hive, never an agent's), commits `flake.lock`
//! there, and rebuilds every agent whose base that moved
//! ([`Hive::check_bases`]: each input's `narHash` is part of the base),
//! one at a time through the build queue (each `rebuilt{ok}` to the
//! manager). Refused at request time, leaving no row, in the nspawn
//! profile (its agents are not built from a meta flake) and without a
//! `meta_flake`.
//!
//! nix runs through the command seam (`nix_command`, argv, no shell); the
//! inputs were checked at request time to be flake input names
//! (`hive::arguments`), so none can pass as an option. Rejected: running
//! the site's `approval_command` (what this did before): it left the
//! update, the commit and the rebuilds to a script the hive could not
//! record or order with its own builds.

use super::proposals::short;
use super::{Hive, HiveError};
use crate::command;
use crate::containers::Profile;
use crate::wire::host::Approval;

impl Hive {
    /// May `update_meta_inputs` be asked for here? (See the module docs.)
    pub(super) fn check_meta_update(&self) -> Result<(), HiveError> {
        let c = self.config();
        if c.profile != Profile::Nixos {
            return Err(HiveError::NotOffered(
                "update_meta_inputs is for the nixos profile; this hive runs the nspawn \
                 profile, whose agents are not built from a meta flake (rebuild an agent with \
                 `update` instead)"
                    .into(),
            ));
        }
        if c.meta_flake.is_none() {
            return Err(HiveError::NotOffered(
                "update_meta_inputs needs the hive's meta flake: the operator sets `meta_flake` \
                 in the config (services.hive-c0re.settings.meta_flake on NixOS)"
                    .into(),
            ));
        }
        Ok(())
    }

    /// An approved `update_meta_inputs`: update, commit, rebuild (see the
    /// module docs); the row's note, or the error that becomes it.
    pub(super) async fn update_meta_inputs(
        &self,
        row: &Approval,
    ) -> Result<Option<String>, String> {
        self.check_meta_update().map_err(|e| e.to_string())?;
        let c = self.config();
        let Some(dir) = c.meta_flake.clone() else {
            return Err("no meta_flake".into());
        };
        let inputs: Vec<String> = serde_json::from_str(&row.commit_ref)
            .map_err(|e| format!("the inputs {:?} do not parse: {e}", row.commit_ref))?;
        let dir_arg = dir.to_string_lossy().into_owned();
        let mut args = vec![
            "--extra-experimental-features",
            "nix-command flakes",
            "flake",
            "update",
            "--flake",
            &dir_arg,
        ];
        args.extend(inputs.iter().map(String::as_str));
        let named = if inputs.is_empty() {
            "every input".to_owned()
        } else {
            inputs.join(", ")
        };
        let committed = {
            // One build at a time: no agent is built while the lock moves.
            let _queue = self.build_queue().await;
            command::run("nix_command", &c.nix_command, &args)
                .await
                .map_err(|e| format!("nix flake update of {named} failed: {e}"))?;
            let message = format!("update_meta_inputs {}: {named}", row.id);
            self.repos()
                .commit_meta_lock(&dir, &message)
                .await
                .map_err(|e| format!("committing flake.lock failed: {e}"))?
        };
        let Some(sha) = committed else {
            return Ok(Some(format!("{named}: already current; nothing rebuilt")));
        };
        tracing::info!(
            id = row.id,
            "meta flake updated ({named}), committed {}",
            short(&sha)
        );
        let stale = self.check_bases().await.map_err(|e| e.to_string())?;
        let mut failed = Vec::new();
        for n in &stale {
            if let Err(e) = self.rebuild_now(n, false).await {
                tracing::warn!(agent = %n, "{n}: rebuild after update_meta_inputs failed: {e}");
                failed.push(n.to_string());
            }
        }
        let rebuilt: Vec<String> = stale
            .iter()
            .map(ToString::to_string)
            .filter(|n| !failed.contains(n))
            .collect();
        let mut note = format!(
            "flake.lock committed {} ({named}); rebuilt: {}",
            short(&sha),
            if rebuilt.is_empty() {
                "none".to_owned()
            } else {
                rebuilt.join(", ")
            }
        );
        if !failed.is_empty() {
            note.push_str(&format!(
                "; rebuild failed: {} (see rebuilt events)",
                failed.join(", ")
            ));
        }
        Ok(Some(note))
    }
}

#[cfg(test)]
#[path = "meta_inputs_tests.rs"]
mod tests;
