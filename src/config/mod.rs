//! The daemon's configuration: a JSON file (the NixOS module renders it) with
//! command-line flags on top.
//!
//! Config is strict where the wire is lenient: an unknown key is an error
//! naming the key, because a typo in a config file otherwise silently keeps a
//! default (e.g. `stop_deadline_sec` would leave the 30 s deadline in place).

use std::num::NonZeroU32;
use std::path::{Path, PathBuf};
use std::time::Duration;

use serde::Deserialize;

use crate::containers::Profile;
use crate::wire::egress::EgressPattern;
use crate::wire::ident::Ident;
use crate::wire::spend::SpendCap;

mod values;
pub use values::parse_size;
use values::{disk_size, kernel_count, nonzero};

/// The config file `serve` reads when `--config` is not given (if it exists).
pub const DEFAULT_CONFIG: &str = "/etc/hive-c0re/config.json";
/// Where the daemon keeps its database and agents' state.
pub const DEFAULT_STATE_DIR: &str = "/var/lib/hyperhive";
/// Where the sockets live; `hive-c0re.socket` owns `host.sock` in it.
pub const DEFAULT_RUNTIME_DIR: &str = "/run/hyperhive";
/// The operator socket's file name inside the runtime directory.
pub const HOST_SOCKET_NAME: &str = "host.sock";
/// The dashboard's socket's file name inside the runtime directory.
pub const WEB_SOCKET_NAME: &str = "web.sock";
/// Where the shipped unit runs the daemon from (`make install`-style
/// setups; the NixOS package rewrites it).
pub const INSTALLED_BINARY: &str = "/usr/local/bin/hive-c0re";
/// The egress service's socket's file name inside the runtime directory.
pub const EGRESS_DIALER_SOCKET_NAME: &str = "egress-dialer.sock";
/// The group whose members may use host.sock.
pub const ADMIN_GROUP: &str = "hive-admin";
/// How long a client of host.sock or web.sock has to send its request's
/// line or head before the connection is closed: no door of the daemon is
/// held open by a client that dribbles or says nothing.
pub const HEAD_DEADLINE: std::time::Duration = std::time::Duration::from_secs(5);
/// The manager agent's logical name.
pub const MANAGER: &str = "ruth";
/// `agent_tasks_max`'s default: room for Claude Code, its Node workers, a
/// build or a test run with their threads, far below the host's pid space.
pub const DEFAULT_TASKS_MAX: u64 = 4096;

/// `agent_inotify_instances`'s default: the kernel's own per user.
pub const DEFAULT_INOTIFY_INSTANCES: NonZeroU32 = nonzero(128);
/// `agent_inotify_watches`'s default.
pub const DEFAULT_INOTIFY_WATCHES: NonZeroU32 = nonzero(65_536);

/// `agent_disk_quota`'s default: 10 GiB.
pub const DEFAULT_DISK_QUOTA: u64 = 10 << 30;
/// `agent_disk_inodes`'s default.
pub const DEFAULT_DISK_INODES: u64 = 1_000_000;

/// Which container driver runs the containers.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq, Deserialize, clap::ValueEnum)]
#[serde(rename_all = "snake_case")]
pub enum DriverKind {
    /// systemd over D-Bus (production).
    #[default]
    Systemd,
    /// The in-memory stand-in (development, tests).
    Fake,
}

/// The effective configuration.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields, default)]
pub struct Config {
    pub state_dir: PathBuf,
    pub runtime_dir: PathBuf,
    pub driver: DriverKind,
    /// `--driver fake` only: how long each start job takes, as a slowly
    /// booting container (`serve --fake-job-delay-ms`; not a config key).
    #[serde(skip)]
    pub fake_job_delay: Duration,
    /// `--driver fake` only: each running container runs the real harness
    /// with the scripted stand-in of Claude Code, this `hive-agent`
    /// program (`serve --demo-agents`; not a config key).
    #[serde(skip)]
    pub demo_agents: Option<PathBuf>,
    pub profile: Profile,
    /// The hive's public domain; enables `urls` and each row's `url`.
    pub domain: Option<String>,
    /// Browser URL of the hive's forge, if it has one.
    pub forge_url: Option<String>,
    /// Browser URL of the hive's matrix client, if it has one.
    pub matrix_url: Option<String>,
    /// How long a graceful stop waits before SIGKILL.
    pub stop_deadline_secs: u64,
    /// machine1 image that `spawn` clones in the nspawn profile.
    pub template_image: String,
    /// Where `.nspawn` settings files are written (nspawn profile).
    pub nspawn_dir: PathBuf,
    /// nspawn profile, without a shared image: bind the host's `/usr`
    /// read-only into each agent created from now on (a template with an
    /// empty `usr/`); false: the image's own (`systemd/image/build`). An
    /// agent keeps it (its `.nspawn` file says it) across restarts.
    pub bind_host_usr: bool,
    /// nspawn profile: the shared image's store (`systemd/image/share`): agents created or
    /// rebuilt bind its `current` version, but host-`/usr` ones (`systemd::dbus::images`).
    pub agent_images_dir: PathBuf,
    /// Where NixOS container configs are written (nixos profile).
    pub nixos_containers_dir: PathBuf,
    /// The command that builds an agent's NixOS system closure (nixos
    /// profile): argv, `h-<n>` appended — and, for an agent whose deployed
    /// config has `agent.nix`, its exported tree and commit sha after it;
    /// prints the store path last.
    pub nixos_build_command: Vec<String>,
    /// Deprecated, unused: approvals of every kind are now carried out by
    /// the hive itself (`update_meta_inputs` by `nix_command` in
    /// `meta_flake`). Still accepted so old config files load; a non-empty
    /// one is warned about at start ([`Config::deprecations`]).
    pub approval_command: Vec<String>,
    /// The hive's meta flake (nixos profile): a directory the operator
    /// gives the hive, a git repository with `flake.nix` and `flake.lock`,
    /// never an agent's. An approved `update_meta_inputs` runs `nix flake
    /// update` of the inputs it names there, commits `flake.lock`, and
    /// rebuilds the agents whose base changed. `None`: such requests are
    /// refused, naming this key.
    pub meta_flake: Option<PathBuf>,
    /// The `nix` the hive runs for `update_meta_inputs` (argv, no shell):
    /// `<nix_command> --extra-experimental-features "nix-command flakes"
    /// flake update --flake <meta_flake> <inputs>` (Nix 2.19 or later).
    pub nix_command: Vec<String>,
    /// The command the hive runs to tell the operator (an agent needs a
    /// person, an approval waits, a container crashed, a budget was
    /// reached): argv, no shell,
    /// one JSON event (`wire::notify`) on its stdin. Empty: none.
    pub notify_command: Vec<String>,
    /// Least seconds between two runs of `notify_command` for the same
    /// event and agent; events inside it are dropped (logged at debug).
    pub notify_interval_secs: u64,
    /// Rebuild, at start, every agent whose base changed since it was
    /// built (`needs_update`), as `hivectl rebuild` would (a running one
    /// is restarted; a stopped one stays stopped). Off: the manager hears
    /// `needs_update` and decides (`update`).
    pub auto_update: bool,
    /// `CPUQuota=` for every agent container.
    pub agent_cpu_quota: Option<String>,
    /// `MemoryMax=` for every agent container.
    pub agent_memory_max: Option<String>,
    /// `TasksMax=` for every agent container: the processes and threads
    /// it may hold at once (issue 44: systemd's default, 15% of the host's
    /// pid_max, let one agent start 17,000 threads). `null`: no limit.
    pub agent_tasks_max: Option<u64>,
    /// inotify instances each user of an agent's container may hold (its
    /// user namespace's `max_inotify_instances`, set at each start by the
    /// hive; issue 44: without it one agent took root's whole
    /// `fs.inotify.max_user_instances`). The kernel's own default per user:
    /// one per watching process (Node's libuv shares one per process).
    #[serde(deserialize_with = "kernel_count")]
    pub agent_inotify_instances: NonZeroU32,
    /// inotify watches each user of an agent's container may hold (its
    /// `max_inotify_watches`): one per watched directory; 65,536 holds a
    /// large repository's tree for a file watcher (what editors ask of a
    /// workstation is 8 to 16 times that; an agent watches one tree).
    #[serde(deserialize_with = "kernel_count")]
    pub agent_inotify_watches: NonZeroU32,
    /// Bytes each agent's state (and image) directory may hold: a project
    /// quota set before each start (`systemd::dbus::quota`; issue 44: one
    /// agent filled the disk `hive.db` lives on). Bytes, or a number with
    /// K, M, G or T (powers of 1024) as `agent_memory_max` is written;
    /// `null`: no quota. 10 GiB: an agent's image (about 2 GiB with Node
    /// and Claude Code), a large repository's checkout and build output,
    /// and its transcripts, with room to spare; the operator sizes
    /// `max_agents` times it against the disk.
    #[serde(deserialize_with = "disk_size")]
    pub agent_disk_quota: Option<u64>,
    /// Files and directories (inodes) each agent may hold under the same
    /// quota: a million is a few large `node_modules` trees, and bounds
    /// an agent that would take the file system's inodes with empty files.
    pub agent_disk_inodes: u64,
    /// Refuse to start an agent whose state cannot be held to its quota
    /// (no project quota on the file system, or the quota could not be
    /// set): `no_disk_quota`. Off by default: a hive on a file system
    /// without project quota then runs its agents unlimited, with a
    /// warning at start.
    pub agent_disk_quota_required: bool,
    /// Most agents the hive manages, the manager included; `spawn` past it
    /// is refused. The daemon's open-files limit must hold
    /// [`Config::fd_budget`]: it warns at start when it does not.
    pub max_agents: usize,
    /// Largest message body the broker accepts, in bytes.
    pub max_body_bytes: usize,
    /// How long handled messages are kept before they are vacuumed.
    pub message_retention_secs: u64,
    /// Read logs from journal files in this directory (`journalctl
    /// --directory=`) instead of the host journal: tests, and hosts whose
    /// journal lives elsewhere. Container logs need the host journal.
    pub journal_directory: Option<PathBuf>,
    /// How long an agent may wait on a person (its hooks report a
    /// permission prompt, a question or idleness) before the manager gets
    /// a `needs_attention` event; 0 = never.
    pub attention_after_secs: u64,
    /// This hive's name in its swarm: other hives address its agents as
    /// `agent@<hive_name>`. Required with `swarm`.
    pub hive_name: Option<Ident>,
    /// The swarm's name: it names the bus stream, subjects and roster
    /// bucket, so several swarms can share one NATS. Required with `swarm`.
    pub swarm_name: Option<Ident>,
    /// Joining a swarm over NATS JetStream (see `src/swarm/README.md`).
    /// Absent: the hive runs alone, with no NATS.
    pub swarm: Option<SwarmConfig>,
    /// Open connections one agent socket serves at once; past it a
    /// connection gets an `err` line naming the limit and is closed.
    pub agent_max_connections: usize,
    /// How long an agent connection may stay silent between requests (or
    /// take to finish a request line) before it is closed; a long-polling
    /// `recv` is not silence.
    pub agent_idle_timeout_secs: u64,
    /// Bytes of message bodies one answer on an agent socket carries at
    /// most (`recv` pops fewer, `recent` is cut with `truncated`, journal
    /// reads end with a truncation line).
    pub agent_max_answer_bytes: usize,
    /// Pending messages one inbox holds; past it `send` to it is refused.
    pub inbox_max_messages: u64,
    /// Bytes of pending message bodies one inbox holds; past it `send` to
    /// it is refused.
    pub inbox_max_bytes: u64,
    /// Bytes of transient wakes kept in memory per agent; past it the
    /// oldest are dropped (logged).
    pub transient_max_bytes: usize,
    /// Pending approval requests one agent (the manager included) may hold;
    /// past it a request is refused (`too_many_pending`) until the operator
    /// decides one. The same request asked again while pending is answered
    /// with its row and takes no slot. The operator's requests are not
    /// counted.
    pub agent_max_pending_approvals: usize,
    /// The `host[:port]` / `*.domain[:port]` patterns every agent may reach
    /// through the hive's egress proxy (its `egress.sock`); the operator's
    /// grants (`hivectl grant N --egress HOST`) add to them per agent. None by
    /// default: the model is the model gateway's (issue 46), never direct.
    pub egress_allow: Vec<EgressPattern>,
    /// Egress audit rows kept per agent, its newest (`hivectl egress-log`).
    pub egress_audit_rows_per_agent: NonZeroU32,
    /// The `LoadCredential=` name (never a value) of the credential the model
    /// gateway puts on every agent's requests; none: each agent's own login.
    pub model_credential: Option<crate::wire::model_log::CredentialName>,
    /// Default spend caps on the whole hive (`["100usd/day"]`; AMOUNT as
    /// `hivectl budget` takes it). A cap the operator sets on the hive
    /// replaces the default of its unit (usd or tokens); unsetting it
    /// brings the default back. None by default.
    pub budget_hive: Vec<SpendCap>,
    /// Default spend caps on each agent's own turns (`["10usd/day"]`),
    /// unless the operator set a cap of that unit on the agent. None by
    /// default.
    pub budget_each_agent: Vec<SpendCap>,
    /// A reached budget also ends the turns in progress of the agents it
    /// covers (as `hivectl interrupt` would, with a note saying which
    /// budget), and token budgets count a running turn's tokens as its
    /// harness reports them. Off by default: a reached budget holds new
    /// turns only.
    pub budget_hard_cap: bool,
    /// Seconds the model gateway holds a held agent's model request before
    /// answering it the budget's error (0: at once; over a day: a day). 300:
    /// half of Claude Code's own request timeout, so the agent reads why.
    pub budget_hold_secs: u64,
}

/// How the hive reaches its swarm's NATS servers.
#[derive(Debug, Clone, PartialEq, Eq, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct SwarmConfig {
    /// NATS server URLs (`nats://host:4222`, `tls://host:4222`); the client
    /// fails over among them and reconnects for ever.
    pub urls: Vec<String>,
    /// A NATS `.creds` file (user JWT + nkey seed), for operator-mode
    /// accounts.
    #[serde(default)]
    pub credentials_file: Option<PathBuf>,
    /// A user of the servers' `authorization` block, with `password_file`.
    #[serde(default)]
    pub user: Option<String>,
    /// A file whose first line is `user`'s password (kept out of the
    /// config, which the NixOS module puts in the world-readable store).
    #[serde(default)]
    pub password_file: Option<PathBuf>,
    /// PEM file of the CA that signed the servers' certificates; setting it
    /// makes TLS required.
    #[serde(default)]
    pub tls_ca_file: Option<PathBuf>,
    /// Replicas of the swarm's stream and roster bucket (1 for one server,
    /// 3 for a three-node cluster).
    #[serde(default = "default_replicas")]
    pub replicas: usize,
}

fn default_replicas() -> usize {
    3
}

impl Default for Config {
    fn default() -> Self {
        Self {
            state_dir: DEFAULT_STATE_DIR.into(),
            runtime_dir: DEFAULT_RUNTIME_DIR.into(),
            driver: DriverKind::Systemd,
            fake_job_delay: Duration::ZERO,
            demo_agents: None,
            profile: Profile::Nspawn,
            domain: None,
            forge_url: None,
            matrix_url: None,
            stop_deadline_secs: 30,
            template_image: "hive-template".into(),
            nspawn_dir: "/etc/systemd/nspawn".into(),
            bind_host_usr: true,
            agent_images_dir: "/var/lib/hive-images".into(),
            nixos_containers_dir: "/etc/nixos-containers".into(),
            nixos_build_command: Vec::new(),
            approval_command: Vec::new(),
            meta_flake: None,
            nix_command: vec!["nix".into()],
            notify_command: Vec::new(),
            notify_interval_secs: 60,
            auto_update: false,
            agent_cpu_quota: Some("200%".into()),
            agent_memory_max: Some("4G".into()),
            agent_tasks_max: Some(DEFAULT_TASKS_MAX),
            agent_inotify_instances: DEFAULT_INOTIFY_INSTANCES,
            agent_inotify_watches: DEFAULT_INOTIFY_WATCHES,
            agent_disk_quota: Some(DEFAULT_DISK_QUOTA),
            agent_disk_inodes: DEFAULT_DISK_INODES,
            agent_disk_quota_required: false,
            max_agents: 1000,
            max_body_bytes: 64 * 1024,
            message_retention_secs: 7 * 24 * 3600,
            journal_directory: None,
            attention_after_secs: 300,
            hive_name: None,
            swarm_name: None,
            swarm: None,
            agent_max_connections: 16,
            agent_idle_timeout_secs: 600,
            agent_max_answer_bytes: 4 << 20,
            inbox_max_messages: 10_000,
            inbox_max_bytes: 64 << 20,
            transient_max_bytes: 1 << 20,
            agent_max_pending_approvals: 16,
            egress_allow: Vec::new(),
            egress_audit_rows_per_agent: crate::wire::egress_audit::DEFAULT_ROWS_PER_AGENT,
            model_credential: None,
            budget_hive: Vec::new(),
            budget_each_agent: Vec::new(),
            budget_hard_cap: false,
            budget_hold_secs: 300,
        }
    }
}

/// Why the configuration could not be loaded.
#[derive(Debug, thiserror::Error)]
pub enum ConfigError {
    #[error("cannot read config file {path}")]
    Read {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    #[error("config file {path} is not valid")]
    Parse {
        path: PathBuf,
        #[source]
        source: serde_json::Error,
    },
    /// A `swarm` section without the names it needs.
    #[error("config file {path} has a `swarm` section but no `{missing}`; set it")]
    SwarmIncomplete {
        path: PathBuf,
        missing: &'static str,
    },
}

/// File descriptors kept beside the agents' in [`Config::fd_budget`]:
/// host.sock and dashboard clients, the database, journalctl pipes.
pub const FD_RESERVE: u64 = 1024;

impl Config {
    /// Read a config file; every key is optional, unknown keys are errors.
    pub fn load(path: &Path) -> Result<Self, ConfigError> {
        let bytes = std::fs::read(path).map_err(|source| ConfigError::Read {
            path: path.to_path_buf(),
            source,
        })?;
        Self::parse(&bytes, path)
    }

    /// The config in `bytes`, the contents of the file at `path` (named in
    /// the errors). Any bytes at all get a config or an error, never a
    /// panic (`tests/fuzz.rs`).
    pub fn parse(bytes: &[u8], path: &Path) -> Result<Self, ConfigError> {
        let config: Self = serde_json::from_slice(bytes).map_err(|source| ConfigError::Parse {
            path: path.to_path_buf(),
            source,
        })?;
        if config.swarm.is_some() {
            let missing = if config.hive_name.is_none() {
                Some("hive_name")
            } else if config.swarm_name.is_none() {
                Some("swarm_name")
            } else {
                None
            };
            if let Some(missing) = missing {
                return Err(ConfigError::SwarmIncomplete {
                    path: path.to_path_buf(),
                    missing,
                });
            }
        }
        Ok(config)
    }

    /// What the operator should change in this config: each a sentence
    /// naming a key that is still accepted but does nothing any more (the
    /// daemon logs them at start).
    pub fn deprecations(&self) -> Vec<String> {
        let mut said = Vec::new();
        if !self.approval_command.is_empty() {
            said.push(
                "approval_command is deprecated and ignored: approvals are carried out by the \
                 hive itself (update_meta_inputs runs nix_command in meta_flake); remove it \
                 from the config"
                    .to_owned(),
            );
        }
        said
    }

    /// This hive's name when it is in a swarm (`swarm` and `hive_name`
    /// set); `None` when it runs alone.
    pub fn swarm_hive(&self) -> Option<&Ident> {
        self.swarm.as_ref().and(self.hive_name.as_ref())
    }

    /// `<runtime-dir>/host.sock`.
    pub fn host_socket(&self) -> PathBuf {
        self.runtime_dir.join(HOST_SOCKET_NAME)
    }

    /// `<runtime-dir>/web.sock`: the dashboard.
    pub fn web_socket(&self) -> PathBuf {
        self.runtime_dir.join(WEB_SOCKET_NAME)
    }

    /// The SQLite database file.
    pub fn database(&self) -> PathBuf {
        self.state_dir.join("hive.db")
    }

    /// An agent's persistent state directory.
    pub fn agent_state_dir(&self, name: &Ident) -> PathBuf {
        self.state_dir.join("agents").join(name.as_str())
    }

    /// An agent's runtime directory: the container's `/run/hive`.
    pub fn agent_runtime_dir(&self, name: &Ident) -> PathBuf {
        self.runtime_dir.join("agents").join(name.as_str())
    }

    /// Where agent sockets are bound before they are renamed into place
    /// (the daemon's own, `0700`).
    pub fn socket_staging_dir(&self) -> PathBuf {
        self.runtime_dir.join(".staging")
    }

    /// The egress service's socket (`hive-c0re-egress.socket`), which the
    /// daemon hands agents' egress connections to.
    pub fn egress_dialer_socket(&self) -> PathBuf {
        self.runtime_dir.join(EGRESS_DIALER_SOCKET_NAME)
    }

    /// The manager's runtime directory.
    pub fn manager_runtime_dir(&self) -> PathBuf {
        self.runtime_dir.join("manager")
    }

    /// The file descriptors a full hive may hold at worst: every agent's
    /// two sockets (`mcp.sock`, `egress.sock`) with its
    /// `agent_max_connections` slots open (an egress connection takes two
    /// slots for its two fds), and
    /// [`FD_RESERVE`] for the rest. The NixOS module sets `LimitNOFILE=`
    /// from the same sum.
    pub fn fd_budget(&self) -> u64 {
        let per_agent = self.agent_max_connections as u64 + 2;
        (self.max_agents as u64).saturating_mul(per_agent) + FD_RESERVE
    }

    /// [`Config::agent_idle_timeout_secs`] as a duration.
    pub fn agent_idle_timeout(&self) -> Duration {
        Duration::from_secs(self.agent_idle_timeout_secs)
    }

    pub fn stop_deadline(&self) -> Duration {
        Duration::from_secs(self.stop_deadline_secs)
    }

    /// The manager's name as an [`Ident`].
    pub fn manager(&self) -> Ident {
        Ident::from_static(MANAGER)
    }
}

/// What `hive-c0re serve`'s flags set; each `Some` overrides the file.
#[derive(Debug, Clone, Default)]
pub struct Overrides {
    /// The config file; `None`: [`DEFAULT_CONFIG`] when it exists.
    pub file: Option<PathBuf>,
    pub state_dir: Option<PathBuf>,
    pub runtime_dir: Option<PathBuf>,
    pub driver: Option<DriverKind>,
    pub domain: Option<String>,
    pub fake_job_delay: Option<Duration>,
    pub demo_agents: Option<PathBuf>,
}

impl Config {
    /// The config file (or the defaults when there is none), then the flags
    /// on top.
    pub fn with_overrides(flags: Overrides) -> Result<Self, ConfigError> {
        let default = PathBuf::from(DEFAULT_CONFIG);
        let file = flags.file.or_else(|| default.exists().then_some(default));
        let mut config = match file {
            Some(path) => Self::load(&path)?,
            None => Self::default(),
        };
        if let Some(v) = flags.state_dir {
            config.state_dir = v;
        }
        if let Some(v) = flags.runtime_dir {
            config.runtime_dir = v;
        }
        if let Some(v) = flags.driver {
            config.driver = v;
        }
        if flags.domain.is_some() {
            config.domain = flags.domain;
        }
        if let Some(v) = flags.fake_job_delay {
            config.fake_job_delay = v;
        }
        if flags.demo_agents.is_some() {
            config.demo_agents = flags.demo_agents;
        }
        Ok(config)
    }
}

#[cfg(test)]
#[path = "config_tests.rs"]
mod tests;
