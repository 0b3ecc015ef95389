//! The fake's state: units, images, jobs, and the signals a change sends.

use std::collections::{BTreeMap, BTreeSet, HashMap};
use std::fmt::Write as _;
use std::sync::{Arc, Mutex, MutexGuard};

use zbus::Connection;
use zbus::zvariant::{OwnedObjectPath, Value};

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
    /// Only when the test calls [`super::systemd::FakeSystemd::finish`] (or, for a stop, a
    /// SIGKILL arrives).
    Manual,
}

#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Unit {
    pub loaded: bool,
    pub active: String,
    pub sub: String,
    pub result: String,
    /// `ActiveEnterTimestamp` (µs): [`ACTIVE_ENTER_US`] for a unit made
    /// active, 0 (never) otherwise.
    pub active_enter: u64,
}

/// The `ActiveEnterTimestamp` the fake gives a unit that becomes active:
/// 2026-11-30T12:00:00Z.
pub const ACTIVE_ENTER_US: u64 = 1_796_040_000_000_000;

impl Unit {
    pub fn new(loaded: bool, active: &str, sub: &str) -> Self {
        Self {
            loaded,
            active: active.into(),
            sub: sub.into(),
            result: "success".into(),
            active_enter: if active == "active" {
                ACTIVE_ENTER_US
            } else {
                0
            },
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
    pub next_job: u32,
}

/// A signal to send once the state lock is released.
pub enum Sig {
    UnitNew(String),
    UnitRemoved(String),
    Props(String, Unit),
    JobRemoved(Job, String),
    /// The manager's `Reloading(b)` (daemon-reload begins / ends).
    Reloading(bool),
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

pub fn glob(pattern: &str, name: &str) -> bool {
    match pattern.split_once('*') {
        None => pattern == name,
        Some((pre, post)) => {
            name.len() >= pre.len() + post.len() && name.starts_with(pre) && name.ends_with(post)
        }
    }
}

impl State {
    pub fn set(
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
        if active == "active" && u.active != "active" {
            u.active_enter = ACTIVE_ENTER_US;
        }
        u.active = active.into();
        u.sub = sub.into();
        if let Some(r) = result {
            u.result = r.into();
        }
        out.push(Sig::Props(unit.into(), u.clone()));
    }

    pub fn begin(&mut self, job: &Job, out: &mut Vec<Sig>) {
        match job.kind {
            Kind::Start | Kind::Restart => self.set(&job.unit, "activating", "start", None, out),
            Kind::Stop => self.set(&job.unit, "deactivating", "stop-sigterm", None, out),
        }
    }

    /// End `job` with `result`: the unit's new state first, then `JobRemoved`.
    pub fn complete(&mut self, job: &Job, result: &str, out: &mut Vec<Sig>) {
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

    pub fn rows(&self, patterns: &[String]) -> Vec<Row> {
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

/// A `ListUnits` row: the same shape the driver's proxy reads.
pub use hive_c0re::systemd::dbus::proxies::UnitRow as Row;

pub type Shared = Arc<Mutex<State>>;

pub fn lock(state: &Shared) -> MutexGuard<'_, State> {
    state.lock().unwrap()
}

pub async fn emit(conn: &Connection, state: &Shared, sigs: Vec<Sig>) {
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
            Sig::Reloading(active) => conn
                .emit_signal(None::<&str>, root, manager, "Reloading", &(active,))
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
                    ("ActiveEnterTimestamp", Value::from(u.active_enter)),
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
