//! The swarm roster: this hive's rows into the bus's key-value bucket
//! (`<hive>.<agent>` keys), every hive's rows out of it into the service's
//! in-memory view, which `status --swarm` reads.
//!
//! Rows are put when they change and all of them every
//! [`REPUBLISH_EVERY`]; a row whose agent is destroyed is deleted at once
//! (and any row left over, at the next round). The bucket
//! keeps entries for [`ENTRY_TTL`], so the rows of a hive that stopped for
//! good disappear by themselves, and readers also leave out rows older
//! than `ROSTER_STALE_AFTER`. The hive of a row is taken from its key
//! (which permissions tie to the writer), not from its payload.
//!
//! Two readers feed the view. The **watch** (a JetStream ordered consumer)
//! gives the current rows at start and after any gap. The **live feed**, a
//! plain subscription to the bucket's subjects, hears every put as it is
//! published. Decided so because the swarm tier showed the watch cannot be
//! recreated while JetStream's meta group has no leader (`503 JetStream
//! system temporarily unavailable` for 20 s and more after a node's death,
//! when the node killed before it was still catching up): creating a
//! consumer needs that leader, a core subscription does not (the client
//! renews it on every reconnect), and a put that reached any node reaches
//! the subscribers even while the bucket's stream cannot store it. The
//! watch alone (as before) missed the 30 s bound in such runs.

use std::collections::BTreeSet;
use std::time::Duration;

use async_nats::HeaderMap;
use async_nats::jetstream::{self, kv};
use futures_lite::StreamExt;
use tokio::sync::broadcast::error::RecvError;
use tokio::task::JoinSet;

use super::names::parse_roster_key;
use super::{Bus, Names};
use crate::service::{Hive, RosterChange};
use crate::wire::host::{AgentStatusRow, SwarmAgentRow};
use crate::wire::ident::Ident;

/// Every row of this hive is put again this often.
pub const REPUBLISH_EVERY: Duration = Duration::from_secs(20);
/// How long the bucket keeps an entry not put again.
pub const ENTRY_TTL: Duration = Duration::from_secs(120);
/// This hive puts its heartbeat key ([`Names::beat_key`]) this often, so
/// every live watch hears something at least this often, whatever the
/// size of the roster; a put that failed since the last round is retried
/// with all rows at the next beat, not 20 s later.
pub const BEAT_EVERY: Duration = Duration::from_secs(5);
/// A watch that hears nothing this long is dead: a live one hears this
/// hive's own heartbeat every [`BEAT_EVERY`]. (A watch whose consumer the
/// server refuses to recreate after a reconnect says nothing at all: the
/// client library retries it silently; and after a node's death the swarm
/// tier saw async-nats 0.51's ordered consumer go silent without an error
/// or a refusal.) Three beats: a live watch is not taken for dead over one
/// slow put, a dead one is recreated, with the bucket's current rows,
/// within 15 s.
pub const WATCH_SILENCE: Duration = Duration::from_secs(BEAT_EVERY.as_secs() * 3);

pub(super) async fn run(bus: Bus) {
    let Some(bucket) = bucket(&bus).await else {
        return;
    };
    tokio::spawn(watch(bus.clone(), bucket));
    tokio::spawn(live_feed(bus.clone()));
    let mut changes = bus.hive.subscribe_roster();
    let mut tick = tokio::time::interval(REPUBLISH_EVERY);
    let mut beat = tokio::time::interval(BEAT_EVERY);
    let mut puts = Puts::new(&bus);
    // A put the bus did not take (its stream without a leader, the client
    // reconnecting to another node): every row goes again at the next beat.
    let mut missed = false;
    loop {
        tokio::select! {
            () = bus.shutdown.cancelled() => return,
            _ = tick.tick() => puts.all().await,
            _ = beat.tick() => {
                puts.beat().await;
                if std::mem::take(&mut missed) {
                    puts.all().await;
                }
            }
            change = changes.recv() => match change {
                Ok(RosterChange::Row(row)) => puts.row(*row).await,
                Ok(RosterChange::Removed(name)) => puts.delete(&name).await,
                Err(RecvError::Lagged(_)) => puts.all().await,
                Err(RecvError::Closed) => return,
            },
            Some(done) = puts.acks.join_next() => missed |= !puts.taken(done),
        }
    }
}

/// This hive's writes to the bucket. Each is published at once and its
/// acknowledgement awaited aside (`acks`), never in line: a put waiting
/// out its ack timeout (the bucket's stream electing a leader after a
/// node's death) held every later change behind it for 5 s each, the new
/// agent's row among them, while the live feeds of other hives would have
/// heard it at once.
struct Puts<'a> {
    bus: &'a Bus,
    /// `$KV.<bucket>.`
    prefix: String,
    /// Keys put (and not deleted) by the last round.
    published: BTreeSet<String>,
    /// One task per write in flight: whether the bus took it, and the key
    /// if it was a delete (one not taken is tried again by the next round).
    acks: JoinSet<(bool, Option<String>)>,
}

impl<'a> Puts<'a> {
    fn new(bus: &'a Bus) -> Self {
        Puts {
            bus,
            prefix: format!("$KV.{}.", bus.names.roster_bucket()),
            published: BTreeSet::new(),
            acks: JoinSet::new(),
        }
    }

    /// Publish `payload` under `key`, or (`delete`) the key's delete marker.
    async fn publish(&mut self, key: &str, payload: Vec<u8>, delete: bool) {
        let subject = format!("{}{key}", self.prefix);
        let sent = match delete {
            true => {
                let mut headers = HeaderMap::new();
                headers.insert("KV-Operation", "DEL");
                self.bus
                    .js
                    .publish_with_headers(subject, headers, payload.into())
                    .await
            }
            false => self.bus.js.publish(subject, payload.into()).await,
        };
        let deleted = delete.then(|| key.to_owned());
        let key = key.to_owned();
        match sent {
            Ok(ack) => {
                self.acks.spawn(async move {
                    let taken = ack.await.map_err(|err| {
                        tracing::debug!(
                            key,
                            "swarm roster write not taken: {err}; the next beat retries"
                        );
                    });
                    (taken.is_ok(), deleted)
                });
            }
            Err(err) => {
                tracing::debug!(
                    key,
                    "swarm roster write failed: {err}; the next beat retries"
                );
                self.acks.spawn(async { (false, deleted) });
            }
        }
    }

    /// A write's acknowledgement came (or its task ended): false if the bus
    /// did not take it; a delete not taken is owed again.
    fn taken(&mut self, done: Result<(bool, Option<String>), tokio::task::JoinError>) -> bool {
        match done {
            Ok((true, _)) => true,
            Ok((false, deleted)) => {
                self.published.extend(deleted);
                false
            }
            Err(_) => false,
        }
    }

    /// Put one row of this hive.
    async fn row(&mut self, row: AgentStatusRow) {
        let names = &self.bus.names;
        let key = names.roster_key(&row.name);
        let value = SwarmAgentRow {
            hive: names.hive.clone(),
            published_at: self.bus.hive.now(),
            stale: false,
            row,
        };
        if let Ok(bytes) = serde_json::to_vec(&value) {
            self.publish(&key, bytes, false).await;
            self.published.insert(key);
        }
    }

    /// This hive's heartbeat: its clock, under a key no agent can have.
    async fn beat(&mut self) {
        let key = self.bus.names.beat_key();
        let now = self.bus.hive.now().to_string();
        self.publish(&key, now.into_bytes(), false).await;
    }

    /// A destroyed agent's entry, deleted at once (not at the next round).
    async fn delete(&mut self, name: &Ident) {
        let key = self.bus.names.roster_key(name);
        self.delete_key(&key).await;
        self.published.remove(&key);
    }

    async fn delete_key(&mut self, key: &str) {
        self.publish(key, Vec::new(), true).await;
    }

    /// Put every row of this hive and delete the entries of agents gone.
    async fn all(&mut self) {
        let rows = match self.bus.hive.agent_status().await {
            Ok(rows) => rows,
            Err(err) => {
                tracing::warn!("swarm roster: cannot read this hive's roster: {err}");
                return;
            }
        };
        let names = &self.bus.names;
        let now: BTreeSet<String> = rows.iter().map(|r| names.roster_key(&r.name)).collect();
        let gone: Vec<String> = self.published.difference(&now).cloned().collect();
        for key in gone {
            self.delete_key(&key).await;
        }
        self.published = now;
        for row in rows {
            self.row(row).await;
        }
    }
}

/// The roster bucket, created when missing.
///
/// The bucket's stream is created here with the key-value layout
/// (`KV_<bucket>`, subjects `$KV.<bucket>.>`, one value per key, rollups,
/// direct gets, discard new) instead of by `create_key_value`, which first
/// reads the account's info in a shape nats-server 2.9 (Debian 12's) does
/// not send, and which would need one more permission (`$JS.API.INFO`).
async fn bucket(bus: &Bus) -> Option<kv::Store> {
    bus.until_ok("roster bucket not reachable", || async {
        bus.js
            .get_or_create_stream(bucket_stream(&bus.names, bus.replicas))
            .await
            .map_err(|e| e.to_string())?;
        bus.js
            .get_key_value(bus.names.roster_bucket())
            .await
            .map_err(|e| e.to_string())
    })
    .await
}

/// The stream under the roster bucket.
fn bucket_stream(names: &Names, replicas: usize) -> jetstream::stream::Config {
    let bucket = names.roster_bucket();
    jetstream::stream::Config {
        name: format!("KV_{bucket}"),
        subjects: vec![format!("$KV.{bucket}.>")],
        max_messages_per_subject: 1,
        max_age: ENTRY_TTL,
        storage: jetstream::stream::StorageType::File,
        num_replicas: replicas,
        allow_rollup: true,
        deny_delete: true,
        allow_direct: true,
        discard: jetstream::stream::DiscardPolicy::New,
        ..Default::default()
    }
}

/// Follow every hive's rows (the current ones first) until shutdown.
async fn watch(bus: Bus, bucket: kv::Store) {
    loop {
        let Some(mut entries) = bus
            .until_ok("roster watch failed", || bucket.watch_with_history(">"))
            .await
        else {
            return;
        };
        loop {
            let entry = tokio::select! {
                () = bus.shutdown.cancelled() => return,
                e = tokio::time::timeout(WATCH_SILENCE, entries.next()) => e,
            };
            match entry {
                Err(_) => {
                    tracing::warn!(
                        "swarm roster watch heard nothing for {} s, not even this hive's own \
                         heartbeat (put every {} s): recreating it; if this repeats, check this \
                         hive's NATS permissions (src/swarm/README.md) and the server's log",
                        WATCH_SILENCE.as_secs(),
                        BEAT_EVERY.as_secs()
                    );
                    break;
                }
                Ok(None) => break,
                Ok(Some(Err(err))) => {
                    tracing::warn!("swarm roster watch failed: {err}; recreating it");
                    break;
                }
                Ok(Some(Ok(entry))) => heard_entry(&bus.hive, &entry),
            }
        }
    }
}

/// Follow every put to the bucket as it is published, until shutdown (see
/// the module docs). A refused subscription (a NATS config without the
/// feed's grant) is logged and shown by the bus's error callback; the
/// watch still works then.
async fn live_feed(bus: Bus) {
    let subject = format!("$KV.{}.>", bus.names.roster_bucket());
    let prefix = format!("$KV.{}.", bus.names.roster_bucket());
    let client = bus.js.client();
    let Some(mut puts) = bus
        .until_ok("roster live feed failed", || {
            client.subscribe(subject.clone())
        })
        .await
    else {
        return;
    };
    loop {
        let message = tokio::select! {
            () = bus.shutdown.cancelled() => return,
            m = puts.next() => m,
        };
        let Some(message) = message else {
            tracing::warn!("swarm roster live feed ended; the watch goes on alone");
            return;
        };
        let Some(key) = message.subject.as_str().strip_prefix(&prefix) else {
            continue;
        };
        let operation = match message
            .headers
            .as_ref()
            .and_then(|h| h.get("KV-Operation"))
            .map(|op| op.as_str().parse::<kv::Operation>())
        {
            None => kv::Operation::Put,
            Some(Ok(op)) => op,
            Some(Err(_)) => continue,
        };
        heard(&bus.hive, key, operation, &message.payload);
    }
}

fn heard_entry(hive: &Hive, entry: &kv::Entry) {
    heard(hive, &entry.key, entry.operation, &entry.value);
}

/// A roster key's put or delete, from the watch or the live feed: the
/// view keeps the newest row of a key (by its `published_at`), so hearing
/// one twice changes nothing.
fn heard(hive: &Hive, key: &str, operation: kv::Operation, value: &[u8]) {
    let Some((from, agent)) = parse_roster_key(key) else {
        return;
    };
    match operation {
        kv::Operation::Put => match serde_json::from_slice::<SwarmAgentRow>(value) {
            Ok(mut row) => {
                row.hive = from;
                row.row.name = agent;
                hive.swarm_row_heard(row);
            }
            Err(err) => tracing::debug!(key, "swarm roster row not understood: {err}"),
        },
        kv::Operation::Delete | kv::Operation::Purge => hive.swarm_row_gone(&from, &agent),
    }
}
