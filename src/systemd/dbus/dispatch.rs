//! The connection's life: connecting and subscribing, the dispatcher task
//! that turns systemd's signals into job results and view changes,
//! reconnecting when the bus goes away, and the full resync.
//!
//! Decision: when the bus connection dies, the dispatcher reconnects by
//! itself (100 ms doubling to 2 s between attempts, forever) and resyncs,
//! so a `dbus-daemon` restart costs the roster a moment, not the daemon.
//! Rejected: ending the daemon and letting systemd restart it — that drops
//! every operator and agent connection for a bus hiccup.

use std::collections::HashMap;
use std::sync::atomic::Ordering;
use std::sync::{Arc, PoisonError};
use std::time::Duration;

use futures_lite::StreamExt;
use zbus::message::Type;
use zbus::names::InterfaceName;
use zbus::proxy::CacheProperties;
use zbus::zvariant::{OwnedObjectPath, OwnedValue};
use zbus::{MatchRule, Message, MessageStream};

use super::proxies::{
    self, MANAGER_INTERFACE, SERVICE_INTERFACE, SYSTEMD_PATH, SYSTEMD_SERVICE, UNIT_INTERFACE,
};
use super::view::Update;
use super::{Settings, Shared};
use crate::containers::{ActiveState, DriverError, Profile, UnitState};
use crate::wire::ident::Ident;

/// Signals queued for the dispatcher before zbus stops reading the socket.
const QUEUE: usize = 4096;
const PROPERTIES_INTERFACE: &str = "org.freedesktop.DBus.Properties";
const RECONNECT_FIRST: Duration = Duration::from_millis(100);
const RECONNECT_MAX: Duration = Duration::from_secs(2);

/// The bus in words, for error messages.
pub(super) fn bus_label(settings: &Settings) -> String {
    match &settings.bus_address {
        Some(a) => format!("the D-Bus bus at {a}"),
        None => "the system bus".to_owned(),
    }
}

/// Why connecting failed, in the operator's terms.
pub(super) fn describe_connect_error(settings: &Settings, e: &zbus::Error) -> String {
    let bus = bus_label(settings);
    let nobody = |e: &zbus::fdo::Error| {
        matches!(
            e,
            zbus::fdo::Error::ServiceUnknown(_) | zbus::fdo::Error::NameHasNoOwner(_)
        )
    };
    let no_systemd = match e {
        zbus::Error::FDO(fdo) => nobody(fdo),
        zbus::Error::MethodError(name, _, _) => matches!(
            name.as_str(),
            "org.freedesktop.DBus.Error.ServiceUnknown"
                | "org.freedesktop.DBus.Error.NameHasNoOwner"
        ),
        _ => false,
    };
    if no_systemd {
        format!("systemd is not on {bus} ({SYSTEMD_SERVICE} has no owner); is this a systemd host?")
    } else {
        format!("cannot use {bus}: {e}")
    }
}

/// The `ListUnitsByPatterns` pattern of the profile's container units.
pub(super) fn unit_pattern(profile: Profile) -> &'static str {
    match profile {
        Profile::Nspawn => "systemd-nspawn@h-*.service",
        Profile::Nixos => "container@h-*.service",
    }
}

/// Connect, add the one match rule, then `Subscribe()` — in that order, so
/// no signal systemd sends for us can be missed.
pub(super) async fn establish(
    settings: &Settings,
) -> zbus::Result<(zbus::Connection, MessageStream)> {
    let builder = match &settings.bus_address {
        Some(address) => zbus::connection::Builder::address(address.as_str())?,
        None => zbus::connection::Builder::system()?,
    };
    let conn = builder.build().await?;
    // The bus daemon resolves the well-known sender name, so only systemd's
    // own signals reach us (any client may emit a signal on the system bus).
    let rule = MatchRule::builder()
        .msg_type(Type::Signal)
        .sender(SYSTEMD_SERVICE)?
        .path_namespace(SYSTEMD_PATH)?
        .build();
    let stream = MessageStream::for_match_rule(rule, &conn, Some(QUEUE)).await?;
    proxies::systemd(&conn).await?.subscribe().await?;
    Ok((conn, stream))
}

/// The dispatcher: drain the stream; when the connection dies, reconnect
/// and resync; forever (the driver aborts it on drop).
pub(super) async fn run(shared: Arc<Shared>, mut stream: MessageStream) {
    loop {
        while let Some(item) = stream.next().await {
            match item {
                Ok(msg) => shared.handle(&msg),
                // zbus only puts an error on a stream when the socket died.
                Err(e) => {
                    tracing::warn!(error = %e, "lost the connection to systemd's bus");
                    break;
                }
            }
        }
        shared.jobs().connection_lost();
        shared.reloading.store(false, Ordering::SeqCst);
        stream = reconnect(&shared).await;
        let resync = shared.clone();
        tokio::spawn(async move {
            match resync.resync().await {
                Ok(()) => tracing::info!("reconnected to systemd and resynced the container view"),
                Err(e) => tracing::warn!(error = %e, "resync after reconnect failed"),
            }
        });
    }
}

async fn reconnect(shared: &Shared) -> MessageStream {
    let mut delay = RECONNECT_FIRST;
    loop {
        tokio::time::sleep(delay).await;
        let attempt =
            tokio::time::timeout(shared.settings.connect_timeout, establish(&shared.settings))
                .await;
        match attempt {
            Ok(Ok((conn, stream))) => {
                *shared.conn.write().unwrap_or_else(PoisonError::into_inner) = conn;
                return stream;
            }
            Ok(Err(e)) => tracing::debug!(error = %e, "reconnect to systemd failed"),
            Err(_) => tracing::debug!("reconnect to systemd timed out"),
        }
        delay = (delay * 2).min(RECONNECT_MAX);
    }
}

/// systemd's microsecond timestamp as unix seconds; 0 (never) is `None`.
pub(super) fn seconds(usec: u64) -> Option<i64> {
    (usec > 0).then(|| i64::try_from(usec / 1_000_000).unwrap_or(i64::MAX))
}

fn timestamp(changed: &HashMap<String, OwnedValue>, key: &str) -> Option<Option<i64>> {
    changed
        .get(key)
        .and_then(|v| v.downcast_ref::<u64>().ok())
        .map(seconds)
}

fn text(changed: &HashMap<String, OwnedValue>, key: &str) -> Option<String> {
    changed
        .get(key)
        .and_then(|v| v.downcast_ref::<&str>().ok())
        .map(str::to_owned)
}

impl Shared {
    fn agent_of_path(&self, path: &str) -> Option<Ident> {
        self.profile
            .agent_of_unit(&proxies::unit_name_of_path(path)?)
    }

    /// One signal. Never awaits (see the module docs of `dbus`); the one
    /// read it needs (after `UnitNew`) runs in a task of its own.
    fn handle(self: &Arc<Self>, msg: &Message) {
        let header = msg.header();
        let (Some(interface), Some(member)) = (header.interface(), header.member()) else {
            return;
        };
        let body = msg.body();
        match (interface.as_str(), member.as_str()) {
            (MANAGER_INTERFACE, "JobRemoved") => {
                if let Ok((_id, job, _unit, result)) =
                    body.deserialize::<(u32, OwnedObjectPath, String, String)>()
                {
                    self.jobs().finished(job.as_str(), &result);
                }
            }
            // A daemon-reload frees and re-creates every unit: systemd sends
            // `UnitRemoved` for each (running ones too), then `UnitNew`,
            // between `Reloading(true)` and `Reloading(false)`. Applied, the
            // removal showed every running container as stopped for a moment
            // and the roster recorded a crash of each (seen under real
            // systemd). So removals during a reload are skipped and a resync
            // follows it.
            (MANAGER_INTERFACE, "Reloading") => {
                let Ok(active) = body.deserialize::<bool>() else {
                    return;
                };
                self.reloading.store(active, Ordering::SeqCst);
                if !active {
                    let shared = self.clone();
                    tokio::spawn(async move {
                        if let Err(e) = shared.resync().await {
                            tracing::warn!(error = %e, "resync after systemd's reload failed");
                        }
                    });
                }
            }
            (MANAGER_INTERFACE, member @ ("UnitNew" | "UnitRemoved")) => {
                let Ok((unit, _path)) = body.deserialize::<(String, OwnedObjectPath)>() else {
                    return;
                };
                let Some(agent) = self.profile.agent_of_unit(&unit) else {
                    return;
                };
                if member == "UnitRemoved" {
                    if self.reloading.load(Ordering::SeqCst) {
                        return;
                    }
                    let change = self.view().unit_removed(&agent);
                    self.publish(change);
                    return;
                }
                let (change, seq) = {
                    let mut view = self.view();
                    (view.unit_new(&agent), view.seq(&agent))
                };
                self.publish(change);
                // systemd sent UnitNew instead of this unit's first change
                // signal: read where it is now (without loading it, see
                // `listed_state`). Not listed: unloaded again already.
                let shared = self.clone();
                tokio::spawn(async move {
                    match listed_state(&shared.conn(), &unit).await {
                        Ok(Some(state)) => {
                            let change = shared.view().fetched(&agent, seq, state);
                            shared.publish(change);
                        }
                        Ok(None) => {}
                        Err(e) => {
                            tracing::debug!(%unit, error = %e, "cannot read a new unit's state")
                        }
                    }
                });
            }
            (PROPERTIES_INTERFACE, "PropertiesChanged") => {
                let Some(agent) = header.path().and_then(|p| self.agent_of_path(p.as_str())) else {
                    return;
                };
                let Ok((iface, changed, _invalidated)) =
                    body.deserialize::<(String, HashMap<String, OwnedValue>, Vec<String>)>()
                else {
                    return;
                };
                let update = match iface.as_str() {
                    UNIT_INTERFACE => Update {
                        active: text(&changed, "ActiveState").map(|s| ActiveState::parse(&s)),
                        sub: text(&changed, "SubState"),
                        result: None,
                        since: timestamp(&changed, "ActiveEnterTimestamp"),
                    },
                    SERVICE_INTERFACE => Update {
                        result: text(&changed, "Result"),
                        ..Update::default()
                    },
                    _ => return,
                };
                let change = self.view().update(&agent, update);
                self.publish(change);
            }
            _ => {}
        }
    }

    /// Reload the whole view from systemd. Runs beside the dispatcher, which
    /// keeps applying signals; see `view` for how the two are merged.
    pub(super) async fn resync(&self) -> Result<(), DriverError> {
        let _one_at_a_time = self.resync_lock.lock().await;
        self.view().begin_resync();
        match self.list_units().await {
            Ok(listed) => {
                let changes = self.view().finish_resync(listed);
                self.publish(changes);
                Ok(())
            }
            Err(e) => {
                self.view().abandon_resync();
                Err(e)
            }
        }
    }

    async fn list_units(&self) -> Result<HashMap<Ident, UnitState>, DriverError> {
        let conn = self.conn();
        let bus = |e: zbus::Error| DriverError::Bus(format!("listing container units: {e}"));
        let systemd = proxies::systemd(&conn).await.map_err(bus)?;
        let pattern = unit_pattern(self.profile);
        let rows = match systemd.list_units_by_patterns(&[], &[pattern]).await {
            Ok(rows) => rows,
            // systemd before 230 has no ListUnitsByPatterns; we filter below.
            Err(zbus::Error::MethodError(name, _, _))
                if name.as_str() == "org.freedesktop.DBus.Error.UnknownMethod" =>
            {
                systemd.list_units().await.map_err(bus)?
            }
            Err(zbus::Error::FDO(e)) if matches!(*e, zbus::fdo::Error::UnknownMethod(_)) => {
                systemd.list_units().await.map_err(bus)?
            }
            Err(e) => return Err(bus(e)),
        };
        let mut listed = HashMap::new();
        for (unit, _desc, _load, active, sub, _following, path, ..) in rows {
            let Some(agent) = self.profile.agent_of_unit(&unit) else {
                continue;
            };
            let active = ActiveState::parse(&active);
            let result = listed_result(&conn, &unit, active, &path).await;
            let since = listed_since(&conn, &unit, active, &path).await;
            listed.insert(
                agent,
                UnitState {
                    active,
                    sub,
                    result,
                    since,
                },
            );
        }
        Ok(listed)
    }
}

async fn properties(
    conn: &zbus::Connection,
    path: &OwnedObjectPath,
) -> zbus::Result<zbus::fdo::PropertiesProxy<'static>> {
    zbus::fdo::PropertiesProxy::builder(conn)
        .destination(SYSTEMD_SERVICE)?
        .path(path.clone())?
        .cache_properties(CacheProperties::No)
        .build()
        .await
}

async fn text_property(
    props: &zbus::fdo::PropertiesProxy<'_>,
    interface: &'static str,
    name: &str,
) -> zbus::Result<String> {
    let value = props
        .get(InterfaceName::from_static_str_unchecked(interface), name)
        .await?;
    Ok(value.downcast_ref::<&str>()?.to_owned())
}

/// The `Result` property of a service unit.
async fn unit_result(conn: &zbus::Connection, path: &OwnedObjectPath) -> zbus::Result<String> {
    text_property(&properties(conn, path).await?, SERVICE_INTERFACE, "Result").await
}

/// The `Result` of a listed unit: read only when it is failed, else
/// `success`. A failed unit stays loaded until it is reset, so reading it
/// loads nothing; an inactive one may be unloaded between the list and the
/// read, and the read would load it again (see [`listed_state`]).
async fn listed_result(
    conn: &zbus::Connection,
    unit: &str,
    active: ActiveState,
    path: &OwnedObjectPath,
) -> String {
    if active != ActiveState::Failed {
        return "success".to_owned();
    }
    match unit_result(conn, path).await {
        Ok(result) => result,
        Err(e) => {
            tracing::debug!(%unit, error = %e, "cannot read the unit's Result");
            "failed".to_owned()
        }
    }
}

/// The `ActiveEnterTimestamp` of a listed unit that is up (for the
/// roster's uptime): an active unit is loaded, so the read loads nothing.
/// Other units' is not read (not shown, and the read could load them).
async fn listed_since(
    conn: &zbus::Connection,
    unit: &str,
    active: ActiveState,
    path: &OwnedObjectPath,
) -> Option<i64> {
    if !matches!(active, ActiveState::Active | ActiveState::Reloading) {
        return None;
    }
    let read = async {
        let value = properties(conn, path)
            .await?
            .get(
                InterfaceName::from_static_str_unchecked(UNIT_INTERFACE),
                "ActiveEnterTimestamp",
            )
            .await?;
        Ok::<_, zbus::Error>(value.downcast_ref::<u64>()?)
    };
    match read.await {
        Ok(usec) => seconds(usec),
        Err(e) => {
            tracing::debug!(%unit, error = %e, "cannot read the unit's ActiveEnterTimestamp");
            None
        }
    }
}

/// A unit's state as `ListUnitsByPatterns` shows it; `None` when it is not
/// loaded. Why not `Properties.Get` on its object path: a `Get` on the path
/// of an unloaded unit makes systemd load it (`UnitNew`), and an inactive
/// unreferenced unit is unloaded again at once (`UnitRemoved`); with a read
/// after every `UnitNew`, the daemon and PID 1 fed each other for ever once
/// anything touched a stopped agent's unit (seen under real systemd: ~2000
/// UnitNew/UnitRemoved a second, dbus-daemon, systemd and hive-c0re at 100%
/// CPU, and the daemon's calls refused with `LimitsExceeded`).
/// `ListUnitsByPatterns` lists loaded units only and loads none.
async fn listed_state(conn: &zbus::Connection, unit: &str) -> zbus::Result<Option<UnitState>> {
    let systemd = proxies::systemd(conn).await?;
    let rows = systemd.list_units_by_patterns(&[], &[unit]).await?;
    let Some((_, _, _, active, sub, _, path, ..)) = rows.into_iter().find(|r| r.0 == unit) else {
        return Ok(None);
    };
    let active = ActiveState::parse(&active);
    let result = listed_result(conn, unit, active, &path).await;
    let since = listed_since(conn, unit, active, &path).await;
    Ok(Some(UnitState {
        active,
        sub,
        result,
        since,
    }))
}

#[cfg(test)]
#[path = "dispatch_tests.rs"]
mod tests;
