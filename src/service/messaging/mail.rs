//! The mail port: the one path by which anything — an agent's `send`, a
//! reminder, a schedule, a question or its answer, an approval's
//! resolution, a `HelperEvent` — becomes a message, and the one place its
//! recipient is woken. The rest of the service holds a [`Mail`] (today it
//! asks the façade for it; a later room is given one at construction) and
//! delivers through it: to an agent or the operator's inbox
//! ([`Mail::deliver`], or [`insert`] in its own transaction), to the
//! manager ([`Mail::to_manager`]), to the operator's `notify_command`
//! ([`Mail::to_operator`]), and wakes ([`Mail::wake`]).
//!
//! A delivery is a row inserted by `insert` inside the caller's write
//! transaction, which answers what to wake (`Wakes`); the caller commits,
//! then hands the wakes to [`Mail::wake`], so a long-polling `recv`
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

use super::queue_state::{Content, Queued};
use super::{HiveError, State};
use crate::hive::Recipient;
use crate::hive::broker::{self, InboxFull, InboxLimits, InboxLoad};
use crate::store::{StoreError, messages};
use crate::wire::events::{HelperEvent, SYSTEM_SENDER};
use crate::wire::ident::Ident;

/// The inboxes (and the operator's view) a transaction changed: woken by
/// [`Mail::wake`] once it has committed.
#[must_use = "wake them once the transaction has committed: Mail::wake"]
/// Not `Clone`: each row it carries is filed once.
#[derive(Debug, Default, PartialEq, Eq)]
pub(crate) struct Wakes {
    to: Vec<Recipient>,
    /// Rows the transaction inserted into agents' inboxes, filed into
    /// their queues (`queue_state`) before anyone is woken.
    arrived: Vec<(Ident, Queued)>,
}

impl Wakes {
    /// Wake `to`: an agent's long polls, or the operator's live views
    /// (their inbox, the open questions).
    pub(crate) fn of(to: Recipient) -> Self {
        Self {
            to: vec![to],
            arrived: Vec::new(),
        }
    }

    /// Row `id` was inserted for `to` (`content` is its sender, body and
    /// `in_reply_to`): file it, then wake `to`.
    pub(crate) fn arrived(to: &Recipient, id: i64, content: Content) -> Self {
        let mut wakes = Self::of(to.clone());
        if let Recipient::Agent(agent) = to {
            let len = content.body.len();
            let row = Queued {
                id,
                len,
                redelivered: false,
                content: Some(Arc::new(content)),
            };
            wakes.arrived.push((agent.clone(), row));
        }
        wakes
    }

    /// These and `more`, each once.
    pub(crate) fn add(&mut self, more: Wakes) {
        for to in more.to {
            if !self.to.contains(&to) {
                self.to.push(to);
            }
        }
        self.arrived.extend(more.arrived);
    }

    /// What these add to `agent`'s inbox once filed: rows and body bytes.
    pub(crate) fn load_of(&self, agent: &Ident) -> InboxLoad {
        let rows = self.arrived.iter().filter(|(a, _)| a == agent);
        let (messages, bytes) = rows.fold((0, 0), |(n, b), (_, q)| (n + 1, b + q.len as u64));
        InboxLoad { messages, bytes }
    }

    /// How many inboxes (or views) are to be woken.
    pub(crate) fn len(&self) -> usize {
        self.to.len()
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
    let content = Content {
        from: from.to_owned(),
        body: body.to_owned(),
        in_reply_to,
    };
    Ok((id, Wakes::arrived(to, id, content)))
}

/// The mail port: delivering into inboxes, to the manager and to the
/// operator, and waking. Cheap to clone; it shares the room's state and
/// exposes none of the agents' side (`recv`, `ack_turn`, ...).
#[derive(Debug, Clone)]
pub(crate) struct Mail {
    pub(super) state: Arc<State>,
}

impl Mail {
    pub(super) fn over(state: Arc<State>) -> Self {
        Self { state }
    }

    /// Wake whoever waits on the inboxes in `wakes`, after their
    /// transaction committed: the one place anything is woken.
    pub(crate) fn wake(&self, wakes: Wakes) {
        for (agent, row) in wakes.arrived {
            self.state.queues.file(&agent, row);
        }
        for to in &wakes.to {
            self.state.inbox.wake(to);
        }
    }

    /// Refuse to add a body of `size` bytes to `to`'s inbox when it is at
    /// a cap. The load is the inbox as committed (the queue in memory)
    /// plus what the caller's transaction added so far (`unfiled`): a send
    /// committed in the same group commit as this one is not yet counted,
    /// so senders at once may pass a cap by one message each. The
    /// operator's inbox is not capped here: its rows stay pending (nobody
    /// `recv`s them), so a cap would close it for good.
    pub(crate) fn admit(
        &self,
        sender: &str,
        to: &Recipient,
        size: usize,
        unfiled: &Wakes,
    ) -> Result<(), HiveError> {
        let Recipient::Agent(agent) = to else {
            return Ok(());
        };
        let (filed, added) = (self.state.queues.inbox_load(agent), unfiled.load_of(agent));
        let load = InboxLoad {
            messages: filed.messages + added.messages,
            bytes: filed.bytes + added.bytes,
        };
        broker::admit(load, size, self.inbox_limits()).map_err(|(load, limits)| {
            HiveError::InboxFull(InboxFull {
                recipient: to.as_str().to_owned(),
                sender: sender.to_owned(),
                load,
                limits,
            })
        })
    }

    /// The caps of every agent's inbox, from config.
    fn inbox_limits(&self) -> InboxLimits {
        let s = &self.state.settings;
        InboxLimits {
            messages: s.inbox_max_messages,
            bytes: s.inbox_max_bytes,
        }
    }

    /// Store a message for `to` and wake its waiters. Returns the row id.
    pub(crate) async fn deliver(
        &self,
        to: Recipient,
        from: &str,
        body: String,
        in_reply_to: Option<i64>,
    ) -> Result<i64, HiveError> {
        let (now, from) = (self.state.clock.now_unix(), from.to_owned());
        let (id, wakes) = self
            .state
            .store
            .run_atomic(move |c| insert(c, &from, &to, &body, in_reply_to, now))
            .await?;
        self.wake(wakes);
        Ok(id)
    }

    /// Push an event into the manager's inbox. A failure is logged: the
    /// event's cause already happened and must not be undone by it.
    pub(crate) async fn to_manager(&self, event: HelperEvent) {
        let manager = Recipient::Agent(self.state.settings.manager.clone());
        if let Err(err) = self
            .deliver(manager, SYSTEM_SENDER, event.to_body(), None)
            .await
        {
            tracing::error!("cannot deliver {event:?} to the manager: {err}");
        }
    }
}
