//! The real container driver: systemd over D-Bus (zbus 5, tokio).
//!
//! [`SystemdDriver`] implements [`ContainerDriver`] with
//! `org.freedesktop.systemd1` (start, stop, kill, restart units; wait for
//! their jobs; watch their state) and `org.freedesktop.machine1` (images).
//!
//! Decisions:
//! - **One connection, one signal stream, one dispatcher task.** At connect
//!   the driver adds one match rule (signals from `org.freedesktop.systemd1`
//!   under `/org/freedesktop/systemd1`), calls `Subscribe()`, and a task
//!   drains that stream forever: `JobRemoved` goes to the job table
//!   ([`jobs`]), `UnitNew`/`UnitRemoved`/`PropertiesChanged` to the view
//!   ([`view`]). One ordered stream matters: systemd sends a unit's
//!   `PropertiesChanged` before the `JobRemoved` of the job that caused it,
//!   so when a start returns, the view already shows the unit active. The
//!   dispatcher never awaits a D-Bus call: zbus blocks its socket reader
//!   when a stream's queue is full, and a task that waits for a reply while
//!   not draining its own stream deadlocks (zbus #350).
//!   Rejected: a proxy and signal stream per unit (a match rule per agent,
//!   and no ordering between streams).
//! - **`view()` makes no D-Bus call**; a full resync runs at connect and
//!   after every reconnect. When the bus connection dies (dbus-daemon
//!   restart), pending job waits end with [`Outcome::Pending`]
//!   (the jobs go on in systemd), the dispatcher reconnects with a backoff
//!   and resyncs; lifecycle calls in between fail with [`DriverError::Bus`].
//! - **"Already in that state" is decided from the view**, because systemd
//!   answers a start of an active unit with a job that is simply `done`.
//! - **A container that was never created is [`DriverError::NoSuchUnit`]**
//!   even though the template unit would accept the start: the nspawn
//!   profile asks machined for the image `h-<n>`, the nixos profile looks
//!   for the container's config file.
//!
//! Settings files are written by [`settings_files`] (each agent in its own
//! user range, [`userns`]; the manager's proposed repos handed to its range
//! by [`handover`]), limits converted by
//! [`limits`], NixOS closures built through the [`builder`] seam; each
//! started container's user namespace gets its own inotify caps
//! ([`inotify`]), and each agent's state its disk quota ([`quota`]).

pub mod builder;
mod dispatch;
pub mod handover;
pub mod images;
pub mod inotify;
pub mod jobs;
mod lifecycle;
pub mod limits;
pub mod proxies;
pub mod prune;
pub mod quota;
mod quota_sys;
pub mod settings_files;
pub mod userns;
pub mod view;

use std::collections::HashMap;
use std::path::PathBuf;
use std::sync::atomic::AtomicBool;
use std::sync::{Arc, Mutex, MutexGuard, PoisonError, RwLock};
use std::time::Duration;

use tokio::sync::broadcast;

use self::builder::{CommandBuilder, SystemBuilder};
use self::jobs::Jobs;
use self::view::View;
use crate::config::Config;
use crate::containers::{
    ContainerDriver, ContainerSpec, DriverError, Outcome, Profile, StopMode, UnitChange, UnitState,
};
use crate::wire::host::Signal;
use crate::wire::ident::Ident;
use crate::wire::images::ImageRow;

/// How long connecting to the bus may take before systemd counts as not
/// reachable.
pub const CONNECT_TIMEOUT: Duration = Duration::from_secs(4);

/// How long a verb waits for its systemd job before it reports
/// [`Outcome::Pending`]. Not an answer budget: the service answers its
/// caller within its own (`service::ANSWER_BUDGET`) while the work goes on
/// in a task, and this wait lets that task see the job's end and record it
/// (an approved spawn ends `approved` once the container is up). systemd's
/// own unit timeouts (`TimeoutStartSec=`) end a stuck job long before this.
pub const JOB_WAIT_LIMIT: Duration = Duration::from_secs(15 * 60);

/// How the driver reaches systemd and lays out containers.
#[derive(Debug, Clone)]
pub struct Settings {
    /// A D-Bus address to use instead of the system bus (tests; the test-bed).
    /// `None` is the system bus, where zbus honours `DBUS_SYSTEM_BUS_ADDRESS`.
    pub bus_address: Option<String>,
    /// How long connecting (and each reconnect) may take.
    pub connect_timeout: Duration,
    /// How long a verb waits for its job before reporting
    /// [`Outcome::Pending`] ([`JOB_WAIT_LIMIT`]).
    pub job_wait_limit: Duration,
    /// The graceful-stop deadline `destroy` uses.
    pub stop_deadline: Duration,
    /// machine1 image `create` clones (nspawn profile).
    pub template_image: String,
    /// Where `h-<n>.nspawn` files go (nspawn profile).
    pub nspawn_dir: PathBuf,
    /// Bind the host's `/usr` into containers created from now on (nspawn
    /// profile; [`Config::bind_host_usr`]).
    pub bind_host_usr: bool,
    /// The shared agent image's store ([`Config::agent_images_dir`],
    /// [`images`]).
    pub agent_images_dir: PathBuf,
    /// Where `h-<n>.conf` files go (nixos profile).
    pub nixos_containers_dir: PathBuf,
    /// Agents that exist (from the store): shown as inactive while systemd
    /// has not loaded their unit.
    pub agents: Vec<Ident>,
    /// Builds NixOS system closures (nixos profile).
    pub builder: Arc<dyn SystemBuilder>,
    /// The inotify caps each started container's user namespace gets, and
    /// the binary whose `limit-userns` sets them ([`inotify`]); `None`:
    /// not set (tests against a fake systemd).
    pub inotify: Option<(inotify::InotifyCaps, PathBuf)>,
    /// Each agent's disk quota and the binary whose `set-quota` sets it
    /// ([`quota`]); `None`: not set (tests against a fake systemd).
    pub disk: Option<quota::DiskSettings>,
}

impl Settings {
    /// Settings from the daemon's config. Without `nixos_build_command` the
    /// nixos profile's `create` fails with a message naming that setting.
    pub fn from_config(config: &Config, agents: Vec<Ident>) -> Self {
        Self {
            bus_address: None,
            connect_timeout: CONNECT_TIMEOUT,
            job_wait_limit: JOB_WAIT_LIMIT,
            stop_deadline: config.stop_deadline(),
            template_image: config.template_image.clone(),
            nspawn_dir: config.nspawn_dir.clone(),
            bind_host_usr: config.bind_host_usr,
            agent_images_dir: config.agent_images_dir.clone(),
            nixos_containers_dir: config.nixos_containers_dir.clone(),
            agents,
            builder: Arc::new(CommandBuilder::new(config.nixos_build_command.clone())),
            // The helper is this very binary (`hive-c0re limit-userns`);
            // without a path to it the caps cannot be set, which each start
            // then says.
            inotify: std::env::current_exe().ok().map(|exe| {
                let caps = inotify::InotifyCaps {
                    instances: config.agent_inotify_instances,
                    watches: config.agent_inotify_watches,
                };
                (caps, exe)
            }),
            disk: std::env::current_exe().ok().map(|exe| quota::DiskSettings {
                limits: config.agent_disk_quota.map(|bytes| quota::DiskLimits {
                    bytes,
                    inodes: config.agent_disk_inodes,
                }),
                required: config.agent_disk_quota_required,
                exe,
            }),
        }
    }
}

/// State shared by the driver's callers and its dispatcher task.
#[derive(Debug)]
struct Shared {
    profile: Profile,
    settings: Settings,
    conn: RwLock<zbus::Connection>,
    view: Mutex<View>,
    jobs: Mutex<Jobs>,
    changes: broadcast::Sender<UnitChange>,
    /// Resyncs run one at a time.
    resync_lock: tokio::sync::Mutex<()>,
    /// Held by every write of a `.nspawn` file, from choosing its `/usr`
    /// to writing it, and by a prune of the image store from its check to
    /// its removal ([`prune`]).
    images_lock: tokio::sync::Mutex<()>,
    /// systemd is reloading (between `Reloading(true)` and `(false)`).
    reloading: AtomicBool,
}

impl Shared {
    fn conn(&self) -> zbus::Connection {
        self.conn
            .read()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }

    fn view(&self) -> MutexGuard<'_, View> {
        self.view.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn jobs(&self) -> MutexGuard<'_, Jobs> {
        self.jobs.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Start the transient oneshot `unit` with `props` and wait up to
    /// `wait` for its job to end: the one way the driver runs a helper of
    /// its own binary outside the daemon's sandbox (the inotify caps, the
    /// disk quota). `Err` is the words why, naming the unit's journal.
    async fn run_oneshot(
        &self,
        unit: &str,
        props: &[(&'static str, zbus::zvariant::Value<'static>)],
        wait: std::time::Duration,
    ) -> Result<(), String> {
        let systemd = proxies::systemd(&self.conn())
            .await
            .map_err(|e| e.to_string())?;
        let job = systemd
            .start_transient_unit(unit, "fail", props, &[])
            .await
            .map_err(|e| format!("{unit}: {e}"))?;
        let mut watch = self.jobs().watch(job.as_str());
        match watch.wait(wait).await {
            jobs::Waited::Removed(result) if result == "done" => Ok(()),
            jobs::Waited::Removed(result) => Err(format!(
                "{unit} ended {result:?}; its journal says why (journalctl -u {unit})"
            )),
            jobs::Waited::Pending | jobs::Waited::Lost => {
                Err(format!("{unit} did not end in time"))
            }
        }
    }

    fn publish(&self, changes: impl IntoIterator<Item = UnitChange>) {
        for change in changes {
            let _ = self.changes.send(change);
        }
    }

    /// Agent `name`'s unit as the view has it; not loaded means inactive.
    fn state(&self, name: &Ident) -> UnitState {
        self.view()
            .get(name)
            .cloned()
            .unwrap_or_else(UnitState::inactive)
    }
}

/// The systemd driver. See the module docs.
#[derive(Debug)]
pub struct SystemdDriver {
    shared: Arc<Shared>,
    dispatcher: tokio::task::JoinHandle<()>,
}

impl SystemdDriver {
    /// Connect to the bus, subscribe to systemd's signals and load the view.
    /// No bus, or no systemd on it, is [`DriverError::Unavailable`]: the
    /// daemon then runs with `containers::unavailable::Unavailable`.
    pub async fn connect(profile: Profile, settings: Settings) -> Result<Self, DriverError> {
        let budget = settings.connect_timeout;
        let (conn, stream) = tokio::time::timeout(budget, dispatch::establish(&settings))
            .await
            .map_err(|_| {
                DriverError::Unavailable(format!(
                    "{} did not answer within {budget:?}",
                    dispatch::bus_label(&settings)
                ))
            })?
            .map_err(|e| {
                DriverError::Unavailable(dispatch::describe_connect_error(&settings, &e))
            })?;
        let mut view = View::default();
        for agent in &settings.agents {
            view.track(agent);
        }
        let shared = Arc::new(Shared {
            profile,
            settings,
            conn: RwLock::new(conn),
            view: Mutex::new(view),
            jobs: Mutex::new(Jobs::default()),
            changes: broadcast::channel(1024).0,
            resync_lock: tokio::sync::Mutex::new(()),
            images_lock: tokio::sync::Mutex::new(()),
            reloading: AtomicBool::new(false),
        });
        let dispatcher = tokio::spawn(dispatch::run(shared.clone(), stream));
        let driver = Self { shared, dispatcher };
        driver.shared.resync().await?;
        // Containers already running (started before the daemon, by an
        // older one or by the host's boot) get their inotify caps now, one
        // at a time, without holding up the start.
        let shared = driver.shared.clone();
        tokio::spawn(async move { shared.cap_running().await });
        Ok(driver)
    }
}

impl Drop for SystemdDriver {
    fn drop(&mut self) {
        self.dispatcher.abort();
    }
}

#[async_trait::async_trait]
impl ContainerDriver for SystemdDriver {
    async fn resync(&self) -> Result<(), DriverError> {
        self.shared.resync().await
    }

    fn view(&self) -> HashMap<Ident, UnitState> {
        self.shared.view().snapshot()
    }

    fn state(&self, agent: &Ident) -> Option<UnitState> {
        self.shared.view().get(agent).cloned()
    }

    fn changes(&self) -> broadcast::Receiver<UnitChange> {
        self.shared.changes.subscribe()
    }

    async fn create(&self, name: &Ident, spec: &ContainerSpec) -> Result<(), DriverError> {
        self.shared.create(name, spec).await
    }

    async fn rebuild(&self, name: &Ident, spec: &ContainerSpec) -> Result<Outcome, DriverError> {
        self.shared.rebuild(name, spec).await
    }

    async fn exists(&self, name: &Ident) -> Result<bool, DriverError> {
        self.shared.exists(name).await
    }

    /// The settings file read back, `.nspawn` or nixos config (`None` for
    /// one without the daemon's header, or none).
    async fn has_repo_binds(&self, name: &Ident) -> Result<Option<bool>, DriverError> {
        let settings = &self.shared.settings;
        let nixos = self.shared.profile == Profile::Nixos;
        let path = if nixos {
            settings_files::nixos_conf_path(&settings.nixos_containers_dir, name)
        } else {
            settings_files::nspawn_path(&settings.nspawn_dir, name)
        };
        let read = tokio::task::spawn_blocking(move || std::fs::read_to_string(path).ok())
            .await
            .ok()
            .flatten();
        Ok(read.as_deref().and_then(|text| {
            if nixos {
                settings_files::nixos_conf_binds(text).map(|(_, _, repos)| repos.is_some())
            } else {
                settings_files::parse_nspawn(text).map(|file| file.spec.repos.is_some())
            }
        }))
    }

    /// The `/usr` its settings file binds against the one a rebuild would
    /// write ([`images::usr_for`]).
    async fn image_update(&self, name: &Ident) -> Result<Option<String>, DriverError> {
        if self.shared.profile != Profile::Nspawn {
            return Ok(None);
        }
        let settings = &self.shared.settings;
        let path = settings_files::nspawn_path(&settings.nspawn_dir, name);
        let (store, host) = (settings.agent_images_dir.clone(), settings.bind_host_usr);
        let read = tokio::task::spawn_blocking(move || {
            let Some(file) = std::fs::read_to_string(path)
                .ok()
                .as_deref()
                .and_then(settings_files::parse_nspawn)
            else {
                return Ok(None);
            };
            let next = images::usr_for(Some(file.usr.clone()), &store, host)?;
            Ok(images::update_said(&file.usr, &next))
        })
        .await
        .map_err(|e| DriverError::Setup(format!("the image check stopped: {e}")))?;
        read.map_err(|e: settings_files::FileError| DriverError::Setup(e.to_string()))
    }

    /// The store's versions and each agent's `/usr` from its `.nspawn`
    /// file's bind line (an agent without a file of this daemon's is not
    /// listed: not created yet, or the installation's own container).
    async fn images(&self, agents: &[Ident]) -> Result<Vec<ImageRow>, DriverError> {
        if self.shared.profile != Profile::Nspawn {
            return Ok(Vec::new());
        }
        let settings = &self.shared.settings;
        let (nspawn_dir, store) = (
            settings.nspawn_dir.clone(),
            settings.agent_images_dir.clone(),
        );
        let agents = agents.to_vec();
        let rows = tokio::task::spawn_blocking(move || {
            let versions = images::read_store(&store)?;
            let used = agents.into_iter().filter_map(|agent| {
                let path = settings_files::nspawn_path(&nspawn_dir, &agent);
                let text = std::fs::read_to_string(path).ok()?;
                let file = settings_files::parse_nspawn(&text)?;
                Some((agent, images::agent_image(&file.usr, &store)))
            });
            Ok(crate::containers::images::rows(&versions, used))
        })
        .await
        .map_err(|e| DriverError::ImageStore(format!("the listing stopped: {e}")))?;
        rows.map_err(|e: settings_files::FileError| DriverError::ImageStore(e.to_string()))
    }

    /// [`prune`], under the image lock, off the reactor.
    async fn prune_images(&self, dry_run: bool) -> Result<Vec<String>, DriverError> {
        if self.shared.profile != Profile::Nspawn {
            return Ok(Vec::new());
        }
        let _images = self.shared.images_lock.lock().await;
        let settings = &self.shared.settings;
        let (store, nspawn_dir) = (
            settings.agent_images_dir.clone(),
            settings.nspawn_dir.clone(),
        );
        tokio::task::spawn_blocking(move || {
            let gone = prune::prunable(&store, &nspawn_dir)?;
            if !dry_run {
                for version in &gone {
                    prune::remove(&store, version)?;
                    tracing::info!("removed the unused agent image version {version}");
                }
            }
            Ok(gone)
        })
        .await
        .map_err(|e| DriverError::ImageStore(format!("the prune stopped: {e}")))?
    }

    async fn destroy(&self, name: &Ident, purge: bool) -> Result<(), DriverError> {
        self.shared.destroy(name, purge).await
    }

    async fn start(&self, name: &Ident) -> Result<Outcome, DriverError> {
        self.shared.start(name).await
    }

    async fn stop(&self, name: &Ident, mode: StopMode) -> Result<Outcome, DriverError> {
        self.shared.stop(name, mode).await
    }

    async fn restart(&self, name: &Ident) -> Result<Outcome, DriverError> {
        self.shared.restart(name).await
    }

    async fn signal(&self, name: &Ident, signal: Signal) -> Result<Outcome, DriverError> {
        self.shared.signal(name, signal).await
    }
}
