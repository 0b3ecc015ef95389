//! A stateful stand-in for systemd, selected by `--driver fake`.
//!
//! It keeps one unit per created container and copies these decisions of the
//! real systemd driver, so the hive's rules are tested against the same
//! answers:
//! - a container that was never created has no unit: every verb on it is
//!   [`DriverError::NoSuchUnit`];
//! - starting an active unit, or stopping an inactive one, is
//!   [`Outcome::AlreadyInState`];
//! - starting a failed unit clears the failed state (systemd resets it when a
//!   new start job runs);
//! - a hard stop leaves the unit `failed` with result `signal`, as SIGKILL of
//!   a service does; a graceful stop leaves it `inactive`;
//! - a signal goes to the container's init, a systemd (machined's
//!   `KillMachine` "leader"): KILL ends the container (nspawn exits
//!   non-zero: the unit passes `deactivating` and ends `failed`, result
//!   `exit-code`), INT reboots it
//!   (the unit goes down and comes back running, as nspawn's exit 133 and
//!   the unit's restart do), every other signal leaves the unit running
//!   (TERM re-executes systemd, HUP reloads it, ...); a signal to a unit
//!   that is not running is [`Outcome::AlreadyInState`];
//! - a unit that becomes active is stamped with the clock's time (systemd's
//!   `ActiveEnterTimestamp`);
//! - destroy stops a running unit first; every state change is published on
//!   the change channel, as the real driver does from `PropertiesChanged`.
//!
//! - a stop job that outlives the driver's wait ([`FakeDriver::stall_stops`],
//!   a test switch) leaves the unit `deactivating`, its processes alive, and
//!   answers [`Outcome::Pending`], as the real driver does when the job (or
//!   the bus) outlasts its wait;
//! - with a job delay ([`FakeDriver::with_job_delay`], `serve
//!   --fake-job-delay-ms`), a start job holds the unit `activating` that
//!   long before it is `active`, as a container whose boot systemd waits
//!   for (nspawn's `--notify-ready=yes`, the nixos profile's
//!   `container@.service`); a start of an `activating` unit joins that job.
//!
//! - images (in memory): a container is created on the shared image's
//!   current version when one was shared ([`FakeDriver::share`], a test
//!   switch), else as a full copy; a rebuild moves it to the current
//!   version, a destroy forgets it, as the nspawn profile's `.nspawn` bind
//!   line does; a prune removes the versions no container runs but the
//!   current one.
//!
//! What it does not copy: the timing of other jobs (they finish at once)
//! and the files a real container needs.

use std::collections::HashMap;
use std::sync::{Mutex, MutexGuard, PoisonError};
use std::time::Duration;

use tokio::sync::broadcast;

use super::images::{AgentImage, Store, rows};
use super::{
    ActiveState, ContainerDriver, ContainerSpec, DriverError, Outcome, Profile, StopMode,
    UnitChange, UnitState,
};
use crate::clock::{SharedClock, SystemClock};
use crate::wire::host::Signal;
use crate::wire::ident::Ident;
use crate::wire::images::ImageRow;

/// The fake driver. See the module docs for what it copies from systemd.
#[derive(Debug)]
pub struct FakeDriver {
    profile: Profile,
    units: Mutex<HashMap<Ident, UnitState>>,
    /// Start jobs of these agents fail (a test switch).
    failing: Mutex<Vec<Ident>>,
    /// Stop jobs of these agents outlive the wait (a test switch).
    stalling: Mutex<Vec<Ident>>,
    changes: broadcast::Sender<UnitChange>,
    /// Stamps `since` when a unit becomes active.
    clock: SharedClock,
    /// How long a start job takes (zero: at once).
    job_delay: Duration,
    /// The spec each container was last created or rebuilt with (as the
    /// real driver renders it into the settings file and the unit).
    specs: Mutex<HashMap<Ident, ContainerSpec>>,
    /// The shared image's versions and which image each container runs.
    images: Mutex<FakeImages>,
}

/// The fake's image store and its record of each container's image.
#[derive(Debug, Default)]
struct FakeImages {
    store: Store,
    of: HashMap<Ident, AgentImage>,
}

impl FakeImages {
    /// What a container created or rebuilt now runs.
    fn now(&self) -> AgentImage {
        self.store
            .current
            .clone()
            .map_or(AgentImage::FullCopy, AgentImage::Shared)
    }
}

impl Default for FakeDriver {
    fn default() -> Self {
        Self::new(Profile::Nspawn)
    }
}

impl FakeDriver {
    pub fn new(profile: Profile) -> Self {
        Self {
            profile,
            units: Mutex::new(HashMap::new()),
            failing: Mutex::new(Vec::new()),
            stalling: Mutex::new(Vec::new()),
            changes: broadcast::channel(1024).0,
            clock: std::sync::Arc::new(SystemClock),
            job_delay: Duration::ZERO,
            specs: Mutex::new(HashMap::new()),
            images: Mutex::default(),
        }
    }

    /// The same driver, each start job taking `delay` (the unit
    /// `activating` meanwhile), as a slowly booting container.
    pub fn with_job_delay(mut self, delay: Duration) -> Self {
        self.job_delay = delay;
        self
    }

    /// The same driver, stamping activations with `clock`.
    pub fn with_clock(mut self, clock: SharedClock) -> Self {
        self.clock = clock;
        self
    }

    /// A running unit, active since now.
    fn up(&self) -> UnitState {
        UnitState {
            since: Some(self.clock.now_unix()),
            ..UnitState::running()
        }
    }

    /// A host on which these agents' containers exist, stopped: what the
    /// daemon starts from with `--driver fake`.
    pub fn with_containers(profile: Profile, names: impl IntoIterator<Item = Ident>) -> Self {
        let driver = Self::new(profile);
        driver
            .units()
            .extend(names.into_iter().map(|n| (n, UnitState::inactive())));
        driver
    }

    fn units(&self) -> MutexGuard<'_, HashMap<Ident, UnitState>> {
        self.units.lock().unwrap_or_else(PoisonError::into_inner)
    }

    /// Simulate the container's processes dying without an operator stop.
    pub fn crash(&self, name: &Ident) {
        self.set(
            name,
            UnitState {
                active: ActiveState::Failed,
                sub: "failed".into(),
                result: "signal".into(),
                since: None,
            },
        );
    }

    /// The spec `name` was last created or rebuilt with (unit tests).
    #[cfg(test)]
    pub fn spec_of(&self, name: &Ident) -> Option<ContainerSpec> {
        let specs = self.specs.lock().unwrap_or_else(PoisonError::into_inner);
        specs.get(name).cloned()
    }

    /// Start jobs of `name` fail from now on (a test switch; the
    /// release binary cannot be told to fail).
    #[cfg(test)]
    pub fn fail_starts(&self, name: &Ident) {
        switch_on(&self.failing, name);
    }

    /// Stop jobs of `name` outlive the driver's wait from now on: the unit
    /// stays `deactivating` and `stop` answers [`Outcome::Pending`] (a test
    /// switch, as `fail_starts`).
    #[cfg(test)]
    pub fn stall_stops(&self, name: &Ident) {
        switch_on(&self.stalling, name);
    }

    /// Share a new version of the agent image: it becomes the current
    /// one (a test switch, as `systemd/image/share`).
    #[cfg(test)]
    pub fn share(&self, version: &str) {
        let mut images = self.images();
        images.store.versions.push(version.to_owned());
        images.store.current = Some(version.to_owned());
    }

    fn images(&self) -> MutexGuard<'_, FakeImages> {
        self.images.lock().unwrap_or_else(PoisonError::into_inner)
    }

    fn keep_spec(&self, name: &Ident, spec: &ContainerSpec) {
        let mut specs = self.specs.lock().unwrap_or_else(PoisonError::into_inner);
        specs.insert(name.clone(), spec.clone());
    }

    fn set(&self, name: &Ident, new: UnitState) {
        let old = self.units().insert(name.clone(), new.clone());
        if old.as_ref() != Some(&new) {
            let _ = self.changes.send(UnitChange {
                agent: name.clone(),
                old,
                new: Some(new),
            });
        }
    }

    fn current(&self, name: &Ident) -> Result<UnitState, DriverError> {
        self.units()
            .get(name)
            .cloned()
            .ok_or_else(|| DriverError::NoSuchUnit {
                unit: self.profile.unit_name(name),
            })
    }
}

/// Turn a test switch on for `name`.
#[cfg(test)]
fn switch_on(switch: &Mutex<Vec<Ident>>, name: &Ident) {
    let mut names = switch.lock().unwrap_or_else(PoisonError::into_inner);
    names.push(name.clone());
}

/// Is the test switch on for `name`?
fn switched_on(switch: &Mutex<Vec<Ident>>, name: &Ident) -> bool {
    let names = switch.lock().unwrap_or_else(PoisonError::into_inner);
    names.contains(name)
}

#[async_trait::async_trait]
impl ContainerDriver for FakeDriver {
    async fn resync(&self) -> Result<(), DriverError> {
        Ok(())
    }

    fn view(&self) -> HashMap<Ident, UnitState> {
        self.units().clone()
    }

    fn state(&self, agent: &Ident) -> Option<UnitState> {
        self.units().get(agent).cloned()
    }

    fn changes(&self) -> broadcast::Receiver<UnitChange> {
        self.changes.subscribe()
    }

    async fn create(&self, name: &Ident, spec: &ContainerSpec) -> Result<(), DriverError> {
        self.keep_spec(name, spec);
        let mut images = self.images();
        let now = images.now();
        images.of.entry(name.clone()).or_insert(now);
        drop(images);
        if !self.units().contains_key(name) {
            self.set(name, UnitState::inactive());
        }
        Ok(())
    }

    async fn exists(&self, name: &Ident) -> Result<bool, DriverError> {
        Ok(self.units().contains_key(name))
    }

    async fn has_repo_binds(&self, name: &Ident) -> Result<Option<bool>, DriverError> {
        let specs = self.specs.lock().unwrap_or_else(PoisonError::into_inner);
        Ok(specs.get(name).map(|spec| spec.repos.is_some()))
    }

    async fn rebuild(&self, name: &Ident, spec: &ContainerSpec) -> Result<Outcome, DriverError> {
        let done = self.current(name).map(|_| Outcome::Done)?;
        self.keep_spec(name, spec);
        let mut images = self.images();
        let now = images.now();
        if let Some(image) = images.of.get_mut(name)
            && *image != AgentImage::Host
        {
            *image = now;
        }
        Ok(done)
    }

    async fn images(&self, agents: &[Ident]) -> Result<Vec<ImageRow>, DriverError> {
        let images = self.images();
        let used = agents
            .iter()
            .filter_map(|a| Some((a.clone(), images.of.get(a)?.clone())));
        Ok(rows(&images.store, used))
    }

    /// Every version but the current one that no container runs.
    async fn prune_images(&self, dry_run: bool) -> Result<Vec<String>, DriverError> {
        let mut images = self.images();
        let FakeImages { store, of } = &mut *images;
        let used = |v: &String| {
            store.current.as_ref() == Some(v)
                || of.values().any(|i| *i == AgentImage::Shared(v.clone()))
        };
        let gone: Vec<String> = store
            .versions
            .iter()
            .filter(|v| !used(v))
            .cloned()
            .collect();
        if !dry_run {
            store.versions.retain(|v| !gone.contains(v));
        }
        Ok(gone)
    }

    async fn destroy(&self, name: &Ident, _purge: bool) -> Result<(), DriverError> {
        if self.current(name)?.is_running() {
            self.set(name, UnitState::inactive());
        }
        let old = self.units().remove(name);
        self.images().of.remove(name);
        let _ = self.changes.send(UnitChange {
            agent: name.clone(),
            old,
            new: None,
        });
        Ok(())
    }

    async fn start(&self, name: &Ident) -> Result<Outcome, DriverError> {
        let state = self.current(name)?;
        if state.is_running() {
            return Ok(Outcome::AlreadyInState);
        }
        if !self.job_delay.is_zero() {
            if state.active != ActiveState::Activating {
                self.set(
                    name,
                    UnitState {
                        active: ActiveState::Activating,
                        sub: "start".into(),
                        ..UnitState::inactive()
                    },
                );
            }
            tokio::time::sleep(self.job_delay).await;
            // Destroyed or stopped meanwhile: the job was cancelled.
            if self.current(name)?.active != ActiveState::Activating {
                return Err(DriverError::JobFailed {
                    verb: "start",
                    unit: self.profile.unit_name(name),
                    outcome: "was canceled by a later job on the same unit".into(),
                });
            }
        }
        if switched_on(&self.failing, name) {
            self.set(
                name,
                UnitState {
                    active: ActiveState::Failed,
                    sub: "failed".into(),
                    result: "exit-code".into(),
                    since: None,
                },
            );
            return Err(DriverError::JobFailed {
                verb: "start",
                unit: self.profile.unit_name(name),
                outcome: "failed".into(),
            });
        }
        self.set(name, self.up());
        Ok(Outcome::Done)
    }

    async fn stop(&self, name: &Ident, mode: StopMode) -> Result<Outcome, DriverError> {
        let state = self.current(name)?;
        let going_down = state.is_running() || state.active == ActiveState::Deactivating;
        if going_down && switched_on(&self.stalling, name) {
            let going = UnitState {
                active: ActiveState::Deactivating,
                sub: "stop-sigterm".into(),
                ..state
            };
            self.set(name, going);
            return Ok(Outcome::Pending);
        }
        let starting = state.active == ActiveState::Activating;
        if !state.is_running() && !starting && state.active != ActiveState::Failed {
            return Ok(Outcome::AlreadyInState);
        }
        let after = match mode {
            StopMode::Graceful { .. } => UnitState::inactive(),
            StopMode::Hard if state.is_running() || starting => UnitState {
                active: ActiveState::Failed,
                sub: "failed".into(),
                result: "signal".into(),
                since: None,
            },
            StopMode::Hard => state,
        };
        self.set(name, after);
        Ok(Outcome::Done)
    }

    async fn restart(&self, name: &Ident) -> Result<Outcome, DriverError> {
        self.current(name)?;
        self.set(name, UnitState::inactive());
        self.start(name).await
    }

    async fn signal(&self, name: &Ident, signal: Signal) -> Result<Outcome, DriverError> {
        if !self.current(name)?.is_running() {
            return Ok(Outcome::AlreadyInState);
        }
        match signal {
            Signal::Kill => {
                // systemd then stops what is left of the unit's processes.
                let leaving = |active, sub: &str| UnitState {
                    active,
                    sub: sub.into(),
                    result: "exit-code".into(),
                    since: None,
                };
                self.set(name, leaving(ActiveState::Deactivating, "stop-sigterm"));
                self.set(name, leaving(ActiveState::Failed, "failed"));
            }
            Signal::Int => {
                self.set(name, UnitState::inactive());
                self.set(name, self.up());
            }
            Signal::Hup
            | Signal::Usr1
            | Signal::Usr2
            | Signal::Term
            | Signal::Cont
            | Signal::Stop
            | Signal::Winch => {}
        }
        Ok(Outcome::Done)
    }
}

#[cfg(test)]
#[path = "fake_tests.rs"]
mod tests;
