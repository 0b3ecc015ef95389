//! The hive as a service: the rules of [`crate::hive`] applied with the
//! [`Store`] and the [`ContainerDriver`]. Every front door calls into [`Hive`]
//! and nothing else below it (`tests/layers.rs`);
//! nothing below the sockets knows about wire framing.
//!
//! # Rooms, and the façade they leave
//! The service is being split into **rooms** (issue 45): each concern a
//! folder with one struct that holds its state and the handles it needs,
//! given at construction (the store, the clock, the config values it
//! reads, and a *port* — a narrow trait the room defines — for each thing
//! it needs from another concern), and all the behaviour on that state.
//! A room never names [`Hive`] nor reaches into another room's state; its
//! dependencies are its fields and its `use` lines. [`Hive`] composes: it
//! holds each room (`Inner`), hands it out through an accessor
//! ([`Hive::messaging`]), and implements the ports the rooms are given
//! over the state it still owns (e.g. `RecvHolds` below). A flow that
//! spans two concerns is the façade's (`Hive::requeue_inflight`: the
//! messaging room's requeue, then the end of the live turn). The table
//! of which room may use which is `SERVICE_ROOMS` in `tests/layers.rs`.
//!
//! Rooms so far:
//! - [`messaging`]: the inboxes (each agent's stored queue, wake-ups,
//!   transient wakes, the operator's view), the agents' side of them
//!   (`send`, `recv`, `ack_turn`, ...), the **mail port**
//!   ([`messaging::Mail`], through [`Hive::mail`]: deliver, wake, to the
//!   manager, to the operator's `notify_command`) and that command's
//!   queue. Its ports: `Holds` (a spend cap or the pause holds `recv`)
//!   and `Outbox` (the swarm's outbox, [`swarm`]'s `SwarmOutbox`).
//! - [`usage`]: the turns agents run and what they cost — the turn
//!   journal (`report_turn`, `turns`, the usage sums), the turn in
//!   progress and its interrupt, the turn counters `/metrics` shows, and
//!   the spend caps (budgets) with the agents they hold. It uses the
//!   messaging room (the mail port, the interrupt's note); its port is
//!   `Publish` (a hold changes a roster row: `roster_rows`'s
//!   `RosterRows`). Its spend facts (`usage::SpendState`: held, why,
//!   spent today) are made here first and shared read-only with the
//!   roster's rows and `RecvHolds`; only the room writes them.
//!
//! Still the façade, not yet a room: every other file of this folder, an
//! `impl Hive` block each. The next rooms: config (proposals, deploy,
//! approvals through an `ApprovalAction` trait), roster, lifecycle,
//! agenda, access, swarm.
//!
//! # State with owners
//! What the façade keeps in memory is split into parts, each in its own
//! file, owning its fields (private to that file) and the methods that
//! touch them, and knowing nothing of the hive (no part calls back up
//! into it):
//! - `roster_state`: the published rows, their change channel, the crashed
//!   agents and the agents going down on purpose.
//! - `swarm_state`: the relay's wake-up and the other hives' rows.
//!
//! The rest of [`Hive`]'s fields are the shared means (config, store,
//! driver, clock, journal, and the socket registry `sockets` installs);
//! the approval queue, schedules, questions and reminders live in the
//! store, so their files hold rules applied in transactions, not state.
//! Rejected: one object whose fields every file of the service could lock
//! (two files locking one field is how a lock order goes wrong).
//!
//! Calls between the façade's own files run one way as well (the queue of
//! approvals does not call the files whose work its actions do; this
//! file, which every other calls, calls none of them; clearing a unit an
//! operator's stop left failed is the roster's, which lifecycle calls, not
//! the other way).
//!
//! # The façade's files
//! - [`access`]: the access policy applied once per request
//!   ([`Hive::authorize`]), for every front door.
//! - [`lifecycle`]: start, stop, kill, restart, spawn, destroy, rebuild.
//! - `budget`: the one answer budget lifecycle verbs and approvals wait in.
//! - [`approvals`]: the approval queue; `approval_actions`: what an
//!   approved row runs (`approve`, and the end of rows a restart
//!   interrupted).
//! - [`proposals`]: agents' config repos: seeding them (`init_config`, and
//!   on upgrade), and a proposed commit fetched, tagged and validated
//!   before its row is shown.
//! - `deploy`: an approved proposal built and switched to (export, the
//!   container's limits and Claude files, restart), recorded (tags,
//!   `main`, `deployed_sha`), and the deployed config read back;
//!   `claude_files`: those files installed into the agent's state
//!   directory, by descriptor, once its container is stopped.
//! - `confined`: paths under an agent's state directory reached by
//!   descriptor, never following a link (reminder files, transcripts,
//!   the Claude files).
//! - `system_build`: the nixos profile's build of a config's `agent.nix`
//!   (`nixos_build_command` given the exported tree and the sha).
//! - `meta_inputs`: `update_meta_inputs` — `nix flake update` of the
//!   hive's meta flake, the lock committed, the agents rebuilt.
//! - `repo_binds`: the manager's config repo binds rendered at a plain
//!   start when its settings (made by an older daemon) lack them.
//! - `base`: `needs_update` — what each agent was built from against
//!   the hive's current base; `auto_update` at start.
//! - [`review`]: `show`, an approval with its proposal's diff.
//! - [`roster`]: the roster, the pause, topology moves, the crash watcher,
//!   an agent's status text, record and descendants (for its socket).
//! - [`logs`]: container and host journals.
//! - `images`: the agent images and their agents (`hivectl image ls`).
//! - [`questions`], [`reminders`], [`loose_ends`], [`schedules`]: the
//!   agents' agenda; [`timer`] fires what falls due.
//! - [`grants`]: capabilities and tool groups, and the container env.
//! - [`egress`]: each agent's egress allow-list (config and grants).
//! - [`egress_audit`]: what each agent dialled, recorded in the store in
//!   batches, bounded per agent (`hivectl egress-log`).
//! - [`model_log`]: every request an agent made to the model, as the model
//!   gateway metered it, bounded per agent (`hivectl model-log`).
//! - [`hooks`]: Claude Code lifecycle hooks: the session state on the
//!   roster and the manager told when an agent waits on a person too long.
//! - [`sockets`]: the hook through which spawn and destroy open and close
//!   an agent's socket.
//! - `requeue`: a harness's requeue (the messaging room's inboxes, then
//!   the usage room's live turn).
//! - `roster_rows`: the roster's rows built and published (the usage
//!   room's `Publish` port).
//! - [`startup`]: what the daemon does once before serving.
//! - [`swarm`]: the outbox of cross-hive sends (the messaging room's
//!   `Outbox` port), the idempotent insert of what other hives sent, the
//!   swarm roster, and the daemon's vacuum of messages and outbox.

pub mod access;
#[cfg(test)]
mod agenda_tests;
mod approval_actions;
pub mod approvals;
mod base;
mod budget;
mod claim;
mod claude_files;
mod confined;
mod deploy;
mod deployed;
pub mod egress;
pub mod egress_audit;
mod error;
pub mod grants;
pub mod hooks;
mod images;
pub mod inspect;
pub mod lifecycle;
pub mod logs;
#[cfg(test)]
mod loose_end_tests;
pub mod loose_ends;
pub mod messaging;
mod meta_inputs;
pub mod metrics;
pub mod model_log;
pub mod proposals;
pub mod questions;
#[cfg(test)]
mod recovery_tests;
pub mod reminders;
pub mod replies;
mod repo_binds;
mod requeue;
pub mod review;
pub mod roster;
mod roster_rows;
mod roster_state;
#[cfg(test)]
mod schedule_tests;
pub mod schedules;
#[cfg(test)]
mod service_tests;
pub mod session;
pub mod snapshot;
pub mod sockets;
pub mod startup;
pub mod swarm;
mod swarm_state;
mod system_build;
pub mod timer;
pub mod transcripts;
pub mod usage;
mod version;

use std::collections::HashMap;
use std::sync::{Arc, OnceLock};
use std::time::{Duration, Instant};

use tokio::sync::broadcast;

pub use budget::ANSWER_BUDGET;
pub use error::HiveError;
pub use messaging::Messaging;
pub use replies::Replies;
pub use roster_state::RosterChange;
pub use swarm_state::SwarmChange;
pub use usage::Usage;

// The vocabulary of the service's API: the types its calls take and answer
// besides the wire's. They are defined by the rules (`hive`) or the journal
// reader; the front doors name them through `service` only, so no front
// door imports a layer below the service (tests/layers.rs).
pub use crate::hive::access::Who;
pub use crate::hive::agenda::{Answerer, Caller, ScheduleEdit};
pub use crate::hive::approvals::NewApproval;
pub use crate::hive::{OPERATOR, Recipient};
pub use crate::systemd::journal::Follow;

use crate::clock::SharedClock;
use crate::config::Config;
use crate::containers::{ContainerDriver, ContainerSpec, RepoBinds};
use crate::hive::roster::AgentRecord;
use crate::store::{Store, agents};
use crate::systemd::journal::{Journal, JournalSource};
use crate::wire::agenda::{Capability, ToolGroup};
use crate::wire::host::AgentStatusRow;
use crate::wire::ident::Ident;

/// The hive: shared by every connection. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Hive {
    inner: Arc<Inner>,
}

#[derive(Debug)]
struct Inner {
    config: Config,
    store: Store,
    driver: Arc<dyn ContainerDriver>,
    clock: SharedClock,
    /// The journalctl runner (`--directory` from config, else the system's).
    journal: Journal,
    /// The roster's rows, their changes, crashes and expected downs
    /// (shared with the messaging room's [`RecvHolds`] port).
    roster: Arc<roster_state::RosterState>,
    /// The roster's rows built and published (the usage room's `Publish`
    /// port).
    rows: roster_rows::RosterRows,
    /// The messaging room: inboxes, the broker, the mail port and the
    /// operator's notifications.
    messaging: Messaging,
    /// The usage room: the turn journal, the turn in progress and its
    /// interrupt, the turn counters, the spend caps.
    usage: Usage,
    /// The replies room: the answers kept for repeated requests.
    replies: Replies,
    /// Binds and unbinds agents' sockets (set by the daemon; absent in
    /// service tests, where agents have no sockets).
    sockets: OnceLock<Arc<dyn sockets::AgentSockets>>,
    /// The relay's wake-up and the other hives' roster rows (shared with
    /// the messaging room's outbox port, [`swarm::SwarmOutbox`]).
    swarm: Arc<swarm_state::SwarmState>,
    /// The agents' config repos (the proposed and the applied).
    repos: crate::repos::Repos,
    /// The hive's one build queue: one deploy, rebuild, spawn or restart
    /// at a time (locked only by [`Hive::build_queue`]).
    deploys: tokio::sync::Mutex<()>,
    /// The hook-to-roster latency `/metrics` shows.
    metrics: metrics::MetricsState,
    /// When each agent's ignored transcript path was last logged.
    transcript_logged: std::sync::Mutex<std::collections::BTreeMap<Ident, i64>>,
    /// Egress records waiting for their write.
    egress_audit: egress_audit::EgressAuditState,
    /// When this hive was built, by its clock: the daemon's start
    /// (`version`'s uptime).
    started_at: i64,
}

impl Hive {
    /// Build the hive and make sure the manager agent is registered.
    pub fn new(
        config: Config,
        store: Store,
        driver: Arc<dyn ContainerDriver>,
        clock: SharedClock,
    ) -> Result<Self, HiveError> {
        let manager = config.manager();
        let now = clock.now_unix();
        store.blocking(|c| agents::insert(c, &manager, None, now).map(drop))?;
        let journal = Journal::new(JournalSource::from_config(
            config.journal_directory.as_deref(),
        ));
        let repos = proposals::repos_for(&config);
        let roster = Arc::new(roster_state::RosterState::default());
        let swarm = Arc::new(swarm_state::SwarmState::default());
        // The usage room's spend facts, made first: the messaging room's
        // hold and the roster's rows read them (see `usage`).
        let spend = Arc::new(usage::SpendState::default());
        let holds = Arc::new(RecvHolds {
            spend: Arc::clone(&spend),
            roster: Arc::clone(&roster),
        });
        let outbox = Arc::new(swarm::SwarmOutbox::new(
            store.clone(),
            clock.clone(),
            Arc::clone(&swarm),
        ));
        let settings = messaging::Settings::from_config(&config);
        let messaging = Messaging::open(store.clone(), clock.clone(), settings, holds, outbox)?;
        let rows = roster_rows::RosterRows::new(
            store.clone(),
            Arc::clone(&driver),
            config.domain.clone(),
            Arc::clone(&roster),
            Arc::clone(&spend),
        );
        let usage = Usage::open(
            store.clone(),
            clock.clone(),
            usage::Settings::from_config(&config),
            spend,
            messaging.clone(),
            Arc::new(rows.clone()),
        );
        let replies = Replies::open(store.clone(), clock.clone());
        let hive = Self {
            inner: Arc::new(Inner {
                repos,
                config,
                store,
                driver,
                clock,
                journal,
                roster,
                rows,
                messaging,
                usage,
                replies,
                sockets: OnceLock::new(),
                swarm,
                deploys: tokio::sync::Mutex::new(()),
                metrics: metrics::MetricsState::default(),
                transcript_logged: std::sync::Mutex::default(),
                egress_audit: egress_audit::EgressAuditState::default(),
                started_at: now,
            }),
        };
        let (records, reminders) = hive
            .store()
            .blocking(|c| Ok((agents::all(c)?, crate::store::reminders::pending_counts(c)?)))?;
        let ticket = hive.inner.roster.ticket();
        let rows = hive.build_rows(&records, reminders);
        hive.inner.roster.replace_all(rows, ticket);
        Ok(hive)
    }

    pub fn config(&self) -> &Config {
        &self.inner.config
    }

    /// The messaging room: the agents' side of the inboxes (`send`,
    /// `recv`, `ack_turn`, ...) and the operator's inbox, for the doors.
    pub fn messaging(&self) -> &Messaging {
        &self.inner.messaging
    }

    /// The usage room: turns (reported, in progress, interrupted), their
    /// sums and counters, and the spend caps, for the doors.
    pub fn usage(&self) -> &Usage {
        &self.inner.usage
    }

    /// The replies room: the first answer to a request's idempotency key,
    /// for the agent socket's door.
    pub fn replies(&self) -> &Replies {
        &self.inner.replies
    }

    /// The mail port, for the rest of the service: deliver, wake, tell the
    /// manager or the operator.
    pub(crate) fn mail(&self) -> &messaging::Mail {
        self.inner.messaging.mail()
    }

    pub(crate) fn store(&self) -> &Store {
        &self.inner.store
    }

    /// Run `f` on the store's blocking thread, answering in [`HiveError`]:
    /// one error type per service call, rule refusals and store failures
    /// alike.
    pub(crate) async fn transact<R, F>(&self, f: F) -> Result<R, HiveError>
    where
        R: Send + 'static,
        F: FnOnce(&mut rusqlite::Connection) -> Result<R, HiveError> + Send + 'static,
    {
        self.store().run_as(f).await
    }

    pub(crate) fn repos(&self) -> &crate::repos::Repos {
        &self.inner.repos
    }

    pub(crate) fn driver(&self) -> &Arc<dyn ContainerDriver> {
        &self.inner.driver
    }

    pub(crate) fn journal(&self) -> &Journal {
        &self.inner.journal
    }

    pub fn now(&self) -> i64 {
        self.inner.clock.now_unix()
    }

    /// Roster changes as they happen, in the roster's order. A receiver
    /// that lags loses changes, never blocks.
    pub fn subscribe_roster(&self) -> broadcast::Receiver<RosterChange> {
        self.inner.roster.subscribe()
    }

    /// Mark `name` as going down on purpose, for as long as a stop may
    /// take (see [`roster_state`]).
    fn mark_going_down(&self, name: &Ident) {
        let until = Instant::now() + self.config().stop_deadline() + Duration::from_secs(30);
        self.inner.roster.mark_going_down(name, until);
    }

    /// Wait for the hive's one build queue, and hold it while the guard
    /// lives: deploys, rebuilds, spawns and restarts run one at a time, in
    /// the order they asked (tokio's mutex is fair), so a restart never
    /// lands in the middle of a switch and two builds never compete.
    /// Rejected: a queue per agent, which lets a spawn's image clone run
    /// beside a build and orders nothing between agents.
    async fn build_queue(&self) -> tokio::sync::MutexGuard<'_, ()> {
        self.inner.deploys.lock().await
    }

    fn clear_going_down(&self, name: &Ident) {
        self.inner.roster.clear_going_down(name);
    }

    /// The agent's registry record, or [`HiveError::UnknownAgent`].
    pub async fn require(&self, name: &Ident) -> Result<agents::AgentRecord, HiveError> {
        let n = name.clone();
        self.inner
            .store
            .read(move |c| agents::get(c, &n))
            .await?
            .ok_or_else(|| HiveError::UnknownAgent(name.clone()))
    }

    /// The container spec of an agent, from config, its [`Ident`] and its
    /// grants (see [`Hive::container_spec`], which looks them up).
    pub fn spec(
        &self,
        name: &Ident,
        capabilities: &[Capability],
        tool_groups: &[ToolGroup],
    ) -> ContainerSpec {
        let c = &self.inner.config;
        // The manager's socket lives in its own directory; that directory is
        // what its container sees as /run/hive.
        // It alone sees the config repos (`/hive/proposed`, `/hive/applied`).
        let manager = *name == c.manager();
        let runtime_dir = if manager {
            c.manager_runtime_dir()
        } else {
            c.agent_runtime_dir(name)
        };
        let repos = manager.then(|| RepoBinds {
            proposed: self.repos().proposed_root(),
            applied: self.repos().applied_root(),
        });
        ContainerSpec {
            runtime_dir,
            state_dir: c.agent_state_dir(name),
            cpu_quota: c.agent_cpu_quota.clone(),
            memory_max: c.agent_memory_max.clone(),
            tasks_max: c.agent_tasks_max,
            env: grants::grant_env(capabilities, tool_groups),
            system: None,
            repos,
        }
    }

    /// Every row, built from the store, the pause markers and the driver's
    /// view (start-up, and after changes were lost).
    pub(super) fn build_rows(
        &self,
        records: &[AgentRecord],
        reminders: HashMap<String, u64>,
    ) -> Vec<AgentStatusRow> {
        self.inner.rows.build(records, reminders)
    }
}

/// The messaging room's [`messaging::Holds`] port: a reached spend cap or
/// the operator's pause holds an agent's `recv`. It reads the two parts
/// that own those facts (the usage room's spend facts, the roster's
/// state), so the messaging room sees neither part nor the façade.
/// Rejected: handing the room the parts themselves (it would reach another
/// concern's state).
#[derive(Debug)]
struct RecvHolds {
    spend: Arc<usage::SpendState>,
    roster: Arc<roster_state::RosterState>,
}

impl messaging::Holds for RecvHolds {
    fn holds(&self, agent: &Ident) -> bool {
        self.spend.is_held(agent) || self.roster.is_paused(agent)
    }
}
