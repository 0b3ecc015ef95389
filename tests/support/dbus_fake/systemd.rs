//! The fake systemd1 + machine1 service (see the module docs of the parent).

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

use tokio::sync::watch;
use zbus::zvariant::{OwnedObjectPath, OwnedValue, Value};
use zbus::{Connection, interface};

const UNIT_IFACE: &str = "org.freedesktop.systemd1.Unit";
const SERVICE_IFACE: &str = "org.freedesktop.systemd1.Service";

/// When the fake finishes the jobs it is given.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Default)]
pub enum JobMode {
    /// `done`, right after the method reply.
    #[default]
    Auto,
    /// `done`, with `JobRemoved` sent *before* the method reply.
    BeforeReply,
    /// Only when the test calls [`FakeSystemd::finish`] (or, for a stop, a
    /// SIGKILL arrives).
    Manual,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub loaded: bool,
    pub active: String,
    pub sub: String,
    pub result: String,
}

impl Unit {
    pub fn new(loaded: bool, active: &str, sub: &str) -> Self {
        Self {
            loaded,
            active: active.into(),
            sub: sub.into(),
            result: "success".into(),
        }
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    Start,
    Stop,
    Restart,
}

#[derive(Debug, Clone)]
pub struct Job {
    pub id: u32,
    pub path: String,
    pub unit: String,
    pub kind: Kind,
}

#[derive(Debug, Default)]
pub struct State {
    pub units: BTreeMap<String, Unit>,
    pub images: BTreeSet<String>,
    pub mode: JobMode,
    pub subscribed: bool,
    pub pending: Vec<Job>,
    /// Every state-changing call, as a line (`StartUnit x`, `KillUnit x all 9`, ...).
    pub calls: Vec<String>,
    next_job: u32,
}

/// A signal to send once the state lock is released.
enum Sig {
    UnitNew(String),
    UnitRemoved(String),
    Props(String, Unit),
    JobRemoved(Job, String),
}

/// systemd's `bus_label_escape`, written independently of the driver's.
pub fn unit_path(name: &str) -> OwnedObjectPath {
    let mut s = String::from("/org/freedesktop/systemd1/unit/");
    for (i, c) in name.chars().enumerate() {
        if c.is_ascii_alphabetic() || (c.is_ascii_digit() && i != 0) {
            s.push(c);
        } else {
            write!(s, "_{:02x}", c as u32).unwrap();
        }
    }
    OwnedObjectPath::try_from(s).unwrap()
}

fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
    }
}

impl State {
    fn set(
        &mut self,
        unit: &str,
        active: &str,
        sub: &str,
        result: Option<&str>,
        out: &mut Vec<Sig>,
    ) {
        let Some(u) = self.units.get_mut(unit) else {
            return;
        };
        u.active = active.into();
        u.sub = sub.into();
        if let Some(r) = result {
            u.result = r.into();
        }
        out.push(Sig::Props(unit.into(), u.clone()));
    }

    fn begin(&mut self, job: &Job, out: &mut Vec<Sig>) {
        match job.kind {
            Kind::Start | Kind::Restart => self.set(&job.unit, "activating", "start", None, out),
            Kind::Stop => self.set(&job.unit, "deactivating", "stop-sigterm", None, out),
        }
    }

    /// End `job` with `result`: the unit's new state first, then `JobRemoved`.
    fn complete(&mut self, job: &Job, result: &str, out: &mut Vec<Sig>) {
        self.pending.retain(|j| j.path != job.path);
        let failed = self
            .units
            .get(&job.unit)
            .is_some_and(|u| u.active == "failed");
        match (job.kind, result) {
            (Kind::Start | Kind::Restart, "done") => {
                self.set(&job.unit, "active", "running", Some("success"), out)
            }
            (Kind::Start | Kind::Restart, "canceled") => {
                self.set(&job.unit, "inactive", "dead", None, out)
            }
            (Kind::Start | Kind::Restart, _) => {
                self.set(&job.unit, "failed", "failed", Some("exit-code"), out)
            }
            // A unit SIGKILLed during its stop stays failed (result signal).
            (Kind::Stop, _) if failed => {}
            (Kind::Stop, _) => self.set(&job.unit, "inactive", "dead", None, out),
        }
        out.push(Sig::JobRemoved(job.clone(), result.into()));
    }

    fn rows(&self, patterns: &[String]) -> Vec<Row> {
        self.units
            .iter()
            .filter(|(name, u)| {
                u.loaded && (patterns.is_empty() || patterns.iter().any(|p| glob(p, name)))
            })
            .map(|(name, u)| {
                let root = OwnedObjectPath::try_from("/").unwrap();
                let loaded = "loaded".to_string();
                (
                    name.clone(),
                    String::new(),
                    loaded,
                    u.active.clone(),
                    u.sub.clone(),
                    String::new(),
                    unit_path(name),
                    0,
                    String::new(),
                    root,
                )
            })
            .collect()
    }
}

type Row = (
    String,
    String,
    String,
    String,
    String,
    String,
    OwnedObjectPath,
    u32,
    String,
    OwnedObjectPath,
);

type Shared = Arc<Mutex<State>>;

fn lock(state: &Shared) -> MutexGuard<'_, State> {
    state.lock().unwrap()
}

async fn emit(conn: &Connection, state: &Shared, sigs: Vec<Sig>) {
    // systemd emits nothing until some client called Subscribe().
    if !lock(state).subscribed {
        return;
    }
    let root = "/org/freedesktop/systemd1";
    let manager = "org.freedesktop.systemd1.Manager";
    for sig in sigs {
        match sig {
            Sig::UnitNew(unit) => conn
                .emit_signal(
                    None::<&str>,
                    root,
                    manager,
                    "UnitNew",
                    &(unit.as_str(), unit_path(&unit)),
                )
                .await
                .unwrap(),
            Sig::UnitRemoved(unit) => conn
                .emit_signal(
                    None::<&str>,
                    root,
                    manager,
                    "UnitRemoved",
                    &(unit.as_str(), unit_path(&unit)),
                )
                .await
                .unwrap(),
            Sig::Props(unit, u) => {
                let path = unit_path(&unit);
                let props = "org.freedesktop.DBus.Properties";
                let none: Vec<String> = Vec::new();
                let changed: HashMap<&str, Value<'_>> = HashMap::from([
                    ("ActiveState", Value::from(u.active.as_str())),
                    ("SubState", Value::from(u.sub.as_str())),
                ]);
                conn.emit_signal(
                    None::<&str>,
                    &path,
                    props,
                    "PropertiesChanged",
                    &(UNIT_IFACE, changed, &none),
                )
                .await
                .unwrap();
                let changed: HashMap<&str, Value<'_>> =
                    HashMap::from([("Result", Value::from(u.result.as_str()))]);
                conn.emit_signal(
                    None::<&str>,
                    &path,
                    props,
                    "PropertiesChanged",
                    &(SERVICE_IFACE, changed, &none),
                )
                .await
                .unwrap();
            }
            Sig::JobRemoved(job, result) => {
                let path = OwnedObjectPath::try_from(job.path.as_str()).unwrap();
                conn.emit_signal(
                    None::<&str>,
                    root,
                    manager,
                    "JobRemoved",
                    &(job.id, path, job.unit.as_str(), result.as_str()),
                )
                .await
                .unwrap()
            }
        }
    }
}

#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.freedesktop.systemd1")]
pub enum SdError {
    #[zbus(error)]
    ZBus(zbus::Error),
    NoSuchUnit(String),
    NoSuchProcess(String),
}

#[derive(Debug, zbus::DBusError)]
#[zbus(prefix = "org.freedesktop.machine1")]
pub enum MdError {
    #[zbus(error)]
    ZBus(zbus::Error),
    NoSuchImage(String),
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

struct Machines {
    state: Shared,
}

#[interface(name = "org.freedesktop.machine1.Manager")]
impl Machines {
    async fn get_image(&self, name: String) -> Result<OwnedObjectPath, MdError> {
        if !lock(&self.state).images.contains(&name) {
            return Err(MdError::NoSuchImage(format!("No image '{name}' known")));
        }
        Ok(OwnedObjectPath::try_from(format!(
            "/org/freedesktop/machine1/image/{}",
            name.replace('-', "_2d")
        ))
        .unwrap())
    }

    async fn clone_image(
        &self,
        name: String,
        new_name: String,
        read_only: bool,
    ) -> Result<(), MdError> {
        let mut st = lock(&self.state);
        st.calls
            .push(format!("CloneImage {name} {new_name} {read_only}"));
        if !st.images.contains(&name) {
            return Err(MdError::NoSuchImage(format!("No image '{name}' known")));
        }
        st.images.insert(new_name);
        Ok(())
    }

    async fn remove_image(&self, name: String) -> Result<(), MdError> {
        let mut st = lock(&self.state);
        st.calls.push(format!("RemoveImage {name}"));
        if !st.images.remove(&name) {
            return Err(MdError::NoSuchImage(format!("No image '{name}' known")));
        }
        Ok(())
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

    /// systemd garbage-collects the (inactive) unit.
    pub async fn unload(&self, name: &str) {
        lock(&self.state).units.get_mut(name).unwrap().loaded = false;
        emit(&self.conn, &self.state, vec![Sig::UnitRemoved(name.into())]).await;
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
