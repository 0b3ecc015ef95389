//! The hive's side of the swarm, for the bus door (`crate::swarm`): the
//! outbox a cross-hive `send` commits to, the idempotent insert of what
//! other hives sent, and the swarm roster as last heard.
//!
//! Decisions:
//! - **A cross-hive send is acknowledged when its outbox row is committed**
//!   — the same transaction and durability as a local send — never when
//!   the bus has it: the bus may be down for hours and `send` must not
//!   wait. The relay wakes on a `Notify` (a stored permit, so a wake-up
//!   while it publishes is not lost).
//! - **An arriving message for an agent this hive does not manage goes to
//!   this hive's operator inbox**, marked with the name it was for. It was
//!   acknowledged to its sender; dropping it would lose it, and bouncing it
//!   would make a loop of two hives possible.
//! - The roster of other hives is kept in memory only: the bus's key-value
//!   bucket is its source, re-read on every start.

use std::collections::BTreeMap;
use std::sync::Arc;
use std::time::Duration;

use super::messaging::{self, Content, Wakes};
use super::swarm_state::SwarmState;
use super::{Hive, HiveError, SwarmChange};
use crate::clock::SharedClock;
use crate::hive::address::{RemoteAddress, remote_sender, swarm_id};
use crate::hive::{OPERATOR, Recipient, names};
use crate::store::swarm::{self as rows, Arriving, Inbound};
use crate::store::{Store, agents, immediate};
use crate::wire::host::SwarmAgentRow;
use crate::wire::ident::Ident;
use crate::wire::swarm::{BUS_VERSION, BusMessage};

/// A row of another hive not republished for this long is marked stale in
/// the swarm roster (its hive stopped or lost the bus, or this hive did).
pub const ROSTER_STALE_AFTER: Duration = Duration::from_secs(90);

/// After this long without a republish another hive's row is forgotten
/// (its hive is taken to be gone for good); until then it shows, stale.
pub const ROSTER_FORGET_AFTER: Duration = Duration::from_secs(3600);

/// One outbox row, ready for the bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxItem {
    /// The outbox row, to mark sent.
    pub id: i64,
    pub dest_hive: Ident,
    /// The swarm-wide id: the `Nats-Msg-Id` the bus de-duplicates on.
    pub swarm_id: String,
    pub message: BusMessage,
}

/// What became of a message another hive sent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Arrival {
    /// Committed to an inbox here: ack it on the bus.
    Stored,
    /// Already stored before: ack it on the bus, it changes nothing.
    Duplicate,
    /// Its predecessor from the same hive has not been stored yet: leave it
    /// unacknowledged so the bus hands it out again.
    Early { expected: i64 },
    /// Not a message this build understands: it can never be stored.
    Refused,
    /// Its recipient's inbox is at its cap (`inbox_max_*`): leave it, and
    /// those behind it from the same hive, unacknowledged so the bus hands
    /// it out again once the agent has read. It was acknowledged to its
    /// sender, so it is never dropped.
    InboxFull,
}

/// The messaging room's [`messaging::Outbox`] port: a cross-hive send is
/// one outbox row, committed before `send` answers, and the relay woken.
/// It holds the store, the clock and the swarm's state part (shared with
/// the façade), not the hive, so the room depends on this much only.
#[derive(Debug)]
pub(super) struct SwarmOutbox {
    store: Store,
    clock: SharedClock,
    swarm: Arc<SwarmState>,
}

impl SwarmOutbox {
    pub(super) fn new(store: Store, clock: SharedClock, swarm: Arc<SwarmState>) -> Self {
        Self {
            store,
            clock,
            swarm,
        }
    }
}

#[async_trait::async_trait]
impl messaging::Outbox for SwarmOutbox {
    /// `sender` sends `body` to an agent of another hive: one outbox row,
    /// committed before this returns. How many inboxes it is for (1).
    async fn enqueue(
        &self,
        sender: &Ident,
        to: RemoteAddress,
        body: String,
    ) -> Result<usize, HiveError> {
        let (from, now) = (sender.clone(), self.clock.now_unix());
        self.store
            .run(move |c| {
                let tx = immediate(c)?;
                rows::enqueue(&tx, &to.hive, from.as_str(), to.agent.as_str(), &body, now)?;
                tx.commit()?;
                Ok(())
            })
            .await?;
        self.swarm.relay_wake();
        Ok(1)
    }
}

impl Hive {
    /// This hive's name (`local` when it has none).
    pub fn own_hive(&self) -> Ident {
        self.config()
            .hive_name
            .clone()
            .unwrap_or_else(|| Ident::from_static("local"))
    }

    /// Wait until a cross-hive send may have queued something.
    pub async fn outbox_changed(&self) {
        self.inner.swarm.relay_changed().await;
    }

    /// Up to `limit` outbox rows not yet on the bus, oldest first.
    pub async fn outbox_unsent(&self, limit: u32) -> Result<Vec<OutboxItem>, HiveError> {
        let unsent = self.store().run(move |c| rows::unsent(c, limit)).await?;
        let own = self.own_hive();
        Ok(unsent
            .into_iter()
            .map(|r| OutboxItem {
                id: r.id,
                swarm_id: swarm_id(&own, &r.dest_hive, r.seq),
                dest_hive: r.dest_hive,
                message: BusMessage {
                    v: BUS_VERSION,
                    seq: r.seq,
                    from: r.from,
                    to: r.to,
                    body: r.body,
                    at: r.at,
                },
            })
            .collect())
    }

    /// The bus acknowledged these outbox rows (one transaction).
    pub async fn outbox_sent(&self, ids: Vec<i64>) -> Result<(), HiveError> {
        if ids.is_empty() {
            return Ok(());
        }
        let now = self.now();
        Ok(self
            .store()
            .run(move |c| {
                let tx = immediate(c)?;
                for id in ids {
                    rows::mark_sent(&tx, id, now)?;
                }
                tx.commit()?;
                Ok(())
            })
            .await?)
    }

    /// How many cross-hive messages wait for the bus.
    pub async fn outbox_backlog(&self) -> Result<u64, HiveError> {
        Ok(self.store().run(|c| rows::unsent_count(c)).await?)
    }

    /// Delete outbox rows the bus acknowledged before the retention window;
    /// how many.
    pub async fn vacuum_outbox(&self) -> Result<usize, HiveError> {
        let retention = i64::try_from(self.config().message_retention_secs).unwrap_or(i64::MAX);
        let before = self.now().saturating_sub(retention);
        Ok(self
            .store()
            .run(move |c| rows::vacuum_sent(c, before))
            .await?)
    }

    /// The daemon's vacuum: handled messages past the retention window
    /// (the messaging room's), then outbox rows the bus acknowledged
    /// before it; how many messages.
    pub async fn vacuum_messages(&self) -> Result<usize, HiveError> {
        let n = self.messaging().vacuum().await?;
        let sent = self.vacuum_outbox().await?;
        if sent > 0 {
            tracing::info!(deleted = sent, "vacuumed relayed outbox rows");
        }
        Ok(n)
    }

    /// Store messages other hives sent, each with its source hive (from
    /// the bus subject), in one transaction; what became of each. Per
    /// source, once one is early, those after it are early too.
    pub async fn accept_from_swarm(
        &self,
        batch: Vec<(Ident, BusMessage)>,
    ) -> Result<Vec<Arrival>, HiveError> {
        let own = self.own_hive();
        let hive = self.clone();
        let (outcomes, wakes) = self
            .store()
            .run(move |c| {
                let tx = immediate(c)?;
                let mut outcomes = Vec::with_capacity(batch.len());
                let mut wakes = Wakes::default();
                let mut blocked: BTreeMap<Ident, i64> = BTreeMap::new();
                for (source, m) in &batch {
                    if m.v != BUS_VERSION {
                        outcomes.push(Arrival::Refused);
                        continue;
                    }
                    if let Some(&expected) = blocked.get(source) {
                        outcomes.push(Arrival::Early { expected });
                        continue;
                    }
                    let (to, body) = recipient_here(&tx, source, m)?;
                    if m.seq == rows::expected_seq(&tx, source)?
                        && hive.mail().admit(&m.from, &to, body.len(), &wakes).is_err()
                    {
                        tracing::warn!(
                            to = %to.as_str(), from = %remote_sender(&m.from, source),
                            "inbox full (inbox_max_*); the swarm message waits on the bus"
                        );
                        blocked.insert(source.clone(), m.seq);
                        outcomes.push(Arrival::InboxFull);
                        continue;
                    }
                    let arriving = Arriving {
                        source,
                        seq: m.seq,
                        swarm_id: &swarm_id(source, &own, m.seq),
                        from: &remote_sender(&m.from, source),
                        to: &to,
                        body: &body,
                        at: m.at,
                    };
                    match rows::accept(&tx, &arriving)? {
                        Inbound::Inserted(id) => {
                            let content = Content {
                                from: arriving.from.to_owned(),
                                body: body.clone(),
                                in_reply_to: None,
                            };
                            wakes.add(Wakes::arrived(&to, id, content));
                            outcomes.push(Arrival::Stored);
                        }
                        Inbound::Duplicate => outcomes.push(Arrival::Duplicate),
                        Inbound::Gap { expected } => {
                            blocked.insert(source.clone(), expected);
                            outcomes.push(Arrival::Early { expected });
                        }
                    }
                }
                tx.commit()?;
                Ok((outcomes, wakes))
            })
            .await?;
        self.mail().wake(wakes);
        Ok(outcomes)
    }

    /// Remember (or replace) one agent row of some hive, as the bus said;
    /// another hive's row that changed is pushed to live views.
    pub fn swarm_row_heard(&self, row: SwarmAgentRow) {
        self.inner.swarm.heard(row, &self.own_hive());
    }

    /// The bus refused something or failed (told by the client's event
    /// callback): logged at warn, and kept for `status --swarm`.
    pub fn swarm_bus_error(&self, what: String) {
        tracing::warn!("swarm bus: {what}");
        self.inner.swarm.bus_error(self.now(), what);
    }

    /// The bus's last refusal or error, if any: when (unix seconds) and what.
    pub fn swarm_last_bus_error(&self) -> Option<(i64, String)> {
        self.inner.swarm.last_bus_error()
    }

    /// An agent row of some hive was deleted from the bus.
    pub fn swarm_row_gone(&self, hive: &Ident, agent: &Ident) {
        self.inner.swarm.gone(hive, agent, &self.own_hive());
    }

    /// Other hives' roster changes as they are heard. A receiver that lags
    /// loses changes, never blocks. This hive's own: [`Hive::subscribe_roster`].
    pub fn subscribe_swarm(&self) -> tokio::sync::broadcast::Receiver<SwarmChange> {
        self.inner.swarm.subscribe()
    }

    /// Every agent of the swarm by hive then name: this hive's rows live,
    /// the others' as last heard, marked stale when not republished for
    /// [`ROSTER_STALE_AFTER`] and left out after [`ROSTER_FORGET_AFTER`].
    /// Without a swarm: this hive's rows under its name (or `local`).
    pub async fn swarm_roster(&self) -> Result<Vec<SwarmAgentRow>, HiveError> {
        let own = self.own_hive();
        let now = self.now();
        let secs = |d: Duration| i64::try_from(d.as_secs()).unwrap_or(i64::MAX);
        let (stale, forget) = (secs(ROSTER_STALE_AFTER), secs(ROSTER_FORGET_AFTER));
        let mut out = self.inner.swarm.others(&own, now, stale, forget);
        out.extend(
            self.agent_status()
                .await?
                .into_iter()
                .map(|row| SwarmAgentRow {
                    hive: own.clone(),
                    published_at: now,
                    stale: false,
                    row,
                }),
        );
        out.sort_by(|a, b| (&a.hive, &a.row.name).cmp(&(&b.hive, &b.row.name)));
        Ok(out)
    }
}

/// Who an arriving message is for here, and its body: the named agent, the
/// operator for `operator`, and the operator (body marked) for a name this
/// hive does not manage.
fn recipient_here(
    conn: &rusqlite::Connection,
    source: &Ident,
    m: &BusMessage,
) -> Result<(Recipient, String), crate::store::StoreError> {
    // A sender no agent may be (`system`: the daemon's events never cross
    // hives), or not a name at all: the operator reads it, not an agent
    // that could take it for its own hive's word.
    if let Err(why) = names::check_remote_sender(&m.from) {
        return Ok((
            Recipient::Operator,
            format!(
                "[from hive {source}: {why}; it was for {:?}] {}",
                clip(&m.to),
                m.body
            ),
        ));
    }
    if m.to == OPERATOR {
        return Ok((Recipient::Operator, m.body.clone()));
    }
    if let Ok(name) = Ident::new(m.to.as_str())
        && agents::get(conn, &name)?.is_some()
    {
        return Ok((Recipient::Agent(name), m.body.clone()));
    }
    Ok((
        Recipient::Operator,
        format!(
            "[for {:?}, not an agent of this hive] {}",
            clip(&m.to),
            m.body
        ),
    ))
}

/// A name from the bus, cut to a length a log line or a body prefix holds.
fn clip(name: &str) -> String {
    name.chars().take(80).collect()
}

#[cfg(test)]
#[path = "swarm_tests.rs"]
mod tests;
