//! `needs_update`: has the hive's base moved since an agent was built?
//! (A leaf of the service but for the roster and the inbox: the callers
//! hand it the spec, so grants, lifecycle and deploy can all use it.)
//!
//! An agent's **base** is what the hive builds its container from besides
//! the agent's own deployed commit: the settings the driver renders for it
//! ([`BuiltFrom`]: its binds, limits and environment — the hive's
//! `agent_cpu_quota`/`agent_memory_max` under its deployed `agent.json`,
//! its grants as `HIVE_CAPABILITIES`/`HIVE_TOOL_GROUPS`), the version of
//! the drivers' rendering of them ([`SETTINGS_FORMAT`]), the profile, and
//! in the nixos profile the `nixos_build_command` that makes its system
//! and, with a `meta_flake`, what its `flake.lock` pins (each input's
//! `narHash`: `update_meta_inputs` moves it).
//! Every successful create or rebuild of its container writes what it was
//! built from to `<state_dir>/deployed/<n>/built-from` (JSON); the agent
//! `needs_update` when what the hive would build now differs from that
//! record. Computed for every agent but the manager (whose container is
//! the installation's) at start (`startup`, `Hive::check_bases`) and when its base
//! changes while the daemon runs (a grant or revoke of a capability or a
//! tool group); the manager hears `needs_update{agent}` once, in the
//! transaction that turns the flag on; a rebuild (`update`, `hivectl
//! rebuild`, a deploy) records the new base and clears it. With
//! `auto_update` the daemon rebuilds such agents itself at start.
//!
//! Not in the base, by decision: the template image and (nspawn) the
//! `hive-agent` binary. A rebuild re-renders the settings and restarts the
//! container; it does not clone the image again, so an agent of the host's
//! `/usr` runs the host's current `hive-agent` from its next restart
//! anyway, and flagging it would promise an update the rebuild does not
//! make. The shared image (`systemd/image/share`) is what a rebuild does
//! move: an agent bound to an older version, or a full copy of the image,
//! is rebound to the store's current version. So the driver is asked
//! besides the record
//! ([`crate::containers::ContainerDriver::image_update`]) and a newer
//! version turns `needs_update` on, its words in the daemon's log. A
//! version shared while the daemon runs is seen at the next check (the
//! daemon's start, a grant). Rejected: a hash of
//! the record (a JSON record can be read by the operator to see what an
//! agent was built from).
//!
//! An agent with no record (built by a daemon before this one) is taken to
//! run the base of now: its record is written at start, and not flagged.

use std::collections::BTreeMap;
use std::path::PathBuf;

use serde::Serialize;

use super::{Hive, HiveError};
use crate::containers::{ContainerSpec, Profile, SETTINGS_FORMAT};
use crate::hive::flake_lock;
use crate::store::{agents, immediate};
use crate::wire::events::{HelperEvent, SYSTEM_SENDER};
use crate::wire::ident::Ident;

/// What an agent's container was (or would now be) built from; see the
/// module docs. Its JSON is the record.
#[derive(Debug, Serialize)]
struct BuiltFrom<'a> {
    settings_format: u32,
    profile: Profile,
    runtime_dir: &'a std::path::Path,
    state_dir: &'a std::path::Path,
    cpu_quota: Option<&'a str>,
    memory_max: Option<&'a str>,
    /// Left out when the spec has none. A record from before the field
    /// existed lacks it, so the first start with a limit marks each agent
    /// `needs_update` once: its unit has the limit after a rebuild.
    #[serde(skip_serializing_if = "Option::is_none")]
    tasks_max: Option<u64>,
    env: &'a [(String, String)],
    #[serde(skip_serializing_if = "Option::is_none")]
    nixos_build_command: Option<&'a [String]>,
    /// nixos profile with a `meta_flake`: what its `flake.lock` pins.
    #[serde(skip_serializing_if = "Option::is_none")]
    meta_lock: Option<BTreeMap<String, String>>,
}

impl Hive {
    /// `<state_dir>/deployed/<n>/built-from`.
    fn built_from_file(&self, n: &Ident) -> PathBuf {
        self.deployed_dir(n).join("built-from")
    }

    /// The record of a container built with `spec`.
    fn built_from(&self, spec: &ContainerSpec) -> String {
        let c = self.config();
        let record = BuiltFrom {
            settings_format: SETTINGS_FORMAT,
            profile: c.profile,
            runtime_dir: &spec.runtime_dir,
            state_dir: &spec.state_dir,
            cpu_quota: spec.cpu_quota.as_deref(),
            memory_max: spec.memory_max.as_deref(),
            tasks_max: spec.tasks_max,
            env: &spec.env,
            nixos_build_command: (c.profile == Profile::Nixos)
                .then_some(c.nixos_build_command.as_slice()),
            meta_lock: self.meta_lock(),
        };
        let mut text = serde_json::to_string(&record).unwrap_or_default();
        text.push('\n');
        text
    }

    /// What the meta flake's `flake.lock` pins (nixos profile, a
    /// `meta_flake` set); an unreadable lock pins nothing.
    pub(super) fn meta_lock(&self) -> Option<BTreeMap<String, String>> {
        let c = self.config();
        let dir = c
            .meta_flake
            .as_ref()
            .filter(|_| c.profile == Profile::Nixos)?;
        let bytes = std::fs::read(dir.join(flake_lock::FLAKE_LOCK)).unwrap_or_default();
        Some(flake_lock::pins(&bytes).unwrap_or_default())
    }

    /// `n`'s container was just created or rebuilt with `spec`: record
    /// what it was built from and clear `needs_update`. A failure to
    /// write is logged (the next start compares against the old record).
    pub(super) async fn built(&self, n: &Ident, spec: &ContainerSpec) {
        let file = self.built_from_file(n);
        let text = self.built_from(spec);
        let written = file
            .parent()
            .map_or(Ok(()), std::fs::create_dir_all)
            .and_then(|()| std::fs::write(&file, text));
        if let Err(e) = written {
            tracing::warn!(agent = %n, "{n}: cannot record what it was built from in {}: {e}", file.display());
        }
        self.set_needs_update(n, false).await;
    }

    /// Compare what `n` would be built from now (`spec`: its container
    /// spec, `Hive::container_spec`) with what it was built from, and set
    /// `needs_update` by it (the manager hears of it when it turns on).
    /// Not for the manager. Answers the flag.
    pub(super) async fn check_base(
        &self,
        n: &Ident,
        spec: &ContainerSpec,
    ) -> Result<bool, HiveError> {
        let now = self.built_from(spec);
        let file = self.built_from_file(n);
        let stale = match std::fs::read_to_string(&file) {
            Ok(then) => then != now,
            Err(e) if e.kind() == std::io::ErrorKind::NotFound => {
                tracing::info!(agent = %n, "{n}: no record of what it was built from; taking the hive's current base");
                if let Some(dir) = file.parent() {
                    std::fs::create_dir_all(dir).map_err(|e| HiveError::io(dir, e))?;
                }
                std::fs::write(&file, now).map_err(|e| HiveError::io(&file, e))?;
                false
            }
            Err(e) => return Err(HiveError::io(&file, e)),
        };
        // The image is not in the record (see the module docs): the driver
        // says whether a rebuild would move it.
        let stale = stale
            || match self.driver().image_update(n).await {
                Ok(Some(said)) => {
                    tracing::info!(agent = %n, "{n}: needs an update: {said}");
                    true
                }
                Ok(None) => false,
                Err(e) => {
                    tracing::warn!(agent = %n, "{n}: cannot tell whether its image is current: {e}");
                    false
                }
            };
        self.set_needs_update(n, stale).await;
        Ok(stale)
    }

    /// Set `n`'s `needs_update`; when it turns on, the manager's
    /// `needs_update{agent}` is stored in the same transaction (so it is
    /// sent once, however often the daemon restarts). A failure is logged.
    async fn set_needs_update(&self, n: &Ident, on: bool) {
        let (name, now, manager) = (n.clone(), self.now(), self.config().manager());
        let written = self
            .store()
            .run(move |c| {
                let tx = immediate(c)?;
                let changed = agents::set_needs_update(&tx, &name, on)?;
                let wakes = if changed && on {
                    let event = HelperEvent::NeedsUpdate {
                        agent: name.to_string(),
                    };
                    let to = crate::hive::Recipient::Agent(manager);
                    Some(
                        super::messaging::insert(
                            &tx,
                            SYSTEM_SENDER,
                            &to,
                            &event.to_body(),
                            None,
                            now,
                        )?
                        .1,
                    )
                } else {
                    None
                };
                tx.commit()?;
                Ok((changed, wakes))
            })
            .await;
        match written {
            Ok((changed, wakes)) => {
                if let Some(wakes) = wakes {
                    tracing::info!(agent = %n, "{n}: needs an update (a rebuild would change what its container is built from; the manager is told)");
                    self.mail().wake(wakes);
                }
                if changed {
                    self.publish(n).await;
                }
            }
            Err(e) => tracing::warn!(agent = %n, "{n}: cannot set needs_update: {e}"),
        }
    }
}

#[cfg(test)]
#[path = "base_tests.rs"]
mod tests;
