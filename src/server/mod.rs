//! The sockets: framing, the accept loop, and one dispatcher per socket kind.
//!
//! - [`framing`]: one JSON line, capped while reading; parsing a request;
//!   writing a reply line within the write timeout.
//! - [`reply`]: the one error → wire mapping and the reply builders.
//! - [`listener`]: the accept loop with tracked connection tasks.
//! - [`host`]: host.sock, the operator's socket.
//! - [`agent`]: the agent and manager sockets' connection loop and identity.
//! - [`agent_dispatch`]: what each request does there (one exhaustive match,
//!   the agenda's variants included), after the access policy
//!   (`Hive::authorize`, which every dispatcher asks first).
//! - [`manager`]: the manager's verbs (approval requests, sub-agent lifecycle).
//! - [`agent_sockets`]: the registry of agent listeners (bind at start and
//!   spawn, close at destroy), each agent's `mcp.sock` and `egress.sock`.
//! - [`egress_socket`]: one connection to an agent's egress proxy.
//! - [`egress_control`]: the daemon's own connection to the egress
//!   service, pushing the budgets' holds the model gateway enforces.

pub mod agent;
pub mod agent_dispatch;
pub mod agent_sockets;
pub mod egress_control;
pub mod egress_socket;
pub mod framing;
pub mod host;
pub mod listener;
pub mod manager;
pub mod reply;
