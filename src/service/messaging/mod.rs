//! The messaging room: the agents' inboxes, the operator's inbox and the
//! operator's notifications — their state and every behaviour on it.
//!
//! # The pattern every room follows
//! A room is a folder of `service/` with **one struct** ([`Messaging`])
//! that holds the room's state and the handles it needs, **given at
//! construction** ([`Messaging::open`]): the store, the clock, the config
//! values it reads ([`Settings`], copied out of the config so a reader sees
//! which ones), and a **port** for each thing it needs from another
//! concern ([`Holds`], [`Outbox`]): a narrow trait the room defines and
//! the composition (`service/mod.rs`) implements over the other concern's
//! state. So a room's dependencies are its fields and its `use` lines: it
//! never names the façade (`Hive`), never reaches another room's state,
//! and another concern reaches it only through the room's own methods or
//! the port it hands out ([`Mail`]). `tests/layers.rs` checks the imports
//! against its table of rooms.
//!
//! Inside the room, each state part keeps its own file and lock
//! (`inbox_state`, `queue_state`, `notify_state`: fields private to the
//! file, methods `pub(super)`), and the behaviour is split by who calls it:
//! `broker` (the agents' side: send, recv, ack, ...), `mail` (the port:
//! delivering, waking, the inbox caps) and `notify` (the operator's
//! `notify_command`).
//!
//! # What is in this room, and why
//! - The stored inboxes as the broker serves them (`queue_state`), the
//!   wake-ups, transient wakes and the operator's view
//!   (`inbox_state`): the broker and the one delivery path are the only
//!   code that touches them.
//! - The operator's notifications (`notify_state`, `notify`): a page to the
//!   operator is mail to the operator by another road, sent by the same
//!   callers as the manager's events (a crash, an approval, a person
//!   needed) and under the same rule (it never holds the hive up). The
//!   port therefore has all four roads: to an agent, to the manager, to
//!   the operator, and a wake. Rejected: a room of its own for one method
//!   and its worker, which every caller of the mail would need as well.
//! - Not here: an agent's free-text status, its record and its descendants
//!   (the roster's rows), the live turn a harness's restart ends, and the
//!   swarm's outbox (its rows and relay). `send` reaches the outbox through
//!   the [`Outbox`] port; the façade composes `requeue_inflight` with the
//!   end of the live turn, and the vacuum with the outbox's.
//!
//! # Handles, not a back-reference
//! The state sits behind one `Arc` shared by [`Messaging`] and [`Mail`], so
//! both are cheap to clone (the notifier's worker and the writer's queued
//! `popped_at` job hold one). Rejected: a `Weak<Hive>` handle for the
//! ports, which would make the room's dependencies the whole façade again.

mod broker;
mod inbox_state;
mod mail;
mod notify;
mod notify_state;
mod queue_state;

use std::fmt::Debug;
use std::sync::Arc;

pub use broker::{DEFAULT_RECV_MAX, LONG_POLL_CAP, RECENT_CAP, RECV_MAX_CAP};
pub(crate) use mail::{Mail, Wakes, insert};
pub(crate) use queue_state::Content;

use crate::clock::SharedClock;
use crate::config::Config;
use crate::hive::address::RemoteAddress;
use crate::store::{Store, messages};
use crate::wire::ident::Ident;

use super::HiveError;

/// The room: the state of every inbox and of the operator's notifications,
/// and the handles that state needs. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Messaging {
    state: Arc<State>,
    /// The delivery side, over the same state (what [`Messaging::mail`]
    /// hands out).
    mail: Mail,
}

/// What the room owns and what it was given.
#[derive(Debug)]
struct State {
    store: Store,
    clock: SharedClock,
    settings: Settings,
    /// Inbox wake-ups, transient wakes and the operator's view.
    inbox: inbox_state::InboxState,
    /// Each agent's stored inbox: what waits, what is in flight.
    queues: queue_state::QueueState,
    /// Events queued for the operator's `notify_command`.
    notify: notify_state::NotifyState,
    /// Whether a reached budget or the operator's pause holds an agent.
    holds: Arc<dyn Holds>,
    /// Where a message for another hive of the swarm is committed.
    outbox: Arc<dyn Outbox>,
}

/// The config values the room reads, copied once at construction.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The manager agent (`notify_manager`'s recipient).
    pub manager: Ident,
    /// This hive's name when it is in a swarm (a `name@hive` address to
    /// it is local).
    pub swarm_hive: Option<Ident>,
    /// The largest body a message (or a status text) may have.
    pub max_body_bytes: usize,
    /// The most body bytes one answer to an agent carries.
    pub agent_max_answer_bytes: usize,
    /// The most body bytes of transient wakes kept per agent.
    pub transient_max_bytes: usize,
    /// The caps of an agent's inbox.
    pub inbox_max_messages: u64,
    pub inbox_max_bytes: u64,
    /// How long a handled message is kept.
    pub message_retention_secs: u64,
    /// The operator's `notify_command` (argv; empty: none) and how often
    /// one event of one agent may run it.
    pub notify_command: Vec<String>,
    pub notify_interval_secs: u64,
}

impl Settings {
    pub fn from_config(config: &Config) -> Self {
        Self {
            manager: config.manager(),
            swarm_hive: config.swarm_hive().cloned(),
            max_body_bytes: config.max_body_bytes,
            agent_max_answer_bytes: config.agent_max_answer_bytes,
            transient_max_bytes: config.transient_max_bytes,
            inbox_max_messages: config.inbox_max_messages,
            inbox_max_bytes: config.inbox_max_bytes,
            message_retention_secs: config.message_retention_secs,
            notify_command: config.notify_command.clone(),
            notify_interval_secs: config.notify_interval_secs,
        }
    }
}

/// The port to what holds an agent's `recv`: while it answers true nothing
/// is popped and the poll waits as for an empty inbox. Implemented by the
/// composition over the spend caps and the operator's pause; whoever lets
/// an agent go wakes its inbox ([`Mail::wake`]).
pub trait Holds: Send + Sync + Debug {
    fn holds(&self, agent: &Ident) -> bool;
}

/// The port to the swarm's outbox: a message for an agent (or the
/// operator) of another hive is one outbox row, committed before `send`
/// answers; the relay takes it from there.
#[async_trait::async_trait]
pub trait Outbox: Send + Sync + Debug {
    /// Commit `body` from `sender` for `to`; how many inboxes it is for (1).
    async fn enqueue(
        &self,
        sender: &Ident,
        to: RemoteAddress,
        body: String,
    ) -> Result<usize, HiveError>;
}

impl Messaging {
    /// The room, its queues read from the table (rows marked popped are in
    /// flight again, see `queue_state`).
    pub fn open(
        store: Store,
        clock: SharedClock,
        settings: Settings,
        holds: Arc<dyn Holds>,
        outbox: Arc<dyn Outbox>,
    ) -> Result<Self, HiveError> {
        let queued = store.blocking(|c| messages::queued(c))?;
        let state = Arc::new(State {
            store,
            clock,
            settings,
            inbox: inbox_state::InboxState::default(),
            queues: queue_state::QueueState::default(),
            notify: notify_state::NotifyState::default(),
            holds,
            outbox,
        });
        state.queues.load(queued);
        Ok(Self {
            mail: Mail::over(Arc::clone(&state)),
            state,
        })
    }

    /// The port the rest of the service delivers through.
    pub(crate) fn mail(&self) -> &Mail {
        &self.mail
    }

    fn now(&self) -> i64 {
        self.state.clock.now_unix()
    }
}
