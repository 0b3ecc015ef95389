//! The fake `org.freedesktop.systemd1` (see the parent's docs) and the
//! test's handle on the whole fake.

use std::sync::{Arc, Mutex};

use tokio::sync::watch;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};
use zbus::{Connection, interface};

use super::machined::Machines;
pub use super::state::{Job, JobMode, Kind, State, Unit};
use super::state::{Row, Shared, Sig, emit, lock, unit_path};

#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.freedesktop.systemd1")]
pub enum SdError {
    #[zbus(error)]
    ZBus(zbus::Error),
    NoSuchUnit(String),
    NoSuchProcess(String),
}

struct Manager {
    state: Shared,
    pending: watch::Sender<usize>,
}

impl Manager {
    async fn job(
        &self,
        conn: &Connection,
        name: String,
        kind: Kind,
    ) -> Result<OwnedObjectPath, SdError> {
        let (job, sigs, mode) = {
            let mut st = lock(&self.state);
            let mut out = Vec::new();
            let Some(unit) = st.units.get_mut(&name) else {
                return Err(SdError::NoSuchUnit(format!("Unit {name} not found.")));
            };
            if !unit.loaded {
                unit.loaded = true;
                out.push(Sig::UnitNew(name.clone()));
            }
            st.next_job += 1;
            let id = st.next_job;
            let job = Job {
                id,
                path: format!("/org/freedesktop/systemd1/job/{id}"),
                unit: name.clone(),
                kind,
            };
            st.calls.push(format!("{kind:?}Unit {name}"));
            match st.mode {
                JobMode::Manual => {
                    st.begin(&job, &mut out);
                    st.pending.push(job.clone());
                    self.pending.send_modify(|n| *n += 1);
                }
                JobMode::BeforeReply => st.complete(&job, "done", &mut out),
                JobMode::Auto => {}
            }
            (job, out, st.mode)
        };
        emit(conn, &self.state, sigs).await;
        if mode == JobMode::Auto {
            let (conn, state, job) = (conn.clone(), self.state.clone(), job.clone());
            tokio::spawn(async move {
                let mut out = Vec::new();
                lock(&state).complete(&job, "done", &mut out);
                emit(&conn, &state, out).await;
            });
        }
        Ok(OwnedObjectPath::try_from(job.path).unwrap())
    }
}

#[interface(name = "org.freedesktop.systemd1.Manager")]
impl Manager {
    async fn subscribe(&self) {
        lock(&self.state).subscribed = true;
    }

    async fn list_units_by_patterns(
        &self,
        _states: Vec<String>,
        patterns: Vec<String>,
    ) -> Vec<Row> {
        lock(&self.state).rows(&patterns)
    }

    async fn list_units(&self) -> Vec<Row> {
        lock(&self.state).rows(&[])
    }

    async fn start_unit(
        &self,
        name: String,
        _mode: String,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<OwnedObjectPath, SdError> {
        self.job(conn, name, Kind::Start).await
    }

    async fn stop_unit(
        &self,
        name: String,
        _mode: String,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<OwnedObjectPath, SdError> {
        self.job(conn, name, Kind::Stop).await
    }

    async fn restart_unit(
        &self,
        name: String,
        _mode: String,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<OwnedObjectPath, SdError> {
        self.job(conn, name, Kind::Restart).await
    }

    /// SIGKILL fails an active unit (result `signal`) and ends its pending
    /// stop job, as systemd does when the processes die.
    async fn kill_unit(
        &self,
        name: String,
        whom: String,
        signal: i32,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), SdError> {
        let sigs = {
            let mut st = lock(&self.state);
            st.calls.push(format!("KillUnit {name} {whom} {signal}"));
            let Some(unit) = st.units.get(&name) else {
                return Err(SdError::NoSuchUnit(format!("Unit {name} not loaded.")));
            };
            if !matches!(
                unit.active.as_str(),
                "active" | "activating" | "deactivating" | "reloading"
            ) {
                return Err(SdError::NoSuchProcess(
                    "No matching processes to kill".into(),
                ));
            }
            let mut out = Vec::new();
            if signal == 9 {
                st.set(&name, "failed", "failed", Some("signal"), &mut out);
                let stops: Vec<Job> = st
                    .pending
                    .iter()
                    .filter(|j| j.unit == name && j.kind == Kind::Stop)
                    .cloned()
                    .collect();
                for job in stops {
                    st.complete(&job, "done", &mut out);
                }
            }
            out
        };
        emit(conn, &self.state, sigs).await;
        Ok(())
    }

    async fn reset_failed_unit(
        &self,
        name: String,
        #[zbus(connection)] conn: &Connection,
    ) -> Result<(), SdError> {
        let sigs = {
            let mut st = lock(&self.state);
            st.calls.push(format!("ResetFailedUnit {name}"));
            let mut out = Vec::new();
            if st.units.get(&name).is_some_and(|u| u.active == "failed") {
                st.set(&name, "inactive", "dead", Some("success"), &mut out);
            }
            out
        };
        emit(conn, &self.state, sigs).await;
        Ok(())
    }

    async fn set_unit_properties(
        &self,
        name: String,
        runtime: bool,
        properties: Vec<(String, OwnedValue)>,
    ) {
        let props: Vec<String> = properties
            .iter()
            .map(|(k, v)| {
                format!(
                    "{k}={}",
                    u64::try_from(v)
                        .map(|n| n.to_string())
                        .unwrap_or_else(|_| format!("{v:?}"))
                )
            })
            .collect();
        lock(&self.state).calls.push(format!(
            "SetUnitProperties {name} runtime={runtime} {}",
            props.join(" ")
        ));
    }

    async fn revert_unit_files(&self, files: Vec<String>) -> Vec<(String, String, String)> {
        lock(&self.state)
            .calls
            .push(format!("RevertUnitFiles {}", files.join(" ")));
        Vec::new()
    }
}

/// The `Service` interface of one unit object, for `Get(Result)`.
struct ServiceObject {
    state: Shared,
    unit: String,
}

#[interface(name = "org.freedesktop.systemd1.Service")]
impl ServiceObject {
    #[zbus(property)]
    async fn result(&self) -> String {
        lock(&self.state)
            .units
            .get(&self.unit)
            .map(|u| u.result.clone())
            .unwrap_or_default()
    }
}

/// The `Unit` interface of one unit object, for `Get(ActiveState)` etc.
struct UnitObject {
    state: Shared,
    unit: String,
}

#[interface(name = "org.freedesktop.systemd1.Unit")]
impl UnitObject {
    #[zbus(property)]
    async fn active_state(&self) -> String {
        lock(&self.state)
            .units
            .get(&self.unit)
            .map(|u| u.active.clone())
            .unwrap_or_default()
    }

    #[zbus(property)]
    async fn sub_state(&self) -> String {
        lock(&self.state)
            .units
            .get(&self.unit)
            .map(|u| u.sub.clone())
            .unwrap_or_default()
    }

    #[zbus(property)]
    async fn active_enter_timestamp(&self) -> u64 {
        lock(&self.state)
            .units
            .get(&self.unit)
            .map_or(0, |u| u.active_enter)
    }
}

/// The running fake and the test's handle on it.
pub struct FakeSystemd {
    conn: Connection,
    state: Shared,
    pending: watch::Receiver<usize>,
}

impl FakeSystemd {
    /// Claim systemd1 and machine1 on the bus at `address` with `state`.
    pub async fn serve(address: &str, state: State) -> Self {
        let units: Vec<String> = state.units.keys().cloned().collect();
        let state = Arc::new(Mutex::new(state));
        let (tx, pending) = watch::channel(0);
        let conn = zbus::connection::Builder::address(address)
            .unwrap()
            .name("org.freedesktop.systemd1")
            .unwrap()
            .name("org.freedesktop.machine1")
            .unwrap()
            .serve_at(
                "/org/freedesktop/systemd1",
                Manager {
                    state: state.clone(),
                    pending: tx,
                },
            )
            .unwrap()
            .serve_at(
                "/org/freedesktop/machine1",
                Machines {
                    state: state.clone(),
                },
            )
            .unwrap()
            .build()
            .await
            .unwrap();
        for unit in units {
            let object = ServiceObject {
                state: state.clone(),
                unit: unit.clone(),
            };
            conn.object_server()
                .at(unit_path(&unit), object)
                .await
                .unwrap();
            let object = UnitObject {
                state: state.clone(),
                unit: unit.clone(),
            };
            conn.object_server()
                .at(unit_path(&unit), object)
                .await
                .unwrap();
        }
        Self {
            conn,
            state,
            pending,
        }
    }

    pub fn calls(&self) -> Vec<String> {
        lock(&self.state).calls.clone()
    }

    pub fn set_mode(&self, mode: JobMode) {
        lock(&self.state).mode = mode;
    }

    pub fn unit(&self, name: &str) -> Unit {
        lock(&self.state).units[name].clone()
    }

    pub fn has_image(&self, name: &str) -> bool {
        lock(&self.state).images.contains(name)
    }

    /// The unit's state changes on its own (a crash, a boot finishing).
    pub async fn set_unit(&self, name: &str, active: &str, sub: &str, result: &str) {
        let mut out = Vec::new();
        lock(&self.state).set(name, active, sub, Some(result), &mut out);
        emit(&self.conn, &self.state, out).await;
    }

    /// The unit is loaded and reaches `active`/`sub`/`result` before
    /// systemd's next signal dispatch: as systemd does, only `UnitNew` is
    /// sent (it replaces a new unit's first change signal).
    pub async fn load_quietly(&self, name: &str, active: &str, sub: &str, result: &str) {
        {
            let mut st = lock(&self.state);
            let u = st.units.get_mut(name).unwrap();
            *u = Unit::new(true, active, sub);
            u.result = result.into();
        }
        emit(&self.conn, &self.state, vec![Sig::UnitNew(name.into())]).await;
    }

    /// systemd garbage-collects the (inactive) unit.
    pub async fn unload(&self, name: &str) {
        lock(&self.state).units.get_mut(name).unwrap().loaded = false;
        emit(&self.conn, &self.state, vec![Sig::UnitRemoved(name.into())]).await;
    }

    /// `systemctl daemon-reload` as systemd signals it: every loaded unit is
    /// freed (`UnitRemoved`, running ones too) and re-created (`UnitNew`)
    /// between `Reloading(true)` and `Reloading(false)`; states are kept.
    pub async fn daemon_reload(&self) {
        let loaded: Vec<String> = {
            let st = lock(&self.state);
            st.units
                .iter()
                .filter(|(_, u)| u.loaded)
                .map(|(n, _)| n.clone())
                .collect()
        };
        let mut out = vec![Sig::Reloading(true)];
        out.extend(loaded.iter().cloned().map(Sig::UnitRemoved));
        out.extend(loaded.into_iter().map(Sig::UnitNew));
        out.push(Sig::Reloading(false));
        emit(&self.conn, &self.state, out).await;
    }

    /// Wait until `n` jobs were queued in manual mode; the ones still
    /// pending, oldest first.
    pub async fn wait_pending(&self, n: usize) -> Vec<Job> {
        self.pending.clone().wait_for(|p| *p >= n).await.unwrap();
        lock(&self.state).pending.clone()
    }

    /// End a pending job with `result`.
    pub async fn finish(&self, job: &Job, result: &str) {
        let mut out = Vec::new();
        lock(&self.state).complete(job, result, &mut out);
        emit(&self.conn, &self.state, out).await;
    }
}
