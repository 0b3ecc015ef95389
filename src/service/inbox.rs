//! Delivering into inboxes: the one path by which anything — an agent's
//! `send`, a reminder, a schedule, a question or its answer, an
//! approval's resolution, a `HelperEvent` — becomes a message, and the one
//! place its recipient is woken.
//!
//! A delivery is a row inserted by `insert` inside the caller's write
//! transaction, which answers what to wake (`Wakes`); the caller commits,
//! then hands the wakes to `Hive::wake_inboxes`, so a long-polling `recv`
//! sees the row the moment it is woken, and a transaction that rolls back
//! wakes nobody. What may enter an inbox (its caps, `admit`) is decided
//! here too, for local sends and the swarm's arrivals alike. Rejected:
//! waking inside the transaction (a waiter could read before the commit
//! and sleep again), or each caller waking in its own words (three
//! spellings at eighteen sites, before this). A message from another hive
//! is inserted by the swarm's idempotent insert (`store::swarm::accept`);
//! its wake goes the same way.

use std::sync::Arc;

use rusqlite::Connection;
use tokio::sync::Notify;

use super::{Hive, HiveError};
use crate::hive::Recipient;
use crate::hive::broker::{self, InboxFull, InboxLimits};
use crate::store::{StoreError, messages};
use crate::wire::events::{HelperEvent, SYSTEM_SENDER};
use crate::wire::ident::Ident;

/// The inboxes (and the operator's view) a transaction changed: woken by
/// `Hive::wake_inboxes` once it has committed.
#[must_use = "wake them once the transaction has committed: Hive::wake_inboxes"]
#[derive(Debug, Default, Clone, PartialEq, Eq)]
pub(crate) struct Wakes(Vec<Recipient>);

impl Wakes {
    /// Wake `to`: an agent's long polls, or the operator's live views
    /// (their inbox, the open questions).
    pub(crate) fn of(to: Recipient) -> Self {
        Self(vec![to])
    }

    /// These and `more`, each once.
    pub(crate) fn add(&mut self, more: Wakes) {
        for to in more.0 {
            if !self.0.contains(&to) {
                self.0.push(to);
            }
        }
    }

    /// How many inboxes (or views) are to be woken.
    pub(crate) fn len(&self) -> usize {
        self.0.len()
    }
}

/// Store a pending message for `to` in the caller's transaction: its row
/// id, and what to wake once the transaction has committed.
pub(crate) fn insert(
    tx: &Connection,
    from: &str,
    to: &Recipient,
    body: &str,
    in_reply_to: Option<i64>,
    at: i64,
) -> Result<(i64, Wakes), StoreError> {
    let id = messages::insert(tx, from, to, body, in_reply_to, at)?;
    Ok((id, Wakes::of(to.clone())))
}

/// Refuse to add a body of `size` bytes to `to`'s inbox when it is at a
/// cap. The operator's inbox is not capped here: its rows stay pending
/// (nobody `recv`s them), so a cap would close it for good.
pub(crate) fn admit(
    tx: &rusqlite::Connection,
    sender: &str,
    to: &Recipient,
    size: usize,
    limits: InboxLimits,
) -> Result<(), HiveError> {
    if matches!(to, Recipient::Operator) {
        return Ok(());
    }
    let load = messages::inbox_load(tx, to)?;
    broker::admit(load, size, limits).map_err(|(load, limits)| {
        HiveError::InboxFull(InboxFull {
            recipient: to.as_str().to_owned(),
            sender: sender.to_owned(),
            load,
            limits,
        })
    })
}

impl Hive {
    /// The wake-up handle of an agent's inbox (one per agent, made on first
    /// use). `recv` waits on it; `Hive::wake_inboxes` notifies it.
    pub fn inbox_waker(&self, name: &Ident) -> Arc<Notify> {
        self.inner.inbox.waker(name)
    }

    /// Wake whoever waits on the inboxes in `wakes`, after their
    /// transaction committed: the one place anything is woken.
    pub(crate) fn wake_inboxes(&self, wakes: Wakes) {
        for to in &wakes.0 {
            self.inner.inbox.wake(to);
        }
    }

    /// The caps of every agent's inbox, from config.
    pub(crate) fn inbox_limits(&self) -> InboxLimits {
        InboxLimits {
            messages: self.config().inbox_max_messages,
            bytes: self.config().inbox_max_bytes,
        }
    }

    /// A new version each time the operator's inbox or the open questions
    /// change (a receiver sees the latest; changes in between coalesce).
    pub fn watch_operator_view(&self) -> tokio::sync::watch::Receiver<u64> {
        self.inner.inbox.watch_operator_view()
    }

    /// Store a message for `to` and wake its waiters. Returns the row id.
    pub async fn deliver(
        &self,
        to: Recipient,
        from: &str,
        body: String,
        in_reply_to: Option<i64>,
    ) -> Result<i64, HiveError> {
        let (now, from) = (self.now(), from.to_owned());
        let (id, wakes) = self
            .store()
            .run(move |c| insert(c, &from, &to, &body, in_reply_to, now))
            .await?;
        self.wake_inboxes(wakes);
        Ok(id)
    }

    /// Push an event into the manager's inbox. A failure is logged: the
    /// event's cause already happened and must not be undone by it.
    pub async fn notify_manager(&self, event: HelperEvent) {
        let manager = Recipient::Agent(self.config().manager());
        if let Err(err) = self
            .deliver(manager, SYSTEM_SENDER, event.to_body(), None)
            .await
        {
            tracing::error!("cannot deliver {event:?} to the manager: {err}");
        }
    }
}
