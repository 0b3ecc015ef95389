//! hive-c0re: the host daemon of a hive.
//!
//! # Background
//! A *hive* is one Linux host running many AI coding agents, each in its own
//! systemd-nspawn container `h-<agent>`. hive-c0re drives those containers
//! over D-Bus, keeps the hive's state (approvals, topology, broker, ...) in
//! SQLite, and serves the operator's socket `host.sock` (for `hivectl` and
//! dashboards), the operator's dashboard `web.sock`, and the agents'
//! sockets.
//!
//! # Design
//! Three decisions worth stating, because the obvious alternatives are worse:
//! - **State comes from systemd's signals, not polls**: the driver keeps a
//!   live view, so the roster costs no D-Bus call and a crash is noticed the
//!   moment the unit leaves `active`.
//! - **Identity is the socket**: each agent has its own socket directory,
//!   bind-mounted as its container's `/run/hive`; no token or name in a
//!   request can make it speak as another.
//! - **Nothing acknowledged is lost**: a message, an approval or a reminder
//!   is a committed SQLite row before it is answered.
//!
//! And the shape:
//! - Socket-activated, `Type=notify`: systemd owns `host.sock` and hands it
//!   over by name; READY=1 is sent only when the store is migrated, the
//!   listener accepts and the first container view is loaded.
//! - One seam over systemd, [`containers::ContainerDriver`], with a stateful
//!   fake (`--driver fake`) so everything above it runs without root.
//! - Rules without IO live in `hive`, applied by `service`; SQLite in
//!   `store` runs on its own threads (one writer with group commit, a few
//!   readers), never on the reactor.
//! - Names are validated once ([`wire::ident::Ident`]); paths and unit names
//!   are built only from them.
//!
//! # The layer rule
//! Imports run one way:
//!
//! ```text
//! wire <- hive <- store <- service <- server / cli (via client) / web / swarm <- daemon
//!           ^- containers, systemd (beside store, used by the service)
//! ```
//!
//! `wire` imports nothing; `hive` is pure rules over its own types; `store`
//! persists them and applies no rule; `service` ([`service::Hive`]) is the
//! only API a front door calls, and names every type a front door needs;
//! `server`'s errors reach the wire through one mapping
//! ([`server::reply`]); `daemon` composes, running no query of its own.
//! Exactly, each module and what it may use (`tests/layers.rs` holds the
//! same table, checks every file against it and this map against it, and
//! finds circles between the files of each folder):
//!
//! ```text
//! module      may use
//! wire        -
//! clock       -
//! command     -
//! logging     -
//! errors      -
//! hive        wire clock errors
//! containers  wire hive clock
//! config      wire containers
//! store       wire hive clock
//! systemd     wire hive containers config command clock errors
//! repos       wire hive command
//! service     wire hive store containers systemd config command clock errors repos
//! egress      wire
//! server      wire service config clock errors egress systemd::activation systemd::notify
//! web         wire service config clock errors
//! swarm       wire service config
//! client      wire config
//! agent       wire clock systemd::notify
//! cli         wire client config clock errors
//! daemon      wire containers systemd config clock service server web swarm logging errors
//! ```
//!
//! The first five are foundations: they import nothing of the crate. A
//! `module::part` entry is a narrow path: `agent` reaches sd_notify, not the
//! D-Bus driver; `server`'s socket registry binds agent sockets and keeps
//! them in systemd's fd store itself.
//!
//! Inside `service`, the rooms (issue 45): each a folder with one struct
//! that owns its state and is given its handles and ports at
//! construction. A room uses of the service only itself, the rooms listed
//! for it here and the one error table; never the façade
//! ([`service::Hive`] and the files directly in `service/`, not yet rooms),
//! which may use every room (`tests/layers.rs`'s `SERVICE_ROOMS`, checked
//! against this table):
//!
//! ```text
//! room        may use
//! messaging   -
//! usage       messaging
//! replies     -
//! ```
//!
//! # Map of the code
//! - [`wire`]: serde types of every socket and the journal entry, no IO.
//! - [`config`]: the daemon's config file and defaults.
//! - [`clock`]: time as a parameter.
//! - [`errors`]: an error and its causes on one line (the one chain walker).
//! - [`command`]: running operator-configured commands (argv, no shell).
//! - [`containers`]: the driver seam over systemd, naming, the fake.
//! - [`hive`]: the rules without IO and their types — the one access policy
//!   (who may run which verb on whom, with which grants), approvals, topology,
//!   roster (the agent record, unit states), broker recipients (the one
//!   `OPERATOR`) and inbox caps, reserved names, the agenda's due times and
//!   caps, the shapes of argv-bound and free-text request values, spend
//!   caps (budgets: in force, covered, reached, held), a transcript's
//!   place in the agent's state and what a chunk of it counts.
//! - [`store`]: SQLite — open, migrations, the one writer (group commit) and
//!   the readers, one file per table family, the state directory's lock;
//!   reads and writes hive's types, decides nothing.
//! - [`service`]: the hive as a service — the rules applied with the store
//!   and the driver, once for every door: access (`Hive::authorize`, once
//!   per request) and request values, lifecycle, approvals (the queue, and
//!   the actions approved rows run), roster (served from memory) and crash
//!   watcher, the one delivery path into inboxes, broker, questions,
//!   reminders, loose ends, schedules, grants, the agenda timer, logs,
//!   metrics, the turn journal (reported figures), the model gateway's
//!   meter and the budgets it feeds (a reached one holds `recv`, and
//!   the agent's model requests at the gateway), each
//!   agent's turn in progress (memory only, bounded), the operator's
//!   interrupt of a turn, interactive sessions' tokens read from the
//!   transcripts their hooks name (`service::transcripts`),
//!   start-up. `Hive` composes rooms and is, for what is not yet a room,
//!   a façade: the messaging room ([`service::messaging`]: inboxes,
//!   broker, the mail port the rest delivers through, the operator's
//!   notifications) and the usage room ([`service::usage`]: the turn
//!   journal and its sums, the turn in progress and its interrupt, the
//!   turn counters, the spend caps and what they hold) and the replies
//!   room ([`service::replies`]: the first answer to each idempotency key
//!   of an agent's requests, so a resumed turn's repeat acts once) are
//!   structs of their own; the façade's memory lives in state parts that own their
//!   fields (roster, swarm), and its files call each other in no circle.
//! - [`server`]: framing, the accept loop, the reply path (one error
//!   mapping), the socket dispatchers (host.sock; the agent and manager
//!   sockets), each asking the access policy first, the registry of agent
//!   listeners (per-agent connection and idle budgets, systemd's fd store),
//!   the daemon's control connection pushing the budgets' holds to the
//!   egress service.
//! - [`web`]: the operator's dashboard on `web.sock` — axum + maud pages
//!   over the same service calls, live roster, swarm and logs over Server-Sent
//!   Events, CSRF checks (origin + token) and a strict CSP; the agent
//!   page's live turn and last turns; the usage page (SVG charts,
//!   budgets); `/metrics` in Prometheus's text format.
//! - [`systemd`]: socket activation, sd_notify, the D-Bus container driver
//!   ([`systemd::dbus`]); [`systemd::journal`] reads
//!   container and host logs with journalctl (validated argv, timeout, output
//!   cap, `-o json` parsing, follow).
//! - [`swarm`]: the swarm door — this hive on NATS JetStream beside its
//!   peers: the outbox relay, the durable inbound consumer, the roster
//!   bucket (design and guarantees: `src/swarm/README.md`).
//! - [`repos`]: agents' config repositories — the proposed repo an agent
//!   writes and the applied repo the hive owns; git run with no hooks, no
//!   system config, and the upload side of a fetch sandboxed; the commit
//!   of the meta flake's lock.
//! - [`egress`]: the egress proxy — one agent's connection (CONNECT or plain
//!   HTTP) checked against its `host[:port]` allow-list, resolved and
//!   checked by address (no loopback, private, link-local ... address
//!   through a name), dialled from the host, logged with `AGENT=` within
//!   per-agent connection and journal-line budgets; `server` serves it on
//!   each agent's `egress.sock`. Also the model gateway (the host's
//!   credential, the meter, a held agent's requests held).
//! - [`daemon`]: `hive-c0re serve` — start-up, READY, drain.
//! - [`logging`]: the daemon's own logs — journald with structured fields
//!   (`AGENT=<n>`) when stderr is the journal, readable text otherwise.
//! - [`client`]: the synchronous host.sock client (typed connect errors, 5 s budget).
//! - [`cli`]: `hivectl`'s command line, rendering, exit statuses, lifecycle
//!   verbs that wait for their outcome, `watch` and `turns -f` across daemon restarts, man
//!   pages.
//! - [`agent`]: `hive-agent`, the harness inside each container — the MCP
//!   servers Claude Code calls and the turn loop (with its live-turn feed,
//!   fire and forget); a client of the agent
//!   socket only (it uses `wire`, `clock` and sd_notify, nothing of the daemon's
//!   state).
//!
//! # Tests
//! One convention for unit tests: the tests of `x.rs` live beside it in
//! `x_tests.rs`, attached at the end of `x.rs` as
//! `#[cfg(test)] #[path = "x_tests.rs"] mod tests;` (a folder's `mod.rs`
//! attaches `<folder>_tests.rs`, or one `<topic>_tests.rs` per topic when its
//! tests span the folder). No test module is written inline, so a file's
//! length is its code's and the layer test reads no test as code.
//! `testing` holds what several unit tests share. Integration tests are
//! `tests/*.rs`; what they share lives in one folder, `tests/support/`.
//! `tests/layers.rs` checks both.
//!
//! # Current limitations
//! See the book's limitations (docs/src/limitations.md); kept current with each change.

#![deny(unsafe_code)]

pub mod agent;
pub mod cli;
pub mod client;
pub mod clock;
pub mod command;
pub mod config;
pub mod containers;
pub mod daemon;
pub mod egress;
pub mod errors;
pub mod hive;
pub mod logging;
pub mod repos;
pub mod server;
pub mod service;
pub mod store;
pub mod swarm;
pub mod systemd;
#[cfg(test)]
pub(crate) mod testing;
pub mod web;
pub mod wire;
