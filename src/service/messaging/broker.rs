//! The agents' side of the inboxes: send, recv (long-poll), ack, requeue,
//! unread, recent, wake, and the operator's inbox and sends.
//!
//! Decisions:
//! - **A message is a committed row before `send` answers**; a `recv` is
//!   answered from the agent's queue in memory (`queue_state`: no write
//!   waited for), an `ack_turn` is on disk before it answers (see
//!   [`crate::store::messages`]).
//! - **Long-poll on a per-agent `Notify`**, armed *before* the table is
//!   read: a delivery between the read and the wait still wakes the
//!   waiter. Rejected alternative: polling the table on a timer, which
//!   costs a query per waiter per tick and adds its period to every wake.
//! - **Transient wakes live in memory only** (a bounded per-agent queue,
//!   id 0); `recv` hands them out before stored messages.
//! - A long poll ends early, with nothing popped, when its `cancel` future
//!   fires (the daemon stops, the client hung up), so no message is popped
//!   for a client that can no longer read it.

use std::future::Future;
use std::time::Duration;

use tokio::sync::watch;

use super::mail::{self, Wakes};
use super::queue_state;
use super::{HiveError, Messaging};
use crate::hive::address::{self, Address};
use crate::hive::arguments;
use crate::hive::broker;
use crate::hive::{OPERATOR, Recipient};
use crate::store::agents;
use crate::store::immediate;
use crate::store::messages;
use crate::store::replies;
use crate::wire::agent::Response;
use crate::wire::agent::{DeliveredMessage, InboxRow};
use crate::wire::ident::Ident;
use crate::wire::inspect::InboxDepth;

/// The answer a send that reached `n` inboxes gives, as a kept row holds
/// it (the replies room reads it back as a `Response`).
fn sent_text(n: usize) -> String {
    serde_json::to_string(&Response::sent(n)).unwrap_or_default()
}

/// The longest a `recv` waits, whatever it asks for.
pub const LONG_POLL_CAP: Duration = Duration::from_secs(180);
/// How many messages a `recv` without `max` pops.
pub const DEFAULT_RECV_MAX: u32 = 10;
/// The most a `recv` pops at once, whatever it asks for.
pub const RECV_MAX_CAP: u32 = 500;
/// The most rows `recent` or the operator's inbox return.
pub const RECENT_CAP: u64 = 1000;

impl Messaging {
    /// Refuse a body (or a status text) over `max_body_bytes`.
    pub(crate) fn check_body(&self, body: &str) -> Result<(), HiveError> {
        let cap = self.state.settings.max_body_bytes;
        if body.len() > cap {
            return Err(HiveError::BodyTooLarge {
                size: body.len(),
                cap,
            });
        }
        Ok(())
    }

    /// `sender` sends `body` to `to` (an agent, `operator`, `<parent>`,
    /// `<children>`, or `agent@hive` of another hive, committed to the
    /// swarm's outbox through the [`super::Outbox`] port), resolved
    /// against the topology in the transaction that stores the rows.
    /// Returns how many inboxes got it.
    pub async fn send(
        &self,
        sender: &Ident,
        to: &str,
        body: String,
        in_reply_to: Option<i64>,
    ) -> Result<usize, HiveError> {
        self.send_keeping(sender, to, body, in_reply_to, None).await
    }

    /// [`Messaging::send`] of a request that carried idempotency key
    /// `key` (the replies room found no answer kept for it): the message
    /// rows and the kept answer (`{"kind":"ok","delivered":n}`, in the
    /// `replies` table) are one commit, so a daemon killed at any point
    /// either delivered and kept the answer or did neither, and a repeat of
    /// the key is answered from the row. Rejected: asking the replies room
    /// to keep it after the send answered, which leaves a crash window in
    /// which a repeat delivers twice. A send to another hive commits its
    /// outbox row through the [`super::Outbox`] port, outside this
    /// transaction: its answer is kept right after (that window remains).
    pub async fn send_once(
        &self,
        sender: &Ident,
        to: &str,
        body: String,
        in_reply_to: Option<i64>,
        key: &str,
    ) -> Result<usize, HiveError> {
        self.send_keeping(sender, to, body, in_reply_to, Some(key.to_owned()))
            .await
    }

    async fn send_keeping(
        &self,
        sender: &Ident,
        to: &str,
        body: String,
        in_reply_to: Option<i64>,
        key: Option<String>,
    ) -> Result<usize, HiveError> {
        self.check_body(&body)?;
        let swarm_hive = self.state.settings.swarm_hive.as_ref();
        let to = match address::parse(to, swarm_hive)? {
            Address::Local(to) => to,
            Address::Remote(remote) => {
                let reached = self.state.outbox.enqueue(sender, remote, body).await?;
                if let Some(key) = key {
                    let (from, now) = (sender.clone(), self.now().saturating_mul(1000));
                    self.state
                        .store
                        .run(move |c| replies::remember(c, &from, &key, &sent_text(reached), now))
                        .await?;
                }
                return Ok(reached);
            }
        };
        let (from, to, now) = (sender.clone(), to.to_owned(), self.now());
        let mail = self.mail.clone();
        let (reached, wakes) = self
            .state
            .store
            .run_atomic(move |c| {
                let recipients = broker::resolve::<_, HiveError>(&agents::Registry(c), &from, &to)?;
                for r in &recipients {
                    mail.admit(from.as_str(), r, body.len(), &Wakes::default())?;
                }
                let insert = |c: &rusqlite::Connection, r| {
                    mail::insert(c, from.as_str(), r, &body, in_reply_to, now).map(|d| d.1)
                };
                // One recipient is one INSERT, atomic by itself; more, or
                // a kept answer beside it, are one transaction.
                let wakes = match (recipients.as_slice(), key) {
                    ([r], None) => insert(c, r)?,
                    (recipients, key) => {
                        let tx = immediate(c)?;
                        let mut wakes = Wakes::default();
                        for r in recipients {
                            wakes.add(insert(&tx, r)?);
                        }
                        if let Some(key) = key {
                            let answer = sent_text(recipients.len());
                            replies::remember(&tx, &from, &key, &answer, now.saturating_mul(1000))?;
                        }
                        tx.commit()?;
                        wakes
                    }
                };
                Ok::<_, HiveError>((recipients.len(), wakes))
            })
            .await?;
        self.mail.wake(wakes);
        Ok(reached)
    }

    /// Store `body` from `from` for agent `to` if its inbox has room (see
    /// [`super::Mail::admit`]), then wake it.
    async fn deliver_bounded(
        &self,
        to: &Ident,
        from: &str,
        body: String,
    ) -> Result<i64, HiveError> {
        let (r, from, now) = (Recipient::Agent(to.clone()), from.to_owned(), self.now());
        self.mail.admit(&from, &r, body.len(), &Wakes::default())?;
        let (id, wakes) = self
            .state
            .store
            .run_atomic(move |c| mail::insert(c, &from, &r, &body, None, now))
            .await?;
        self.mail.wake(wakes);
        Ok(id)
    }

    /// The operator sends `body` to a managed agent, or to an agent (or
    /// the operator) of another hive of the swarm (`hive`; this hive's own
    /// name is local). A cross-hive send is committed to the outbox, as an
    /// agent's is; the other hive's agent sees it from `operator@<this>`.
    pub async fn send_from_operator(
        &self,
        to: &Ident,
        hive: Option<&Ident>,
        body: String,
    ) -> Result<(), HiveError> {
        self.check_body(&body)?;
        arguments::check_operator_body(&body)?;
        if let Some(hive) = hive {
            let address = format!("{to}@{hive}");
            let swarm_hive = self.state.settings.swarm_hive.as_ref();
            if let Address::Remote(remote) = address::parse(&address, swarm_hive)? {
                let operator = Ident::from_static(OPERATOR);
                self.state.outbox.enqueue(&operator, remote, body).await?;
                return Ok(());
            }
        }
        let n = to.clone();
        let known = self.state.store.read(move |c| agents::get(c, &n)).await?;
        if known.is_none() {
            return Err(HiveError::UnknownAgent(to.clone()));
        }
        self.deliver_bounded(to, OPERATOR, body).await?;
        Ok(())
    }

    /// A message to `agent` from a sender it chose (`wake`); with
    /// `transient` it is kept in memory only.
    pub async fn wake(
        &self,
        agent: &Ident,
        from: String,
        body: String,
        transient: bool,
    ) -> Result<(), HiveError> {
        arguments::check_wake_from(&from)?;
        self.check_body(&body)?;
        if !transient {
            self.deliver_bounded(agent, &from, body).await?;
            return Ok(());
        }
        let message = DeliveredMessage {
            from,
            body,
            id: 0,
            redelivered: false,
            in_reply_to: None,
        };
        let cap = self.state.settings.transient_max_bytes;
        self.state.inbox.push_transient(agent, message, cap);
        self.mail.wake(Wakes::of(Recipient::Agent(agent.clone())));
        Ok(())
    }

    /// Pop up to `max` (default [`DEFAULT_RECV_MAX`]) messages of `agent`,
    /// oldest first, transient ones first. With `wait`, wait up to it
    /// (capped at [`LONG_POLL_CAP`]) for at least one; an empty answer
    /// when it runs out or `cancel` fires. While the [`super::Holds`] port
    /// holds the agent (a reached budget, the operator's pause) nothing is
    /// popped: the call waits as for an empty inbox.
    pub async fn recv(
        &self,
        agent: &Ident,
        wait: Option<Duration>,
        max: Option<u32>,
        cancel: impl Future<Output = ()>,
    ) -> Result<Vec<DeliveredMessage>, HiveError> {
        let max = max.unwrap_or(DEFAULT_RECV_MAX).clamp(1, RECV_MAX_CAP);
        let wait = wait.unwrap_or(Duration::ZERO).min(LONG_POLL_CAP);
        let deadline = tokio::time::Instant::now() + wait;
        let waker = self.state.inbox.waker(agent);
        let mut cancel = std::pin::pin!(cancel);
        loop {
            // Armed before the table is read: a delivery committed after
            // the read still wakes this waiter.
            let mut notified = std::pin::pin!(waker.notified());
            notified.as_mut().enable();
            // A reached budget or the operator's pause holds the agent:
            // nothing is popped, the poll waits as for an empty inbox;
            // letting it go wakes it.
            let popped = if self.state.holds.holds(agent) {
                Vec::new()
            } else {
                self.pop(agent, max).await?
            };
            if !popped.is_empty() || wait.is_zero() {
                return Ok(popped);
            }
            tokio::select! {
                () = &mut notified => {}
                () = tokio::time::sleep_until(deadline) => return Ok(Vec::new()),
                () = &mut cancel => return Ok(Vec::new()),
            }
        }
    }

    async fn pop(&self, agent: &Ident, max: u32) -> Result<Vec<DeliveredMessage>, HiveError> {
        let budget = self.state.settings.agent_max_answer_bytes;
        let mut out = self.state.inbox.take_transient(agent, max, budget);
        let room = max.saturating_sub(u32::try_from(out.len()).unwrap_or(max));
        let used: usize = out.iter().map(|m| m.body.len()).sum();
        if room == 0 || (used >= budget && !out.is_empty()) {
            return Ok(out);
        }
        // Stored messages fill what the transient ones left of the budget;
        // with none taken yet, the first always goes.
        let queues = &self.state.queues;
        let taken = queues.take(agent, room as usize, budget - used, out.is_empty());
        if taken.is_empty() {
            return Ok(out);
        }
        self.mark_popped(taken.iter().map(|q| q.id));
        match self.contents(taken).await {
            Ok(stored) => {
                out.extend(stored);
                Ok(out)
            }
            Err((err, ids)) => {
                self.state.inbox.requeue_transient(agent, out);
                queues.give_back(agent, &ids);
                Err(err)
            }
        }
    }

    /// The messages of rows handed out: their kept content, the rest read
    /// from the table (a row purged meanwhile is left out). On failure,
    /// the ids to give back.
    async fn contents(
        &self,
        taken: Vec<queue_state::Queued>,
    ) -> Result<Vec<DeliveredMessage>, (HiveError, Vec<i64>)> {
        let unread: Vec<i64> = taken
            .iter()
            .filter(|q| q.content.is_none())
            .map(|q| q.id)
            .collect();
        let mut read = if unread.is_empty() {
            Vec::new()
        } else {
            let ids = taken.iter().map(|q| q.id).collect();
            self.state
                .store
                .read(move |c| messages::bodies(c, &unread))
                .await
                .map_err(|e| (e.into(), ids))?
        }
        .into_iter();
        let mut next = read.next();
        let mut out = Vec::with_capacity(taken.len());
        for q in taken {
            let (from, body, in_reply_to) = match q.content {
                Some(c) => (c.from.clone(), c.body.clone(), c.in_reply_to),
                None => match next.take() {
                    Some(m) if m.id == q.id => {
                        next = read.next();
                        (m.from, m.body, m.in_reply_to)
                    }
                    other => {
                        next = other;
                        continue;
                    }
                },
            };
            out.push(DeliveredMessage {
                id: q.id,
                from,
                body,
                redelivered: q.redelivered,
                in_reply_to,
            });
        }
        Ok(out)
    }

    /// Record rows handed out as popped with the writer's next commit, not
    /// waited for (see `store::messages`): one write queued while none is.
    fn mark_popped(&self, ids: impl IntoIterator<Item = i64>) {
        if !self.state.queues.mark(ids) {
            return;
        }
        let state = std::sync::Arc::clone(&self.state);
        self.state.store.queue(move |c| {
            let ids = state.queues.take_marks();
            messages::mark_popped(c, &ids, state.clock.now_unix())
        });
    }

    /// Messages popped for `agent` whose answer could not be written go
    /// back: stored ones to waiting (marked redelivered), transient ones to
    /// the front of the queue.
    pub async fn give_back(&self, agent: &Ident, messages: Vec<DeliveredMessage>) {
        let (transient, stored): (Vec<_>, Vec<_>) = messages.into_iter().partition(|m| m.id == 0);
        self.state.inbox.requeue_transient(agent, transient);
        let ids: Vec<i64> = stored.iter().map(|m| m.id).collect();
        let ids = self.state.queues.give_back(agent, &ids);
        self.record_requeued(agent, ids).await;
        self.mail.wake(Wakes::of(Recipient::Agent(agent.clone())));
    }

    /// Write that `ids` wait again, marked redelivered (they already do in
    /// memory; a failure is logged, and costs only the mark).
    async fn record_requeued(&self, agent: &Ident, ids: Vec<i64>) -> usize {
        if ids.is_empty() {
            return 0;
        }
        let count = ids.len();
        match self
            .state
            .store
            .run_atomic(move |c| messages::requeue_ids(c, &ids))
            .await
        {
            Ok(_) => tracing::debug!(agent = %agent, count, "{agent}: {count} messages wait again"),
            Err(err) => {
                tracing::error!(agent = %agent, "{agent}: cannot record {count} messages as requeued: {err}")
            }
        }
        count
    }

    /// Forget `name`'s transient wakes (it was destroyed) and, when its
    /// rows were `purged`, its queue (a plain destroy keeps its mail).
    pub(crate) fn forget(&self, name: &Ident, purged: bool) {
        self.state.inbox.drop_transient(name);
        if purged {
            self.state.queues.forget(name);
        }
    }

    /// Every message popped by `agent` since its last ack is handled,
    /// on disk before this answers.
    pub async fn ack_turn(&self, agent: &Ident) -> Result<usize, HiveError> {
        let settled = self.state.queues.settle(agent);
        if settled.is_empty() {
            return Ok(0);
        }
        let (ids, now): (Vec<i64>, _) = (settled.iter().map(|q| q.id).collect(), self.now());
        match self
            .state
            .store
            .run_atomic(move |c| messages::settle(c, &ids, now))
            .await
        {
            Ok(n) => Ok(n),
            Err(err) => {
                self.state.queues.unsettle(agent, settled);
                Err(err.into())
            }
        }
    }

    /// Every popped-unacked message of `agent` waits again, marked
    /// redelivered. The harness calls it at its start, so the agent's
    /// queue is first read again from the table (rows it lacks are added).
    /// (The façade's `Hive::requeue_inflight`, which the agent's door
    /// calls, also ends the agent's live turn.)
    pub async fn requeue_inflight(&self, agent: &Ident) -> Result<usize, HiveError> {
        let n = agent.clone();
        let rows = self
            .state
            .store
            .read(move |c| messages::queued_of(c, &n))
            .await?;
        self.state.queues.load(rows);
        let ids = self.state.queues.requeue(agent);
        let count = self.record_requeued(agent, ids).await;
        if count > 0 {
            self.mail.wake(Wakes::of(Recipient::Agent(agent.clone())));
        }
        Ok(count)
    }

    /// How many messages wait for `agent` (stored and transient).
    pub async fn unread(&self, agent: &Ident) -> Result<u64, HiveError> {
        let stored = self.state.queues.waiting(agent);
        let transient = self.state.inbox.transient_count(agent);
        Ok(stored + transient)
    }

    /// How many messages wait for `agent` ([`Self::unread`]) and how many
    /// its turn in progress holds. Reads memory only.
    pub fn depth(&self, agent: &Ident) -> InboxDepth {
        InboxDepth {
            waiting: self.state.queues.waiting(agent) + self.state.inbox.transient_count(agent),
            in_flight: self.state.queues.in_flight(agent),
        }
    }

    /// The newest `limit` (capped at [`RECENT_CAP`]) messages to
    /// `recipient`, newest first, in any state. Changes nothing.
    pub async fn recent(
        &self,
        recipient: Recipient,
        limit: u64,
    ) -> Result<Vec<InboxRow>, HiveError> {
        Ok(self.recent_within(recipient, limit, usize::MAX).await?.0)
    }

    /// The message `id` to `recipient`, whole, in any state: the
    /// operator's `inbox show`. Changes nothing.
    pub async fn one(&self, recipient: Recipient, id: i64) -> Result<InboxRow, HiveError> {
        let to = recipient.clone();
        self.state
            .store
            .read(move |c| messages::one(c, &to, id))
            .await?
            .ok_or(HiveError::UnknownMessage(id))
    }

    /// [`Messaging::recent`] within an agent's answer budget
    /// (`agent_max_answer_bytes`): the newest rows whose bodies fit, and
    /// whether older ones were left out for it.
    pub async fn recent_for_agent(
        &self,
        agent: &Ident,
        limit: u64,
    ) -> Result<(Vec<InboxRow>, bool), HiveError> {
        let budget = self.state.settings.agent_max_answer_bytes;
        self.recent_within(Recipient::Agent(agent.clone()), limit, budget)
            .await
    }

    async fn recent_within(
        &self,
        recipient: Recipient,
        limit: u64,
        max_bytes: usize,
    ) -> Result<(Vec<InboxRow>, bool), HiveError> {
        let limit = limit.min(RECENT_CAP);
        Ok(self
            .state
            .store
            .read(move |c| messages::recent(c, &recipient, limit, max_bytes))
            .await?)
    }

    /// Delete handled messages older than the retention window; how many.
    /// (The façade's `Hive::vacuum_messages` also vacuums the swarm's
    /// outbox.)
    pub async fn vacuum(&self) -> Result<usize, HiveError> {
        let retention = self.state.settings.message_retention_secs;
        let before = self
            .now()
            .saturating_sub(i64::try_from(retention).unwrap_or(i64::MAX));
        let n = self
            .state
            .store
            .run(move |c| messages::vacuum(c, before))
            .await?;
        if n > 0 {
            tracing::info!(deleted = n, "vacuumed handled messages");
        }
        Ok(n)
    }

    /// A new version each time the operator's inbox or the open questions
    /// change (a receiver sees the latest; changes in between coalesce).
    pub fn watch_operator_view(&self) -> watch::Receiver<u64> {
        self.state.inbox.watch_operator_view()
    }
}

#[cfg(test)]
#[path = "broker_tests.rs"]
mod tests;
