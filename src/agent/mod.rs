//! `hive-agent`: the harness inside each agent container.
//!
//! Nothing inside `h-<agent>` speaks to the daemon but this: it is the MCP
//! server Claude Code calls (`hive-agent mcp`, tools `mcp__hyperhive__*`,
//! and `hive-agent mcp-bash`, tools `mcp__bash__*`), and the turn loop that
//! runs Claude Code when messages arrive (`hive-agent run`, the container's
//! `hive-agent.service`). Both talk to the agent socket `/run/hive/mcp.sock`
//! only; the daemon knows who is calling from the socket.
//!
//! - [`socket`]: the agent-socket client (a connection per request, retry
//!   with backoff while the daemon restarts).
//! - [`tools`]: the tool table, the tool-group selection, tool → request.
//! - [`render`]: answers as tool-result text, capped.
//! - [`prompt`]: a turn's messages as the prompt.
//! - [`resume`]: a cut turn resumed in its own session (the decision, the
//!   record of the turn in progress, the prompt's note).
//! - [`idempotency`]: each acting call of a turn keyed by the turn and the
//!   call, so a resumed attempt's repeat is answered, not done again.
//! - [`mcp`]: the `hyperhive` MCP server (rmcp, stdio).
//! - [`bash`]: the `bash` MCP server (the execution group).
//! - [`process`]: the one process seam (Claude, bash).
//! - [`hook`]: `hive-agent hook`, Claude Code's lifecycle hooks forwarded
//!   to the socket (bounded, silent on stdout, never failing Claude).
//! - [`progress`]: the live view's feed: bounded `turn_progress` events
//!   from the stream, fire and forget.
//! - [`egress`]: the forwarder from a loopback port to the hive's egress
//!   proxy (`/run/hive/egress.sock`), the container's only way out.
//! - [`demo_model`]: `hive-agent demo-model`, a scripted stand-in for
//!   Claude Code that the demo hive's agents run (no model, no key).

pub mod accounting;
pub mod bash;
pub mod claude;
pub mod config;
pub mod demo_model;
pub mod egress;
pub mod hook;
pub mod idempotency;
pub mod login;
pub mod mcp;
pub mod process;
pub mod progress;
pub mod prompt;
pub mod render;
pub mod resume;
pub mod socket;
pub mod tools;
pub mod turn;
