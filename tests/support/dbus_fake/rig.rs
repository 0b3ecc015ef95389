//! The test rig: a private bus, the fake on it, driver settings pointing
//! there, and small helpers for waiting on the driver's view.

use std::future::Future;
use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hive_c0re::containers::{
    ActiveState, ContainerDriver, ContainerSpec, Profile, UnitChange, UnitState,
};
use hive_c0re::systemd::dbus::builder::RecordingBuilder;
use hive_c0re::systemd::dbus::{Settings, SystemdDriver};
use hive_c0re::wire::ident::Ident;
use tempfile::TempDir;
use tokio::sync::broadcast;

use super::bus::PrivateBus;
use super::systemd::{FakeSystemd, State, Unit};

pub const LIMIT: Duration = Duration::from_secs(20);

/// Run a test body with a deadline.
pub async fn bounded<F: Future<Output = ()>>(body: F) {
    tokio::time::timeout(LIMIT, body)
        .await
        .expect("the test finished within its limit");
}

pub fn id(s: &str) -> Ident {
    Ident::new(s).unwrap()
}

pub fn nspawn(n: &str) -> String {
    format!("systemd-nspawn@h-{n}.service")
}

/// A fake systemd whose template instances `h-<n>` exist for `names`
/// (image and unit, not loaded) plus the template image.
pub fn host(names: &[&str]) -> State {
    let mut st = State::default();
    st.images.insert("hive-template".into());
    for n in names {
        st.images.insert(format!("h-{n}"));
        st.units
            .insert(nspawn(n), Unit::new(false, "inactive", "dead"));
    }
    st
}

/// Settings for a bus at `address`, files under `dir`.
pub fn settings_at(dir: &Path, address: String) -> Settings {
    Settings {
        bus_address: Some(address),
        connect_timeout: Duration::from_secs(3),
        job_wait_limit: Duration::from_secs(3),
        stop_deadline: Duration::from_secs(3),
        template_image: "hive-template".into(),
        nspawn_dir: dir.join("nspawn"),
        bind_host_usr: true,
        agent_images_dir: dir.join("images"),
        nixos_containers_dir: dir.join("nixos"),
        agents: Vec::new(),
        builder: Arc::new(RecordingBuilder::new("/nix/store")),
        // The fake systemd has no machines with leaders nor transient
        // units: caps are the real-systemd tier's (tests/system).
        inotify: None,
        // Nor quotas: the file systems of a test's temporary directory
        // have none (tests/set_quota.rs runs the helper itself).
        disk: None,
    }
}

pub struct Rig {
    pub dir: TempDir,
    pub bus: PrivateBus,
    pub fake: FakeSystemd,
}

impl Rig {
    /// A rig whose every agent image (`h-<n>`) also has its settings file,
    /// as `create` leaves a container: the driver counts a container as
    /// made only with both.
    pub async fn new(state: State) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let nspawn_dir = dir.path().join("nspawn");
        std::fs::create_dir_all(&nspawn_dir).unwrap();
        for image in state.images.iter().filter(|i| i.starts_with("h-")) {
            std::fs::write(nspawn_dir.join(format!("{image}.nspawn")), "[Exec]\n").unwrap();
        }
        let bus = PrivateBus::start(dir.path()).await;
        let fake = FakeSystemd::serve(&bus.address(), state).await;
        Self { dir, bus, fake }
    }

    pub fn settings(&self, agents: &[&str]) -> Settings {
        let mut settings = settings_at(self.dir.path(), self.bus.address());
        settings.agents = agents.iter().map(|a| id(a)).collect();
        settings
    }

    pub async fn driver(&self, agents: &[&str]) -> SystemdDriver {
        SystemdDriver::connect(Profile::Nspawn, self.settings(agents))
            .await
            .unwrap()
    }

    pub fn spec(&self, n: &str) -> ContainerSpec {
        ContainerSpec {
            runtime_dir: self.dir.path().join("run").join(n),
            state_dir: self.dir.path().join("state").join(n),
            cpu_quota: Some("200%".into()),
            memory_max: Some("4G".into()),
            tasks_max: Some(4096),
            env: vec![("HIVE_CAPABILITIES".into(), "spawn".into())],
            repos: None,
            system: None,
        }
    }
}

/// Wait until the driver's view of `agent` satisfies `pred`, following the
/// change events (the view is checked first, so no event can be missed).
pub async fn until(
    driver: &SystemdDriver,
    changes: &mut broadcast::Receiver<UnitChange>,
    agent: &str,
    pred: impl Fn(Option<&UnitState>) -> bool,
) {
    loop {
        if pred(driver.view().get(&id(agent))) {
            return;
        }
        match changes.recv().await {
            Ok(_) | Err(broadcast::error::RecvError::Lagged(_)) => {}
            Err(e) => panic!("change channel closed: {e}"),
        }
    }
}

/// A running unit as the fake's `ActiveEnterTimestamp` stamps it.
pub fn up() -> UnitState {
    UnitState {
        since: Some(1_796_040_000),
        ..UnitState::running()
    }
}

pub fn state(active: ActiveState, sub: &str, result: &str) -> UnitState {
    UnitState {
        active,
        sub: sub.into(),
        result: result.into(),
        since: None,
    }
}
