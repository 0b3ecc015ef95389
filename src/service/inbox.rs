//! Delivering into inboxes: the one path by which anything — an agent's
//! `send`, a reminder, a schedule, a `HelperEvent` — becomes a message.
//!
//! A delivery is committed to SQLite first, then the recipient's waiters are
//! woken, so a long-polling `recv` sees the row the moment it exists.

use std::sync::Arc;

use tokio::sync::Notify;

use super::{Hive, HiveError};
use crate::hive::Recipient;
use crate::store::messages;
use crate::wire::events::{HelperEvent, SYSTEM_SENDER};
use crate::wire::ident::Ident;

impl Hive {
    /// The wake-up handle of an agent's inbox (one per agent, made on first
    /// use). `recv` waits on it; [`Hive::deliver`] notifies it.
    pub fn inbox_waker(&self, name: &Ident) -> Arc<Notify> {
        self.inner.inbox.waker(name)
    }

    /// Wake whoever waits on `to`'s inbox: an agent's long polls, or the
    /// operator's live views (the dashboard's inbox).
    pub(crate) fn wake_inbox(&self, to: &Recipient) {
        self.inner.inbox.wake(to);
    }

    /// The operator's inbox or the open questions changed.
    pub(crate) fn operator_view_changed(&self) {
        self.inner.inbox.operator_view_changed();
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
        let (now, from_owned, to_row) = (self.now(), from.to_owned(), to.clone());
        let id = self
            .store()
            .run(move |c| messages::insert(c, &from_owned, &to_row, &body, in_reply_to, now))
            .await?;
        self.wake_inbox(&to);
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
