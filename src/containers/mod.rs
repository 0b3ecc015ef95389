//! The container seam: what the hive needs from systemd, and nothing more.
//!
//! [`ContainerDriver`] is the one trait over the outside world's containers.
//! The real implementation drives systemd over D-Bus (`crate::systemd::dbus`);
//! [`fake::FakeDriver`] is a stateful stand-in selected by `--driver fake`, so
//! the CLI and the sockets run end to end without root or systemd; with
//! [`demo`] (`--demo-agents`) its running containers run the real harness
//! with a scripted model, so the demo hive's agents do turns.
//!
//! Decisions:
//! - **The driver owns a live view** ([`ContainerDriver::view`]) and reports
//!   changes on a channel ([`ContainerDriver::changes`]). Reading the roster
//!   never costs a D-Bus round trip; the real driver keeps the view current
//!   from systemd's signals. Rejected: asking systemd per request, which makes
//!   `agent_status` as slow as the bus and floods it under dashboards.
//! - **Idempotency is in the return type**: starting a running container is
//!   [`Outcome::AlreadyInState`], not an error.
//! - **Naming lives here.** The container of agent `n` is the machine `h-<n>`;
//!   its unit name depends on the [`Profile`]. Both are built from an
//!   [`Ident`] only.

pub mod demo;
pub mod fake;
pub mod images;
pub mod unavailable;

use std::collections::HashMap;
use std::path::PathBuf;
use std::time::Duration;

use serde::{Deserialize, Serialize};
use tokio::sync::broadcast;

use crate::wire::host::Signal;
use crate::wire::ident::Ident;
use crate::wire::images::ImageRow;

/// How containers are laid out on this host.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum Profile {
    /// NixOS declarative containers: `container@h-<n>.service`.
    Nixos,
    /// Any systemd distribution: `systemd-nspawn@h-<n>.service`, images under
    /// `/var/lib/machines`.
    #[default]
    Nspawn,
}

impl Profile {
    fn unit_prefix(self) -> &'static str {
        match self {
            Self::Nixos => "container@h-",
            Self::Nspawn => "systemd-nspawn@h-",
        }
    }

    /// The unit that runs agent `name`'s container.
    pub fn unit_name(self, name: &Ident) -> String {
        format!("{}{name}.service", self.unit_prefix())
    }

    /// The agent a unit belongs to, if the unit is one of ours.
    pub fn agent_of_unit(self, unit: &str) -> Option<Ident> {
        let rest = unit.strip_prefix(self.unit_prefix())?;
        Ident::new(rest.strip_suffix(".service")?).ok()
    }
}

/// The version of how the drivers render a [`ContainerSpec`] into a
/// container's settings (the `.nspawn` file, the nixos config, the unit's
/// limits). Bump it when a release renders the same spec differently, so
/// every agent built before reads `needs_update` (`service::base`).
pub const SETTINGS_FORMAT: u32 = 1;

/// The machine name of agent `name`'s container.
pub fn machine_name(name: &Ident) -> String {
    name.machine_name()
}

pub use crate::hive::unit::{ActiveState, UnitState};

/// One change in the driver's view.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct UnitChange {
    pub agent: Ident,
    /// The state before, `None` when the unit just appeared.
    pub old: Option<UnitState>,
    /// The state now, `None` when the unit disappeared.
    pub new: Option<UnitState>,
}

/// What a lifecycle call did (the hive's one "already in that state" type).
pub use crate::hive::Outcome;

/// How to stop a container.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum StopMode {
    /// Ask politely (StopUnit), then SIGKILL after the deadline.
    Graceful { deadline: Duration },
    /// SIGKILL now.
    Hard,
}

/// What a container is made from. Paths are built from the agent's [`Ident`]
/// by the caller; the driver only places them.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ContainerSpec {
    /// Host side of the container's `/run/hive` (holds its `mcp.sock`).
    pub runtime_dir: PathBuf,
    /// The agent's persistent state directory on the host.
    pub state_dir: PathBuf,
    /// systemd `CPUQuota=` for the unit, e.g. `200%`.
    pub cpu_quota: Option<String>,
    /// systemd `MemoryMax=` for the unit, e.g. `4G`.
    pub memory_max: Option<String>,
    /// systemd `TasksMax=` for the unit: processes and threads at once.
    pub tasks_max: Option<u64>,
    /// Environment handed to the container (`HIVE_CAPABILITIES`, ...).
    pub env: Vec<(String, String)>,
    /// The config repos this container sees: the manager's, `None` for
    /// every other agent (no agent sees its own repos).
    pub repos: Option<RepoBinds>,
    /// nixos profile: the system the container runs, built by the service
    /// from the agent's deployed `agent.nix`; `None`: the driver's builder
    /// makes it from `h-<n>` alone. (The nspawn profile ignores it.)
    pub system: Option<PathBuf>,
}

/// The hive's config repos as the manager's container sees them
/// ([`crate::hive::proposal::MANAGER_PROPOSED_DIR`] and
/// [`crate::hive::proposal::MANAGER_APPLIED_DIR`]).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct RepoBinds {
    /// `<state_dir>/proposed`, bound read-write; each repo in it belongs to
    /// the container's user (the directory itself stays the host's, so the
    /// manager cannot add, rename or remove a repo).
    pub proposed: PathBuf,
    /// `<state_dir>/applied`, bound read-only; the hive's, readable by mode.
    pub applied: PathBuf,
}

/// Why a driver call failed; one variant per reaction the caller makes.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum DriverError {
    /// systemd cannot be reached at all (no system bus). The operator must
    /// run the daemon on a systemd host or use `--driver fake`.
    #[error("systemd is not reachable: {0}")]
    Unavailable(String),
    /// systemd does not know the container's unit: the agent was never
    /// created on this host, or its image is gone. Spawn or rebuild it.
    #[error("unit {unit} is not known to systemd; spawn or rebuild the agent")]
    NoSuchUnit { unit: String },
    /// systemd ran the job and it did not succeed; the journal says why.
    #[error("{verb} of {unit} {outcome}; see `journalctl -u {unit}`")]
    JobFailed {
        verb: &'static str,
        unit: String,
        /// A sentence fragment such as "failed" or "timed out in systemd".
        outcome: String,
    },
    /// Creating or removing the container's files or image failed.
    #[error("preparing the container failed: {0}")]
    Setup(String),
    /// The shared agent image's store could not be read or a version of
    /// it removed; the message names the path and what to fix.
    #[error("the agent image store: {0}")]
    ImageStore(String),
    /// Any other D-Bus error, passed through with systemd's own words.
    #[error("systemd refused: {0}")]
    Bus(String),
    /// `agent_disk_quota_required` is set and the agent's state directory
    /// cannot be held to its quota: the operator gives the file system
    /// project quota, or turns the requirement off. Nothing was started.
    #[error(
        "not started: agent_disk_quota_required is set and {dir} cannot be held to its disk \
         quota ({why}); put the agents' state on XFS or ext4 (mkfs.ext4 -O quota,project) \
         mounted with prjquota, or set agent_disk_quota_required to false"
    )]
    NoDiskQuota {
        dir: std::path::PathBuf,
        why: String,
    },
}

/// The driver of one host's containers. See the module docs.
#[async_trait::async_trait]
pub trait ContainerDriver: Send + Sync + std::fmt::Debug {
    /// Load (or reload) the full view. Called before READY=1 and after a bus
    /// reconnect.
    async fn resync(&self) -> Result<(), DriverError>;

    /// Every managed container unit the driver knows, by agent. No I/O.
    fn view(&self) -> HashMap<Ident, UnitState>;

    /// One agent's unit from the view, without copying the rest. No I/O.
    fn state(&self, agent: &Ident) -> Option<UnitState> {
        self.view().remove(agent)
    }

    /// Changes to the view, as they happen.
    fn changes(&self) -> broadcast::Receiver<UnitChange>;

    /// Create agent `name`'s container (image, settings), not started.
    /// What the container needs is written before what makes it exist, so
    /// a create cut short leaves a container that does not exist yet
    /// (and a new `create` finishes it), never one that cannot start.
    async fn create(&self, name: &Ident, spec: &ContainerSpec) -> Result<(), DriverError>;

    /// Whether agent `name`'s container has everything it needs to start
    /// (nspawn: its image and its settings file; nixos: its config).
    async fn exists(&self, name: &Ident) -> Result<bool, DriverError>;

    /// Re-apply the container's settings (limits, binds, env).
    async fn rebuild(&self, name: &Ident, spec: &ContainerSpec) -> Result<Outcome, DriverError>;
    /// Whether the container's settings, as this daemon wrote them, bind
    /// the config repos ([`ContainerSpec::repos`]); `None` when the driver
    /// cannot tell (settings it did not write, such as an installation's
    /// own manager container, or a profile whose settings it does not
    /// read back). The service re-renders a manager's settings at start
    /// when they lack the binds (a container made by an older daemon).
    async fn has_repo_binds(&self, _name: &Ident) -> Result<Option<bool>, DriverError> {
        Ok(None)
    }

    /// What a rebuild of `name`'s container would change in the image it
    /// runs — a newer version of the shared agent image, or the move of a
    /// full-copy agent onto it — said for the operator; `None` when
    /// nothing (or the driver keeps no images: the fake, the nixos
    /// profile, whose agents are nix closures).
    async fn image_update(&self, _name: &Ident) -> Result<Option<String>, DriverError> {
        Ok(None)
    }

    /// The agent images this host has and which of `agents` runs which
    /// (`hivectl image ls`, [`images::rows`]); empty when the driver keeps
    /// no images (the nixos profile, whose agents are nix closures).
    async fn images(&self, _agents: &[Ident]) -> Result<Vec<ImageRow>, DriverError> {
        Ok(Vec::new())
    }

    /// Remove the versions of the shared agent image that no container's
    /// settings name and that are not the newest; with `dry_run` only say
    /// which. Answers their names. The driver holds the lock every write
    /// of a container's settings holds, from the check to the removal
    /// (`hivectl image prune`); nothing when it keeps no images.
    async fn prune_images(&self, _dry_run: bool) -> Result<Vec<String>, DriverError> {
        Ok(Vec::new())
    }

    /// Remove the container. `purge` also removes its image.
    async fn destroy(&self, name: &Ident, purge: bool) -> Result<(), DriverError>;

    async fn start(&self, name: &Ident) -> Result<Outcome, DriverError>;

    async fn stop(&self, name: &Ident, mode: StopMode) -> Result<Outcome, DriverError>;

    async fn restart(&self, name: &Ident) -> Result<Outcome, DriverError>;

    /// Send `signal` to every process of the container's unit (systemd's
    /// `KillUnit(unit, "all", signal)`, as `machinectl kill`). A container
    /// that is not running is [`Outcome::AlreadyInState`].
    async fn signal(&self, name: &Ident, signal: Signal) -> Result<Outcome, DriverError>;
}

#[cfg(test)]
#[path = "containers_tests.rs"]
mod tests;
