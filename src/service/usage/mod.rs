//! The usage room: the turns agents run and what they cost — the turn
//! journal and its sums, the turn in progress and its interrupt, the
//! counters `/metrics` shows, and the spend caps (budgets) the host
//! enforces — their state and every behaviour on it.
//!
//! It follows the messaging room's pattern (see [`super::messaging`]): one
//! struct ([`Usage`]) holding the room's state and the handles it needs,
//! given at construction ([`Usage::open`]): the store, the clock, the
//! config values it reads ([`Settings`]), the messaging room (the mail
//! port, and the operator's note an interrupt queues) and a **port** to
//! the roster ([`Publish`]: bring one agent's row up to date), which the
//! composition implements. It never names the façade.
//!
//! # What is in this room, and why
//! - The turn journal (`journal`): `report_turn`, `turns`, the usage sums
//!   (the meter's beside the reports').
//! - The turn in progress (`live`, `live_state`) and the operator's
//!   interrupt of it (`interrupt`): a report ends the live turn, the hard
//!   cap reads its tokens and ends it, so the three belong together.
//! - The counters since the daemon started (`counters`), fed by the same
//!   reports and by the meter's rows.
//! - The spend caps (`spend`, `spend_state`): evaluated after every
//!   metered request and every change of a cap, and what they hold —
//!   `recv`, and at the model gateway each held agent's model requests
//!   (`gateway`: the holds as the egress service is told them).
//!
//! Not here: the approval queue a `request_budget` waits in (its row's
//! action calls [`Usage::set_approved_budget`]), and the transcripts an
//! interactive turn is counted from (the façade's `transcripts`, which
//! writes its turns with the transcript's offset in one transaction and
//! then hands them to [`Usage::counted`]).
//!
//! # The spend facts others read
//! Whether an agent is held, why, and its spend today are read by the
//! roster's rows and by the messaging room's `Holds` port, without a
//! query. They are [`SpendState`], shared as an `Arc` given to
//! [`Usage::open`]: the composition makes it first, because the messaging
//! room (whose mail this room needs) and the roster's rows (this room's
//! [`Publish`] port) read it. Only this room writes it (its writers are
//! private to the room). Rejected: the roster and the broker reading a
//! façade field, which tied the concerns into one again.
//!
//! # The one source of spend
//! "What an agent spent since a moment" is read in one function
//! (`spend::spent_since`): the model gateway's metered requests (issue
//! 46, step 2), summed per hour so that no window depends on rows the
//! meter's bound has let go. Every cap, the roster's "spent today" and
//! the hold follow it; the turn journal's reported figures feed none of
//! them. Rejected: the reports beside the meter (a forged report of $0 or
//! $5 would move the spend), and the larger of the two per turn (no
//! request maps to one turn: a nested Claude's overlap it).

mod counters;
mod gateway;
mod interrupt;
mod journal;
mod live;
mod live_state;
mod spend;
mod spend_state;

use std::fmt::Debug;
use std::sync::Arc;

pub use counters::TurnCounters;
pub use gateway::GatewayHolds;
pub use spend::RECHECK;
pub(crate) use spend_state::SpendState;

use super::HiveError;
use super::messaging::{Mail, Messaging};
use crate::clock::SharedClock;
use crate::config::Config;
use crate::store::{Store, agents};
use crate::wire::ident::Ident;
use crate::wire::spend::SpendCap;

/// The room: the turns' and the caps' state, and the handles it needs.
/// Cheap to clone (the caps' watcher holds one).
#[derive(Debug, Clone)]
pub struct Usage {
    state: Arc<State>,
}

/// What the room owns and what it was given.
#[derive(Debug)]
struct State {
    store: Store,
    clock: SharedClock,
    settings: Settings,
    /// The agents a reached cap holds, the caps reached, today's spend.
    spend: Arc<SpendState>,
    /// Each agent's turn in progress (memory only).
    live: live_state::LiveState,
    /// The harnesses waiting on `await_interrupt` (turns in progress).
    interrupts: interrupt::InterruptState,
    /// Turn counters since the daemon started.
    counters: counters::Counters,
    /// The inboxes: the interrupt's note, and the mail port (wake a held
    /// agent let go, tell the manager and the operator of a cap reached).
    messaging: Messaging,
    /// The roster: a row changes when a cap holds or lets its agent go.
    roster: Arc<dyn Publish>,
}

/// The config values the room reads, copied once at construction.
#[derive(Debug, Clone)]
pub struct Settings {
    /// The manager agent (named in the operator's event of a hive cap).
    pub manager: Ident,
    /// The config's default caps: on the hive, and on each agent.
    pub budget_hive: Vec<SpendCap>,
    pub budget_each_agent: Vec<SpendCap>,
    /// A reached cap also ends the turn in progress.
    pub budget_hard_cap: bool,
    /// How long the model gateway holds a request of a held agent before
    /// it answers the budget's error.
    pub budget_hold_secs: u64,
}

impl Settings {
    pub fn from_config(config: &Config) -> Self {
        Self {
            manager: config.manager(),
            budget_hive: config.budget_hive.clone(),
            budget_each_agent: config.budget_each_agent.clone(),
            budget_hard_cap: config.budget_hard_cap,
            budget_hold_secs: config.budget_hold_secs,
        }
    }
}

/// The port to the roster: bring `agent`'s row up to date and push it to
/// subscribers (the row shows the hold and the spend today). Implemented
/// by the composition over the roster's rows.
#[async_trait::async_trait]
pub trait Publish: Send + Sync + Debug {
    async fn publish(&self, agent: &Ident);
}

impl Usage {
    /// The room, its caps not yet evaluated (the daemon does that before
    /// any agent socket serves: [`Usage::check_spend`]).
    pub(crate) fn open(
        store: Store,
        clock: SharedClock,
        settings: Settings,
        spend: Arc<SpendState>,
        messaging: Messaging,
        roster: Arc<dyn Publish>,
    ) -> Self {
        Self {
            state: Arc::new(State {
                store,
                clock,
                settings,
                spend,
                live: live_state::LiveState::default(),
                interrupts: interrupt::InterruptState::default(),
                counters: counters::Counters::default(),
                messaging,
                roster,
            }),
        }
    }

    fn now(&self) -> i64 {
        self.state.clock.now_unix()
    }

    fn mail(&self) -> &Mail {
        self.state.messaging.mail()
    }

    /// `name` is a managed agent, or [`HiveError::UnknownAgent`].
    async fn require(&self, name: &Ident) -> Result<(), HiveError> {
        let n = name.clone();
        match self.state.store.read(move |c| agents::get(c, &n)).await? {
            Some(_) => Ok(()),
            None => Err(HiveError::UnknownAgent(name.clone())),
        }
    }
}
