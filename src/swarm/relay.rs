//! Outbox → bus: publish every unsent outbox row, oldest first, and mark it
//! sent only after JetStream acknowledged it.
//!
//! A batch is pipelined (every publish written, then every ack awaited in
//! order) and the acknowledged prefix is marked sent in one transaction.
//! When an ack fails, the rows from there on stay unsent and the batch is
//! read again after a backoff. A row published twice (its ack was lost, or
//! the hive died between the ack and the mark) carries the same
//! `Nats-Msg-Id`, which JetStream drops inside its de-duplication window;
//! past the window, the receiver's sequence check drops it. A row that
//! reaches the stream after its successor (its publish failed, the next
//! one's did not) is put back in order by the receiver, which holds the
//! successor until it arrives.
//!
//! Rejected alternative: one publish and one ack wait per row, which keeps
//! the stream in order by itself but costs a round trip to the cluster per
//! message.

use std::time::Duration;

use async_nats::jetstream::message::PublishMessage;

use super::{Backoff, Bus};
use crate::service::swarm::OutboxItem;

/// Rows read and published per batch.
pub const BATCH: u32 = 256;
/// Even without a wake-up, the outbox is looked at this often.
const IDLE_RECHECK: Duration = Duration::from_secs(5);

pub(super) async fn run(bus: Bus) {
    // Without the stream a publish has no responder: wait for it first.
    if bus.stream().await.is_none() {
        return;
    }
    let mut backoff = Backoff::new();
    loop {
        let Some(items) = bus
            .until_ok("relay cannot read the outbox", || {
                bus.hive.outbox_unsent(BATCH)
            })
            .await
        else {
            return;
        };
        if items.is_empty() {
            tokio::select! {
                () = bus.shutdown.cancelled() => return,
                () = bus.hive.outbox_changed() => {}
                () = tokio::time::sleep(IDLE_RECHECK) => {}
            }
            continue;
        }
        match publish(&bus, &items).await {
            Ok(()) => backoff.reset(),
            Err(err) => {
                tracing::warn!("swarm relay: {err}; retrying");
                if !backoff.wait(&bus.shutdown).await {
                    return;
                }
            }
        }
    }
}

/// Publish `items` in order; mark the acknowledged prefix sent. `Err` when
/// not all of them were acknowledged (the rest stay unsent).
async fn publish(bus: &Bus, items: &[OutboxItem]) -> Result<(), String> {
    let mut acks = Vec::with_capacity(items.len());
    let mut failure = None;
    for item in items {
        let payload = match serde_json::to_vec(&item.message) {
            Ok(p) => p,
            Err(err) => {
                failure = Some(format!("cannot encode outbox row {}: {err}", item.id));
                break;
            }
        };
        let message = PublishMessage::build()
            .payload(payload.into())
            .message_id(&item.swarm_id);
        match bus
            .js
            .send_publish(bus.names.subject_to(&item.dest_hive), message)
            .await
        {
            Ok(ack) => acks.push((item.id, ack)),
            Err(err) => {
                failure = Some(format!("publish of {} failed: {err}", item.swarm_id));
                break;
            }
        }
    }
    let mut sent = Vec::with_capacity(acks.len());
    for (id, ack) in acks {
        match ack.await {
            Ok(ack) => {
                if ack.duplicate {
                    tracing::debug!(id, "the bus already had this outbox row");
                }
                sent.push(id);
            }
            Err(err) => {
                failure.get_or_insert_with(|| format!("no publish ack for outbox row {id}: {err}"));
                break;
            }
        }
    }
    if let Err(err) = bus.hive.outbox_sent(sent).await {
        // Published but not marked: it goes out again, and the copy is
        // dropped by the bus or the receiver.
        return Err(format!("cannot mark outbox rows sent: {err}"));
    }
    failure.map_or(Ok(()), Err)
}
