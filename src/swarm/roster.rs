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

use std::collections::BTreeSet;
use std::time::Duration;

use async_nats::jetstream::{self, kv};
use futures_lite::StreamExt;
use tokio::sync::broadcast::error::RecvError;

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
    tokio::spawn(watch(bus.clone(), bucket.clone()));
    let (hive, names) = (&bus.hive, &bus.names);
    let mut changes = hive.subscribe_roster();
    let mut tick = tokio::time::interval(REPUBLISH_EVERY);
    let mut beat = tokio::time::interval(BEAT_EVERY);
    let mut published = BTreeSet::new();
    // A row put that failed (the client reconnecting to another node, say):
    // every row goes again at the next beat.
    let mut missed = false;
    loop {
        tokio::select! {
            () = bus.shutdown.cancelled() => return,
            _ = tick.tick() => missed = !publish_all(hive, &bucket, names, &mut published).await,
            _ = beat.tick() => {
                put_beat(hive, &bucket, names).await;
                if missed {
                    missed = !publish_all(hive, &bucket, names, &mut published).await;
                }
            }
            change = changes.recv() => match change {
                Ok(RosterChange::Row(row)) => missed |= !put(hive, &bucket, names, *row).await,
                Ok(RosterChange::Removed(name)) => delete(&bucket, names, &mut published, &name).await,
                Err(RecvError::Lagged(_)) => {
                    missed = !publish_all(hive, &bucket, names, &mut published).await;
                }
                Err(RecvError::Closed) => return,
            },
        }
    }
}

/// A destroyed agent's entry, deleted at once (not at the next round).
async fn delete(bucket: &kv::Store, names: &Names, published: &mut BTreeSet<String>, name: &Ident) {
    let key = names.roster_key(name);
    if let Err(err) = bucket.delete(&key).await {
        tracing::debug!(
            key,
            "swarm roster delete failed: {err}; the next round retries"
        );
    } else {
        published.remove(&key);
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

/// Put one row; false if the bus did not take it (the caller retries).
async fn put(hive: &Hive, bucket: &kv::Store, names: &Names, row: AgentStatusRow) -> bool {
    let key = names.roster_key(&row.name);
    let value = SwarmAgentRow {
        hive: names.hive.clone(),
        published_at: hive.now(),
        stale: false,
        row,
    };
    let Ok(bytes) = serde_json::to_vec(&value) else {
        return true;
    };
    match bucket.put(&key, bytes.into()).await {
        Ok(_) => true,
        Err(err) => {
            tracing::debug!(key, "swarm roster put failed: {err}; the next beat retries");
            false
        }
    }
}

/// This hive's heartbeat: its clock, under a key no agent can have.
async fn put_beat(hive: &Hive, bucket: &kv::Store, names: &Names) {
    let key = names.beat_key();
    if let Err(err) = bucket.put(&key, hive.now().to_string().into()).await {
        tracing::debug!(key, "swarm roster heartbeat failed: {err}");
    }
}

/// Put every row of this hive and delete the entries of agents gone; false
/// if a put failed.
async fn publish_all(
    hive: &Hive,
    bucket: &kv::Store,
    names: &Names,
    published: &mut BTreeSet<String>,
) -> bool {
    let rows = match hive.agent_status().await {
        Ok(rows) => rows,
        Err(err) => {
            tracing::warn!("swarm roster: cannot read this hive's roster: {err}");
            return true;
        }
    };
    let now: BTreeSet<String> = rows.iter().map(|r| names.roster_key(&r.name)).collect();
    for gone in published.difference(&now) {
        if let Err(err) = bucket.delete(gone).await {
            tracing::debug!(key = gone, "swarm roster delete failed: {err}");
        }
    }
    let mut all_put = true;
    for row in rows {
        all_put &= put(hive, bucket, names, row).await;
    }
    *published = now;
    all_put
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
                Ok(Some(Ok(entry))) => heard(&bus.hive, &entry),
            }
        }
    }
}

fn heard(hive: &Hive, entry: &kv::Entry) {
    let Some((from, agent)) = parse_roster_key(&entry.key) else {
        return;
    };
    match entry.operation {
        kv::Operation::Put => match serde_json::from_slice::<SwarmAgentRow>(&entry.value) {
            Ok(mut row) => {
                row.hive = from;
                row.row.name = agent;
                hive.swarm_row_heard(row);
            }
            Err(err) => tracing::debug!(key = entry.key, "swarm roster row not understood: {err}"),
        },
        kv::Operation::Delete | kv::Operation::Purge => hive.swarm_row_gone(&from, &agent),
    }
}
