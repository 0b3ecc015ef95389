//! Bus → inbox: this hive's durable pull consumer on `hive.S.inbox.<self>.*`.
//!
//! What is ready is taken as one batch (up to [`BATCH`]), stored in one
//! write transaction, and only then acknowledged on the bus, each message
//! as the store decided: stored or already stored → ack; early (its
//! predecessor from the same hive is not stored yet) → nak with a short
//! delay, so JetStream hands it out again; not understood → term (it can
//! never be stored; logged). If the store fails, the whole batch is nak'd.
//! A crash between the commit and the acks redelivers the batch, which the
//! store recognises as already stored.
//!
//! The source hive is read from the subject's last token, never from the
//! payload: permissions let a hive publish only on subjects that end in
//! its own name.

use std::time::{Duration, Instant};

use async_nats::jetstream::{self, AckKind, consumer::pull};
use futures_lite::StreamExt;

use super::{Bus, Names};
use crate::service::Hive;
use crate::service::swarm::Arrival;
use crate::wire::swarm::BusMessage;

/// Messages stored per transaction, at most.
pub const BATCH: usize = 256;
/// How long JetStream waits for an ack before handing a message out again.
const ACK_WAIT: Duration = Duration::from_secs(10);
/// How long an early message waits before it is handed out again.
const EARLY_DELAY: Duration = Duration::from_millis(200);
/// How long a message for a full inbox waits before the bus offers it
/// again: the agent has to read first, which takes a turn.
const FULL_DELAY: Duration = Duration::from_secs(5);
/// Deliveries of one early message between two warnings.
const STUCK_AFTER: i64 = 300;
/// How long the consumer's stream may yield only errors (its idle
/// heartbeats missed, say) before it is pulled anew.
const CONSUMER_SILENCE: Duration = Duration::from_secs(30);

pub(super) async fn run(bus: Bus) {
    let Some(stream) = bus.stream().await else {
        return;
    };
    let name = bus.names.consumer();
    let config = pull::Config {
        durable_name: Some(name.clone()),
        filter_subject: bus.names.own_filter(),
        ack_policy: jetstream::consumer::AckPolicy::Explicit,
        ack_wait: ACK_WAIT,
        ..Default::default()
    };
    loop {
        let what = format!("consumer {name} cannot pull");
        let pulled = bus
            .until_ok(&what, || async {
                let consumer = stream
                    .get_or_create_consumer(&name, config.clone())
                    .await
                    .map_err(|e| e.to_string())?;
                consumer.messages().await.map_err(|e| e.to_string())
            })
            .await;
        let Some(mut messages) = pulled else {
            return;
        };
        // Since when, and why, the stream has yielded only errors (missed
        // idle heartbeats after a node died, refusals): past
        // CONSUMER_SILENCE the pull is made anew instead of trusted.
        let mut failing: Option<Instant> = None;
        loop {
            let first = tokio::select! {
                () = bus.shutdown.cancelled() => return,
                next = messages.next() => next,
            };
            let mut batch = match first {
                None => break,
                Some(Err(err)) => {
                    let since = *failing.get_or_insert_with(|| {
                        tracing::warn!("swarm consumer {name}: {err}");
                        Instant::now()
                    });
                    if since.elapsed() > CONSUMER_SILENCE {
                        tracing::warn!(
                            "swarm consumer {name} has delivered nothing but errors for {} s \
                             (last: {err}); pulling anew",
                            since.elapsed().as_secs()
                        );
                        break;
                    }
                    continue;
                }
                Some(Ok(m)) => {
                    failing = None;
                    vec![m]
                }
            };
            // Whatever else is ready joins the same transaction.
            while batch.len() < BATCH {
                match tokio::time::timeout(Duration::ZERO, messages.next()).await {
                    Ok(Some(Ok(m))) => batch.push(m),
                    _ => break,
                }
            }
            store_batch(&bus.hive, &bus.names, batch).await;
        }
        tracing::info!("swarm consumer stream ended; pulling again");
    }
}

/// Store one batch and acknowledge each message as the store decided.
async fn store_batch(hive: &Hive, names: &Names, batch: Vec<jetstream::Message>) {
    let mut parsed = Vec::with_capacity(batch.len());
    let mut kept = Vec::with_capacity(batch.len());
    for m in batch {
        let source = names.source_of(m.subject.as_str());
        let body = serde_json::from_slice::<BusMessage>(&m.payload);
        match (source, body) {
            (Some(source), Ok(body)) => {
                parsed.push((source, body));
                kept.push(m);
            }
            (source, body) => {
                tracing::warn!(
                    subject = %m.subject,
                    ?source,
                    error = body.err().map(|e| e.to_string()),
                    "swarm message not understood; dropped"
                );
                ack(&m, AckKind::Term).await;
            }
        }
    }
    match hive.accept_from_swarm(parsed).await {
        Ok(outcomes) => {
            for (m, outcome) in kept.iter().zip(outcomes) {
                let kind = match outcome {
                    Arrival::Stored | Arrival::Duplicate => AckKind::Ack,
                    Arrival::Early { expected } => {
                        held_back(m, expected);
                        AckKind::Nak(Some(EARLY_DELAY))
                    }
                    // Logged by the hive, naming the inbox; the bus keeps it.
                    Arrival::InboxFull => AckKind::Nak(Some(FULL_DELAY)),
                    Arrival::Refused => {
                        tracing::warn!(subject = %m.subject, "swarm message of an unknown version; dropped");
                        AckKind::Term
                    }
                };
                ack(m, kind).await;
            }
        }
        Err(err) => {
            tracing::error!("cannot store messages from the swarm: {err}; they come again");
            for m in &kept {
                ack(m, AckKind::Nak(Some(Duration::from_secs(1)))).await;
            }
        }
    }
}

/// An early message goes back to the bus. Normally its predecessor is
/// a moment behind; one held back [`STUCK_AFTER`] times (about a minute)
/// means the predecessor may never come (see the README's limitations):
/// that is said at warning level, once per [`STUCK_AFTER`] deliveries.
fn held_back(m: &jetstream::Message, expected: i64) {
    let delivered = m.info().map_or(0, |i| i.delivered);
    if delivered > 0 && delivered % STUCK_AFTER == 0 {
        tracing::warn!(
            subject = %m.subject,
            expected,
            delivered,
            "swarm message still waits for its predecessor from the same hive"
        );
    } else {
        tracing::debug!(subject = %m.subject, expected, "swarm message early; held back");
    }
}

/// Acknowledge; a lost ack only means a redelivery, which the store drops.
async fn ack(m: &jetstream::Message, kind: AckKind) {
    if let Err(err) = m.ack_with(kind).await {
        tracing::debug!("swarm ack not sent: {err}");
    }
}
