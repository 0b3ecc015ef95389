//! The lifecycle verbs: what each asks systemd and machined, and how their
//! answers become [`Outcome`]s and [`DriverError`]s.
//!
//! - start / restart: `StartUnit` / `RestartUnit` ("replace"), then the job's
//!   `JobRemoved`, waited for up to the job wait limit (minutes, not the
//!   caller's answer budget: the service answers its caller on time and
//!   lets this wait go on in a task, so the job's end is recorded);
//!   past it, or with the bus gone, [`Outcome::Pending`].
//! - stop, graceful: `StopUnit`, wait up to the deadline, then
//!   `KillUnit(unit, "all", SIGKILL)` and wait (job wait limit) for the same
//!   stop job, which ends once the processes are gone. Rejected: relying on
//!   the unit's own `TimeoutStopSec=` (90 s for nspawn units, not ours to
//!   choose per call).
//! - stop, hard: `KillUnit(..., SIGKILL)`, then wait on the view until the
//!   unit is `inactive` or `failed` (systemd leaves it failed, result
//!   `signal`). A stopped unit is [`Outcome::AlreadyInState`]; a failed one
//!   has nothing left to kill, and a graceful stop resets its failed state.
//! - signal: machined `KillMachine(h-<n>, "leader", SIG)` on a running unit:
//!   the container's init only, as `podman kill` and `machinectl kill
//!   --kill-whom=leader`. Rejected: `KillUnit(unit, "all", SIG)`
//!   (`machinectl kill`'s default), which also hits `systemd-nspawn` and
//!   every process inside: for SIGTERM nspawn forwards a halt to the init
//!   while the init, as PID 1, takes its own SIGTERM as "re-execute", and
//!   the halt is lost when the re-exec wins (the container stayed up in the
//!   test-bed); every daemon inside got SIGTERM besides. The view shows
//!   what the init made of the signal.
//! - before a start or restart: the agent's state gets its disk quota
//!   ([`super::quota`]); after one that is done: the container's user
//!   namespace gets its inotify caps ([`super::inotify`]).
//! - create (nspawn): machined `CloneImage(template, h-<n>)` unless the image
//!   exists, the `.nspawn` file, limits by `SetUnitProperties`; (nixos):
//!   build, then `h-<n>.conf`, limits.
//! - destroy: graceful stop (config deadline), remove the settings file,
//!   `RevertUnitFiles` (drops the limit drop-ins), with `purge` machined
//!   `RemoveImage` (nspawn; nixos closures are left to nix's GC).

use std::path::PathBuf;
use std::time::Duration;

use tokio::sync::broadcast::error::RecvError;

use super::jobs::{JobWait, Waited, failure_outcome};
use super::settings_files::{self, FileError};
use super::{Shared, handover, images, limits, proxies, userns};
use crate::containers::{
    ActiveState, ContainerSpec, DriverError, Outcome, Profile, StopMode, machine_name,
};
use crate::errors::chain;
use crate::wire::host::Signal;
use crate::wire::ident::Ident;

const NO_SUCH_UNIT: &str = "org.freedesktop.systemd1.NoSuchUnit";
const NO_SUCH_PROCESS: &str = "org.freedesktop.systemd1.NoSuchProcess";
const NO_SUCH_IMAGE: &str = "org.freedesktop.machine1.NoSuchImage";
const NO_SUCH_MACHINE: &str = "org.freedesktop.machine1.NoSuchMachine";
const SIGKILL: i32 = 9;

/// What [`Shared::isolate`] learnt of an agent: its range's base and its
/// state directory (`None`: settings the hive did not write).
type Isolated = Option<(u32, PathBuf)>;

/// The D-Bus error name of a failed call, if it was an error reply.
fn error_name(e: &zbus::Error) -> Option<String> {
    match e {
        zbus::Error::MethodError(name, _, _) => Some(name.to_string()),
        zbus::Error::FDO(fdo) => Some(zbus::DBusError::name(fdo.as_ref()).to_string()),
        _ => None,
    }
}

/// A failed call about `unit` in the caller's terms.
fn bus_error(e: zbus::Error, unit: &str) -> DriverError {
    match error_name(&e).as_deref() {
        Some(NO_SUCH_UNIT) => DriverError::NoSuchUnit {
            unit: unit.to_owned(),
        },
        _ if matches!(e, zbus::Error::InputOutput(_)) => DriverError::Bus(format!(
            "the connection to the system bus is down ({e}); hive-c0re reconnects by itself, \
             try again in a moment"
        )),
        _ => DriverError::Bus(format!("{unit}: {e}")),
    }
}

fn setup(e: impl std::fmt::Display) -> DriverError {
    DriverError::Setup(e.to_string())
}

#[derive(Debug, Clone, Copy)]
enum Verb {
    Start,
    Stop,
    Restart,
}

impl Verb {
    fn word(self) -> &'static str {
        match self {
            Self::Start => "start",
            Self::Stop => "stop",
            Self::Restart => "restart",
        }
    }
}

/// Run blocking file work off the reactor.
async fn blocking<T: Send + 'static>(
    f: impl FnOnce() -> Result<T, FileError> + Send + 'static,
) -> Result<T, DriverError> {
    tokio::task::spawn_blocking(f)
        .await
        .map_err(setup)?
        .map_err(|e| setup(chain(&e)))
}

impl Shared {
    fn unit(&self, name: &Ident) -> String {
        self.profile.unit_name(name)
    }

    fn job_wait(&self) -> Duration {
        self.settings.job_wait_limit
    }

    /// Queue a job and register for its end.
    async fn queue(&self, verb: Verb, unit: &str) -> Result<JobWait, DriverError> {
        let conn = self.conn();
        let systemd = proxies::systemd(&conn)
            .await
            .map_err(|e| bus_error(e, unit))?;
        let job = match verb {
            Verb::Start => systemd.start_unit(unit, "replace").await,
            Verb::Stop => systemd.stop_unit(unit, "replace").await,
            Verb::Restart => systemd.restart_unit(unit, "replace").await,
        }
        .map_err(|e| bus_error(e, unit))?;
        Ok(self.jobs().watch(job.as_str()))
    }

    fn finish(&self, verb: Verb, unit: &str, waited: Waited) -> Result<Outcome, DriverError> {
        match waited {
            Waited::Removed(result) => match failure_outcome(&result) {
                None => Ok(Outcome::Done),
                Some(outcome) => Err(DriverError::JobFailed {
                    verb: verb.word(),
                    unit: unit.to_owned(),
                    outcome,
                }),
            },
            // Lost: the bus went away; the job goes on and the resync after
            // the reconnect shows where it ended.
            Waited::Pending | Waited::Lost => {
                tracing::info!(%unit, "{} job still running in systemd", verb.word());
                Ok(Outcome::Pending)
            }
        }
    }

    /// What of the container is there: (its image, its settings file).
    /// The nixos profile has no image of its own (its closure is nix's):
    /// its config file stands for both.
    async fn parts(&self, name: &Ident) -> Result<(bool, bool), DriverError> {
        let settings = match self.profile {
            Profile::Nspawn => settings_files::nspawn_path(&self.settings.nspawn_dir, name),
            Profile::Nixos => {
                settings_files::nixos_conf_path(&self.settings.nixos_containers_dir, name)
            }
        };
        let settings = tokio::fs::try_exists(&settings).await.unwrap_or(false);
        if self.profile == Profile::Nixos {
            return Ok((settings, settings));
        }
        let unit = self.unit(name);
        let conn = self.conn();
        let machined = proxies::machined(&conn)
            .await
            .map_err(|e| bus_error(e, &unit))?;
        let image = match machined.get_image(&machine_name(name)).await {
            Ok(_) => true,
            Err(e) if error_name(&e).as_deref() == Some(NO_SUCH_IMAGE) => false,
            Err(e) => return Err(bus_error(e, &unit)),
        };
        Ok((image, settings))
    }

    /// The container has everything it needs to start: its image and its
    /// settings file (without the settings there is no `/usr` bind, and
    /// the unit fails at once). `create` writes the settings first and
    /// makes the image last, so a daemon killed in between leaves no image,
    /// and the agent reads as not created (a start creates it).
    pub(super) async fn exists(&self, name: &Ident) -> Result<bool, DriverError> {
        let (image, settings) = self.parts(name).await?;
        Ok(image && settings)
    }

    async fn ensure_exists(&self, name: &Ident) -> Result<(), DriverError> {
        if self.exists(name).await? {
            Ok(())
        } else {
            Err(DriverError::NoSuchUnit {
                unit: self.unit(name),
            })
        }
    }

    /// Before a start (nspawn): the agent's user range and its settings
    /// file agree, whatever version wrote the file; the manager's repo
    /// binds are there and its proposed repos its user's
    /// ([`handover::repo_binds_ready`]). An agent created before
    /// user ranges (`PrivateUsers=no`, host network, its state root's) gets
    /// its range, its state adopted and the file rewritten here, on its
    /// first start after the upgrade. A file that is not ours (the
    /// manager's, from the installation) is left alone. The range's base
    /// and the state directory, when the file is ours.
    async fn isolate(&self, name: &Ident) -> Result<Isolated, DriverError> {
        if self.profile == Profile::Nixos {
            return self.isolate_nixos(name).await;
        }
        let path = settings_files::nspawn_path(&self.settings.nspawn_dir, name);
        let n = name.clone();
        blocking(move || {
            let Ok(text) = std::fs::read_to_string(&path) else {
                return Ok(None);
            };
            let Some(file) = settings_files::parse_nspawn(&text) else {
                return Ok(None);
            };
            let base = userns::ensure(&n, &file.spec.state_dir, &file.spec.runtime_dir)?;
            if let Some(repos) = &file.spec.repos {
                handover::repo_binds_ready(repos, base)?;
            }
            if file.base != Some(base) || !text.contains("Private=yes") {
                tracing::info!(agent = %n, base, "{n}: settings file moved to its own user range");
                let text = settings_files::render_nspawn(&n, &file.spec, base, &file.usr)?;
                settings_files::write_atomically(&path, &text)?;
            }
            Ok(Some((base, file.spec.state_dir)))
        })
        .await
    }

    /// [`Self::isolate`] for the nixos profile: a config written before
    /// user ranges gets its range and is rewritten (its system unchanged);
    /// the manager's repo binds are made ready as in the nspawn profile.
    async fn isolate_nixos(&self, name: &Ident) -> Result<Isolated, DriverError> {
        let path = settings_files::nixos_conf_path(&self.settings.nixos_containers_dir, name);
        let n = name.clone();
        blocking(move || {
            let Ok(text) = std::fs::read_to_string(&path) else {
                return Ok(None);
            };
            let Some((state, runtime, repos)) = settings_files::nixos_conf_binds(&text) else {
                return Ok(None);
            };
            let base = userns::ensure(&n, &state, &runtime)?;
            if let Some(repos) = &repos {
                handover::repo_binds_ready(repos, base)?;
            }
            if let Some((text, _, _)) = settings_files::isolate_nixos_conf(&text, base) {
                tracing::info!(agent = %n, base, "{n}: nixos config moved to its own user range");
                settings_files::write_atomically(&path, &text)?;
            }
            Ok(Some((base, state)))
        })
        .await
    }

    /// [`Self::isolate`], then the agent's disk quota.
    async fn prepare(&self, name: &Ident) -> Result<(), DriverError> {
        match self.isolate(name).await? {
            Some((base, state)) => self.limit_disk(name, base, state).await,
            None => Ok(()),
        }
    }

    pub(super) async fn start(&self, name: &Ident) -> Result<Outcome, DriverError> {
        self.ensure_exists(name).await?;
        if self.state(name).is_running() {
            return Ok(Outcome::AlreadyInState);
        }
        self.prepare(name).await?;
        let unit = self.unit(name);
        let mut job = self.queue(Verb::Start, &unit).await?;
        let waited = job.wait(self.job_wait()).await;
        let outcome = self.finish(Verb::Start, &unit, waited)?;
        self.cap_inotify(name, outcome).await;
        Ok(outcome)
    }

    pub(super) async fn restart(&self, name: &Ident) -> Result<Outcome, DriverError> {
        self.ensure_exists(name).await?;
        self.prepare(name).await?;
        let unit = self.unit(name);
        let mut job = self.queue(Verb::Restart, &unit).await?;
        let waited = job.wait(self.job_wait()).await;
        let outcome = self.finish(Verb::Restart, &unit, waited)?;
        self.cap_inotify(name, outcome).await;
        Ok(outcome)
    }

    pub(super) async fn stop(&self, name: &Ident, mode: StopMode) -> Result<Outcome, DriverError> {
        self.ensure_exists(name).await?;
        let unit = self.unit(name);
        match self.state(name).active {
            ActiveState::Inactive => return Ok(Outcome::AlreadyInState),
            // Nothing runs; a graceful stop also clears the failed state (as
            // `systemctl reset-failed`), a hard one leaves it for the roster.
            ActiveState::Failed => {
                if matches!(mode, StopMode::Graceful { .. }) {
                    let conn = self.conn();
                    let systemd = proxies::systemd(&conn)
                        .await
                        .map_err(|e| bus_error(e, &unit))?;
                    systemd
                        .reset_failed_unit(&unit)
                        .await
                        .map_err(|e| bus_error(e, &unit))?;
                }
                return Ok(Outcome::Done);
            }
            _ => {}
        }
        match mode {
            StopMode::Graceful { deadline } => {
                let mut job = self.queue(Verb::Stop, &unit).await?;
                match job.wait(deadline).await {
                    Waited::Pending => {
                        tracing::info!(%unit, ?deadline, "stop deadline passed, sending SIGKILL");
                        self.kill(&unit).await?;
                        let waited = job.wait(self.job_wait()).await;
                        self.finish(Verb::Stop, &unit, waited)
                    }
                    waited => self.finish(Verb::Stop, &unit, waited),
                }
            }
            StopMode::Hard => {
                let mut changes = self.changes.subscribe();
                self.kill(&unit).await?;
                let deadline = tokio::time::Instant::now() + self.job_wait();
                loop {
                    if matches!(
                        self.state(name).active,
                        ActiveState::Inactive | ActiveState::Failed
                    ) {
                        return Ok(Outcome::Done);
                    }
                    match tokio::time::timeout_at(deadline, changes.recv()).await {
                        Ok(Ok(_) | Err(RecvError::Lagged(_))) => {}
                        Ok(Err(RecvError::Closed)) | Err(_) => return Ok(Outcome::Pending),
                    }
                }
            }
        }
    }

    /// `signal`: machined `KillMachine(h-<n>, "leader", signal)` on a
    /// running unit: the container's init (`machinectl kill
    /// --kill-whom=leader`, what `podman kill` signals); the view follows
    /// whatever the init makes of it.
    pub(super) async fn signal(
        &self,
        name: &Ident,
        signal: Signal,
    ) -> Result<Outcome, DriverError> {
        self.ensure_exists(name).await?;
        if !self.state(name).is_running() {
            return Ok(Outcome::AlreadyInState);
        }
        let machine = machine_name(name);
        let conn = self.conn();
        let machined = proxies::machined(&conn)
            .await
            .map_err(|e| bus_error(e, &machine))?;
        match machined
            .kill_machine(&machine, "leader", signal.number())
            .await
        {
            Ok(()) => Ok(Outcome::Done),
            Err(e) if error_name(&e).as_deref() == Some(NO_SUCH_MACHINE) => {
                Err(DriverError::Bus(format!(
                    "{machine} is not registered with machined (its unit is running, the \
                     container not yet or no longer); try again in a moment"
                )))
            }
            Err(e) => Err(bus_error(e, &machine)),
        }
    }

    /// SIGKILL every process of the unit; none left is fine.
    async fn kill(&self, unit: &str) -> Result<(), DriverError> {
        let conn = self.conn();
        let systemd = proxies::systemd(&conn)
            .await
            .map_err(|e| bus_error(e, unit))?;
        match systemd.kill_unit(unit, "all", SIGKILL).await {
            Err(e) if error_name(&e).as_deref() != Some(NO_SUCH_PROCESS) => Err(bus_error(e, unit)),
            _ => Ok(()),
        }
    }

    /// Write the container's settings file (its user range first,
    /// [`userns::ensure`]; nixos: its system built before that); its `/usr`
    /// by [`images::usr_for`] (a rebuild moves it to the shared image's
    /// current version), under the image lock ([`super::prune`]).
    async fn write_settings(&self, name: &Ident, spec: &ContainerSpec) -> Result<(), DriverError> {
        // No prune removes the version chosen here before the file names it.
        let _images = match self.profile {
            Profile::Nspawn => Some(self.images_lock.lock().await),
            Profile::Nixos => None,
        };
        let (path, text) = match self.profile {
            Profile::Nspawn => {
                // Check the spec before a directory is made or chowned.
                settings_files::render_nspawn(name, spec, 0, &settings_files::Usr::Own)
                    .map_err(setup)?;
                let path = settings_files::nspawn_path(&self.settings.nspawn_dir, name);
                let (n, s, p) = (name.clone(), spec.clone(), path.clone());
                let configured = self.settings.bind_host_usr;
                let store = self.settings.agent_images_dir.clone();
                let (base, usr) = blocking(move || {
                    let written = std::fs::read_to_string(&p).ok();
                    let written = written.as_deref().and_then(settings_files::parse_nspawn);
                    let usr = images::usr_for(written.map(|f| f.usr), &store, configured)?;
                    Ok((userns::ensure(&n, &s.state_dir, &s.runtime_dir)?, usr))
                })
                .await?;
                let text = settings_files::render_nspawn(name, spec, base, &usr).map_err(setup)?;
                (path, text)
            }
            Profile::Nixos => {
                // Check the spec before spending a build on it.
                settings_files::render_nixos_conf(name, &PathBuf::from("/nix/store/x"), spec, 0)
                    .map_err(setup)?;
                let system = match &spec.system {
                    Some(system) => system.clone(),
                    None => self
                        .settings
                        .builder
                        .build(name)
                        .await
                        .map_err(|e| setup(chain(&e)))?,
                };
                // The same user range as the nspawn profile's (recorded by
                // the state directory's owner).
                let (n, s) = (name.clone(), spec.clone());
                let base =
                    blocking(move || userns::ensure(&n, &s.state_dir, &s.runtime_dir)).await?;
                (
                    settings_files::nixos_conf_path(&self.settings.nixos_containers_dir, name),
                    settings_files::render_nixos_conf(name, &system, spec, base).map_err(setup)?,
                )
            }
        };
        let dirs = [spec.runtime_dir.clone(), spec.state_dir.clone()];
        blocking(move || {
            // nspawn refuses to start when a bind source is missing.
            for dir in &dirs {
                std::fs::create_dir_all(dir).map_err(|source| FileError::Io {
                    path: dir.clone(),
                    source,
                })?;
            }
            settings_files::write_atomically(&path, &text)
        })
        .await
    }

    async fn set_limits(&self, name: &Ident, spec: &ContainerSpec) -> Result<(), DriverError> {
        let unit = self.unit(name);
        let props = limits::of(spec).map_err(setup)?;
        let conn = self.conn();
        let systemd = proxies::systemd(&conn)
            .await
            .map_err(|e| bus_error(e, &unit))?;
        systemd
            .set_unit_properties(&unit, false, &props)
            .await
            .map_err(|e| bus_error(e, &unit))
    }

    pub(super) async fn create(
        &self,
        name: &Ident,
        spec: &ContainerSpec,
    ) -> Result<(), DriverError> {
        // Refuse a bad spec before anything is written.
        limits::of(spec).map_err(setup)?;
        // What the container needs first, what makes it exist last: a kill
        // in between leaves an agent that is not created yet, not one that
        // exists and cannot start (issue 32: a clone without settings
        // crashed at every start).
        self.write_settings(name, spec).await?;
        self.set_limits(name, spec).await?;
        if self.profile == Profile::Nspawn
            && let Err(err) = self.clone_template(name).await
        {
            // No image: the settings written for it go too.
            let path = settings_files::nspawn_path(&self.settings.nspawn_dir, name);
            if let Err(e) = blocking(move || settings_files::remove(&path)).await {
                tracing::warn!(agent = %name, "cannot remove the settings of a failed create: {e}");
            }
            return Err(err);
        }
        let change = self.view().track(name);
        self.publish(change);
        Ok(())
    }

    /// machined `CloneImage(template, h-<n>)`, unless `h-<n>` exists.
    async fn clone_template(&self, name: &Ident) -> Result<(), DriverError> {
        let machine = machine_name(name);
        let template = &self.settings.template_image;
        let conn = self.conn();
        let machined = proxies::machined(&conn)
            .await
            .map_err(|e| bus_error(e, &machine))?;
        match machined.get_image(&machine).await {
            Ok(_) => {
                tracing::info!(%machine, "{machine}: its image is there already (kept by a destroy, or an interrupted create); using it");
                return Ok(());
            }
            Err(e) if error_name(&e).as_deref() == Some(NO_SUCH_IMAGE) => {}
            Err(e) => return Err(bus_error(e, &machine)),
        }
        match machined.clone_image(template, &machine, false).await {
            Ok(()) => Ok(()),
            Err(e) if error_name(&e).as_deref() == Some(NO_SUCH_IMAGE) => {
                Err(DriverError::Setup(format!(
                    "the template image {template:?} is not known to machined; put it under \
                     /var/lib/machines or set template_image in the config"
                )))
            }
            Err(e) => Err(DriverError::Setup(format!(
                "cloning image {template:?} to {machine:?} failed: {e}"
            ))),
        }
    }

    pub(super) async fn rebuild(
        &self,
        name: &Ident,
        spec: &ContainerSpec,
    ) -> Result<Outcome, DriverError> {
        self.ensure_exists(name).await?;
        limits::of(spec).map_err(setup)?;
        self.write_settings(name, spec).await?;
        self.set_limits(name, spec).await?;
        Ok(Outcome::Done)
    }

    pub(super) async fn destroy(&self, name: &Ident, purge: bool) -> Result<(), DriverError> {
        // Whatever is there goes, also what a killed create left.
        let (image, settings) = self.parts(name).await?;
        let unit = self.unit(name);
        if !image && !settings {
            return Err(DriverError::NoSuchUnit { unit });
        }
        let deadline = self.settings.stop_deadline;
        if image && settings {
            self.stop(name, StopMode::Graceful { deadline }).await?;
        }
        let path = match self.profile {
            Profile::Nspawn => settings_files::nspawn_path(&self.settings.nspawn_dir, name),
            Profile::Nixos => {
                settings_files::nixos_conf_path(&self.settings.nixos_containers_dir, name)
            }
        };
        blocking(move || settings_files::remove(&path)).await?;
        let conn = self.conn();
        let systemd = proxies::systemd(&conn)
            .await
            .map_err(|e| bus_error(e, &unit))?;
        // Drop the persistent limits SetUnitProperties wrote.
        if let Err(e) = systemd.revert_unit_files(&[&unit]).await {
            tracing::warn!(%unit, error = %e, "could not remove the unit's limit drop-ins");
        }
        if purge && self.profile == Profile::Nspawn {
            let machine = machine_name(name);
            let machined = proxies::machined(&conn)
                .await
                .map_err(|e| bus_error(e, &unit))?;
            match machined.remove_image(&machine).await {
                Err(e) if error_name(&e).as_deref() != Some(NO_SUCH_IMAGE) => {
                    return Err(DriverError::Setup(format!(
                        "removing image {machine:?} failed: {e}"
                    )));
                }
                _ => {}
            }
        }
        let change = self.view().forget(name);
        self.publish(change);
        Ok(())
    }
}
