//! The table of MCP tools the harness offers, which of them an agent gets,
//! and how each becomes one request on the agent socket.
//!
//! Decision: a tool's arguments carry the socket request's own field names
//! (`send`: `to`, `body`, `in_reply_to`), so the request is the arguments
//! plus `"cmd": <verb>`, parsed by the same serde type the daemon parses —
//! one definition of every field, and a bad argument gets serde's words
//! (`missing field "to"`). Rejected: a Rust struct per tool with
//! `schemars`, which would copy every request's fields a second time.
//!
//! The mappings that are not "the verb of the same name":
//! - `list_containers` → `list_descendants` (the caller's subtree; the
//!   daemon wants the `lifecycle` group for it).
//! - `request_next_turn {note?}` → `wake {from: "request_next_turn", body:
//!   note}`: a message to myself, so the turn loop runs another turn after
//!   this one is acked.
//! - `recv` → `recv` with `wait_seconds` capped at [`MAX_RECV_WAIT`] and
//!   `max` at [`MAX_RECV_MESSAGES`], so one tool call cannot block a turn
//!   for minutes or pour a whole inbox into the context.
//! - `get_host_journal` is not in a group: it is offered only with the
//!   `read_host_journal` capability (`HIVE_CAPABILITIES`).
//! - The `execution` group's `run` and `status` are not here: they are the
//!   second server, `hive-agent mcp-bash` ([`super::bash`]), seen by Claude
//!   as `mcp__bash__run` / `mcp__bash__status`.

use serde_json::{Map, Value, json};

use crate::wire::agenda::{Capability, ToolGroup};
use crate::wire::agent::Request;

/// The MCP server name Claude Code sees (`mcp__hyperhive__<tool>`).
pub const SERVER_NAME: &str = "hyperhive";
/// The execution group's server name (`mcp__bash__<tool>`).
pub const BASH_SERVER_NAME: &str = "bash";
/// The environment variables the selection is read from.
pub const ENV_TOOL_GROUPS: &str = "HIVE_TOOL_GROUPS";
pub const ENV_CAPABILITIES: &str = "HIVE_CAPABILITIES";

/// The longest `recv` long poll one tool call may ask for, in seconds.
pub const MAX_RECV_WAIT: u64 = 30;
/// The most messages one `recv` tool call pops.
pub const MAX_RECV_MESSAGES: u32 = 20;

/// One tool: its name, a line a model can act on, its input schema.
#[derive(Debug)]
pub struct ToolSpec {
    pub name: &'static str,
    pub description: &'static str,
    schema: fn() -> Value,
}

impl ToolSpec {
    /// The JSON Schema of the tool's arguments (an `object` schema).
    pub fn schema(&self) -> Map<String, Value> {
        match (self.schema)() {
            Value::Object(map) => map,
            _ => Map::new(),
        }
    }
}

/// Which tools an agent gets: its tool groups and capabilities.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Selection {
    pub groups: Vec<ToolGroup>,
    pub capabilities: Vec<Capability>,
}

/// A selection that cannot be used: the harness refuses to start.
#[derive(Debug, thiserror::Error)]
pub enum SelectionError {
    #[error("{var} names an unknown tool group {name:?}; known groups: {known}")]
    UnknownGroup {
        var: &'static str,
        name: String,
        known: String,
    },
    #[error("{var} names an unknown capability {name:?}; known capabilities: {known}")]
    UnknownCapability {
        var: &'static str,
        name: String,
        known: String,
    },
}

/// A comma list of names out of `all`; an unknown name is `Err((name,
/// every known name))`.
fn parse_list<T: Copy>(
    value: &str,
    all: &[T],
    name_of: fn(T) -> &'static str,
) -> Result<Vec<T>, (String, String)> {
    value
        .split(',')
        .map(str::trim)
        .filter(|s| !s.is_empty())
        .map(|name| {
            all.iter()
                .copied()
                .find(|item| name_of(*item) == name)
                .ok_or_else(|| {
                    let known: Vec<&str> = all.iter().map(|item| name_of(*item)).collect();
                    (name.to_owned(), known.join(", "))
                })
        })
        .collect()
}

impl Selection {
    /// From the environment's values: `groups` absent = `default_groups`
    /// (an empty value means "no groups", as the daemon writes it);
    /// capabilities absent = none.
    pub fn from_values(
        groups: Option<&str>,
        capabilities: Option<&str>,
        default_groups: &[ToolGroup],
    ) -> Result<Self, SelectionError> {
        let groups =
            match groups {
                None => default_groups.to_vec(),
                Some(value) => parse_list(value, ToolGroup::ALL, ToolGroup::as_str).map_err(
                    |(name, known)| SelectionError::UnknownGroup {
                        var: ENV_TOOL_GROUPS,
                        name,
                        known,
                    },
                )?,
            };
        let capabilities = parse_list(
            capabilities.unwrap_or(""),
            Capability::ALL,
            Capability::as_str,
        )
        .map_err(|(name, known)| SelectionError::UnknownCapability {
            var: ENV_CAPABILITIES,
            name,
            known,
        })?;
        Ok(Self {
            groups,
            capabilities,
        })
    }

    /// The `hyperhive` server's tools for this selection, in table order.
    pub fn hyperhive_tools(&self) -> Vec<&'static ToolSpec> {
        TOOLS
            .iter()
            .filter(|t| self.offers(t.name))
            .collect::<Vec<_>>()
    }

    fn offers(&self, name: &str) -> bool {
        if name == "get_host_journal" {
            return self.capabilities.contains(&Capability::ReadHostJournal);
        }
        self.groups
            .iter()
            .filter(|g| **g != ToolGroup::Execution)
            .any(|g| g.tools().contains(&name))
    }

    /// Whether the execution group (`mcp-bash`) is granted.
    pub fn has_execution(&self) -> bool {
        self.groups.contains(&ToolGroup::Execution)
    }

    /// Claude's `--allowedTools`: every MCP tool offered, prefixed with its
    /// server, plus the built-in tools the groups enable.
    pub fn allowed_tools(&self) -> Vec<String> {
        let mut out: Vec<String> = self
            .hyperhive_tools()
            .iter()
            .map(|t| format!("mcp__{SERVER_NAME}__{}", t.name))
            .collect();
        if self.has_execution() {
            for name in ToolGroup::Execution.tools() {
                out.push(format!("mcp__{BASH_SERVER_NAME}__{name}"));
            }
        }
        for group in &self.groups {
            out.extend(group.builtin_tools().iter().map(|b| (*b).to_owned()));
        }
        out
    }
}

/// The spec of a `hyperhive` tool by name.
pub fn spec(name: &str) -> Option<&'static ToolSpec> {
    TOOLS.iter().find(|t| t.name == name)
}

/// The socket request a call of `tool` with `args` makes, or why the
/// arguments do not fit (words for the model).
pub fn request_for(tool: &str, args: Option<Map<String, Value>>) -> Result<Request, String> {
    let mut args = args.unwrap_or_default();
    let verb = match tool {
        "list_containers" => "list_descendants",
        "request_next_turn" => {
            let note = match args.remove("note") {
                Some(Value::String(s)) if !s.trim().is_empty() => s,
                Some(Value::String(_)) | None => "continue where the last turn stopped".into(),
                Some(other) => return Err(format!("note must be a string, not {other}")),
            };
            return Ok(Request::Wake {
                from: "request_next_turn".into(),
                body: note,
                transient: false,
            });
        }
        "recv" => {
            clamp(&mut args, "wait_seconds", MAX_RECV_WAIT);
            clamp(&mut args, "max", u64::from(MAX_RECV_MESSAGES));
            args.entry("max")
                .or_insert_with(|| json!(MAX_RECV_MESSAGES));
            "recv"
        }
        other if spec(other).is_some() => other,
        other => return Err(format!("unknown tool {other:?}")),
    };
    args.insert("cmd".into(), Value::String(verb.into()));
    serde_json::from_value(Value::Object(args)).map_err(|e| format!("{tool}: {e}"))
}

fn clamp(args: &mut Map<String, Value>, key: &str, max: u64) {
    if let Some(n) = args.get(key).and_then(Value::as_u64)
        && n > max
    {
        args.insert(key.into(), json!(max));
    }
}

// ---- schemas ---------------------------------------------------------------

fn object(properties: Value, required: &[&str]) -> Value {
    json!({
        "type": "object",
        "properties": properties,
        "required": required,
        "additionalProperties": false,
    })
}

fn none() -> Value {
    object(json!({}), &[])
}

fn name_only() -> Value {
    object(
        json!({"name": {"type": "string", "description": "the agent's name ([a-z0-9-], 1-63)"}}),
        &["name"],
    )
}

fn id_only() -> Value {
    object(
        json!({"id": {"type": "integer", "description": "the schedule's id"}}),
        &["id"],
    )
}

fn agent_filter() -> Value {
    object(
        json!({"agent": {"type": "string", "description": "whose (default: me); a direct child is always allowed"}}),
        &[],
    )
}

const TOOLS: &[ToolSpec] = &[
    ToolSpec {
        name: "send",
        description: "Send a message to an agent, to `operator` (the human), to `<parent>` or to `<children>`. The result says how many inboxes it reached (none, for `<children>` of an agent without children).",
        schema: || {
            object(
                json!({
                    "to": {"type": "string", "description": "an agent name, `operator`, `<parent>` or `<children>`"},
                    "body": {"type": "string", "description": "the message"},
                    "in_reply_to": {"type": "integer", "description": "id of the message this answers"},
                }),
                &["to", "body"],
            )
        },
    },
    ToolSpec {
        name: "recv",
        description: "Take pending messages from my inbox (they count as handled when this turn ends well); waits up to wait_seconds (max 30) for one.",
        schema: || {
            object(
                json!({
                    "wait_seconds": {"type": "integer", "minimum": 0, "maximum": MAX_RECV_WAIT, "description": "how long to wait for a first message"},
                    "max": {"type": "integer", "minimum": 1, "maximum": MAX_RECV_MESSAGES, "description": "at most this many messages"},
                }),
                &[],
            )
        },
    },
    ToolSpec {
        name: "ask",
        description: "Ask the operator (no `to`) or another agent a question; the answer arrives later as a message.",
        schema: || {
            object(
                json!({
                    "question": {"type": "string"},
                    "options": {"type": "array", "items": {"type": "string"}, "description": "choices to offer, if any"},
                    "multi": {"type": "boolean", "description": "several options may be chosen"},
                    "ttl_seconds": {"type": "integer", "minimum": 1, "description": "give up after this long"},
                    "to": {"type": "string", "description": "an agent to ask instead of the operator"},
                }),
                &["question"],
            )
        },
    },
    ToolSpec {
        name: "answer",
        description: "Answer a question another agent asked me (its id is in the question_asked message).",
        schema: || {
            object(
                json!({"id": {"type": "integer"}, "answer": {"type": "string"}}),
                &["id", "answer"],
            )
        },
    },
    ToolSpec {
        name: "set_status",
        description: "Set my one-line status shown to the operator; an empty text clears it.",
        schema: || object(json!({"text": {"type": "string"}}), &["text"]),
    },
    ToolSpec {
        name: "get_agent_meta",
        description: "Identity and status of me (no name) or of another agent.",
        schema: || object(json!({"name": {"type": "string"}}), &[]),
    },
    ToolSpec {
        name: "request_egress",
        description: "Ask the operator to let me reach a host on the network. My only way out is the hive's proxy (HTTPS_PROXY), which refuses hosts not on my allow-list with a 403 naming them; this queues an approval, and once the operator approves, requests to the host go through.",
        schema: || {
            object(
                json!({
                    "host": {"type": "string", "description": "host[:port] or *.domain[:port], e.g. pypi.org:443 (no port: any)"},
                    "reason": {"type": "string", "description": "why I need it, for the operator (at most 500 bytes)"},
                }),
                &["host", "reason"],
            )
        },
    },
    ToolSpec {
        name: "get_loose_ends",
        description: "My open threads: unanswered questions, pending reminders and approvals.",
        schema: agent_filter,
    },
    ToolSpec {
        name: "cancel_loose_end",
        description: "Cancel an open question or reminder of mine by kind and id.",
        schema: || {
            object(
                json!({
                    "kind": {"type": "string", "enum": ["question", "reminder", "approval"]},
                    "id": {"type": "integer"},
                }),
                &["kind", "id"],
            )
        },
    },
    ToolSpec {
        name: "remind",
        description: "Have a message delivered to me later: after `seconds` or at a unix time.",
        schema: || {
            object(
                json!({
                    "message": {"type": "string"},
                    "timing": {
                        "description": "{\"timing_type\":\"in_seconds\",\"seconds\":N} or {\"timing_type\":\"at\",\"unix_timestamp\":T}",
                        "oneOf": [
                            {"type": "object", "properties": {"timing_type": {"const": "in_seconds"}, "seconds": {"type": "integer", "minimum": 0}}, "required": ["timing_type", "seconds"]},
                            {"type": "object", "properties": {"timing_type": {"const": "at"}, "unix_timestamp": {"type": "integer"}}, "required": ["timing_type", "unix_timestamp"]},
                        ],
                    },
                    "file_path": {"type": "string", "description": "store a long message in this file (relative, in my state dir)"},
                }),
                &["message", "timing"],
            )
        },
    },
    ToolSpec {
        name: "request_next_turn",
        description: "Ask for another turn right after this one (a note to myself arrives as its message).",
        schema: || {
            object(
                json!({"note": {"type": "string", "description": "what to continue with"}}),
                &[],
            )
        },
    },
    ToolSpec {
        name: "kill",
        description: "Stop a sub-agent's container (gracefully; its state is kept).",
        schema: name_only,
    },
    ToolSpec {
        name: "start",
        description: "Start a stopped sub-agent's container.",
        schema: name_only,
    },
    ToolSpec {
        name: "restart",
        description: "Restart a sub-agent's container.",
        schema: name_only,
    },
    ToolSpec {
        name: "update",
        description: "Rebuild a sub-agent's container from its deployed config (its limits and Claude files) against the hive's current base (its grants, the hive's defaults) and restart it; clears its needs_update (the hive sends you needs_update when its base changed).",
        schema: name_only,
    },
    ToolSpec {
        name: "list_containers",
        description: "List my descendants' containers and whether each runs.",
        schema: none,
    },
    ToolSpec {
        name: "request_init_config",
        description: "Ask the operator to approve a new agent's config: once approved the hive seeds its config repo at /hive/proposed/<name> from a template (no container yet) and sends you config_ready.",
        schema: || {
            object(
                json!({"name": {"type": "string"}, "description": {"type": "string"}}),
                &["name"],
            )
        },
    },
    ToolSpec {
        name: "request_apply_commit",
        description: "Propose a commit (7-40 hex) of an agent's config repo /hive/proposed/<agent>: the hive fetches it, tags it proposal/<id> and validates it (agent.json keys, no submodules, size caps, descends from main at /hive/applied/<agent>.git); a failure is answered at once and the row ends failed. Once the operator approves, the hive deploys it (the container's limits from agent.json, CLAUDE.md and .claude/ in its working directory, a restart; the first commit of an init_config agent creates its container) and sends you rebuilt (or spawned) and approval_resolved.",
        schema: || {
            object(
                json!({
                    "agent": {"type": "string"},
                    "commit_ref": {"type": "string", "pattern": "^[0-9a-f]{7,40}$"},
                    "description": {"type": "string"},
                }),
                &["agent", "commit_ref"],
            )
        },
    },
    ToolSpec {
        name: "request_update_meta_inputs",
        description: "Ask the operator to approve a `nix flake update` of some (or all, with none named) inputs of the hive's meta flake (nixos profile only; refused in the nspawn profile or when the hive has no meta_flake). Once approved the hive updates and commits the lock, then rebuilds and restarts every agent whose base moved: you get rebuilt events and approval_resolved.",
        schema: || {
            object(
                json!({
                    "inputs": {"type": "array", "items": {"type": "string"}},
                    "description": {"type": "string"},
                }),
                &[],
            )
        },
    },
    ToolSpec {
        name: "request_budget",
        description: "Ask the operator for a budget on an agent and every agent under it: at most amount (20usd/day, 2000000tokens/day, or a rolling 5usd/5h) of Claude Code's reported cost or tokens. This queues an approval; once the operator approves, that budget replaces the agent's budget of the same unit. While a budget is reached the hive starts no new turn for the agents it covers (their messages wait), and you get a budget_reached event.",
        schema: || {
            object(
                json!({
                    "agent": {"type": "string", "description": "whose subtree it covers"},
                    "amount": {"type": "string", "pattern": "^[0-9]+(\\.[0-9]{1,6})?(usd|tokens)/(day|[0-9]+[mhd])$", "description": "e.g. 20usd/day, 2000000tokens/day, 5usd/5h (tokens: whole numbers)"},
                    "reason": {"type": "string", "description": "why, for the operator (at most 500 bytes)"},
                }),
                &["agent", "amount", "reason"],
            )
        },
    },
    ToolSpec {
        name: "request_schedule_prompt",
        description: "Ask the operator to approve a prompt delivered to targets at a time, once or every interval.",
        schema: || {
            object(
                json!({
                    "targets": {"type": "array", "items": {"type": "string"}},
                    "body": {"type": "string"},
                    "first_fire_at_unix": {"type": "integer"},
                    "interval_seconds": {"type": "integer", "minimum": 1},
                    "description": {"type": "string"},
                }),
                &["targets", "body", "first_fire_at_unix"],
            )
        },
    },
    ToolSpec {
        name: "fire_schedule_now",
        description: "Deliver a schedule's prompt now, out of its rhythm.",
        schema: id_only,
    },
    ToolSpec {
        name: "cancel_schedule",
        description: "Cancel a schedule, or only some of its targets.",
        schema: || {
            object(
                json!({"id": {"type": "integer"}, "targets": {"type": "array", "items": {"type": "string"}}}),
                &["id"],
            )
        },
    },
    ToolSpec {
        name: "edit_schedule",
        description: "Change a schedule's body, description, interval, next fire time or targets (null clears).",
        schema: || {
            object(
                json!({
                    "id": {"type": "integer"},
                    "body": {"type": "string"},
                    "description": {"type": ["string", "null"]},
                    "interval_seconds": {"type": ["integer", "null"]},
                    "next_fire_at_unix": {"type": "integer"},
                    "targets_add": {"type": "array", "items": {"type": "string"}},
                    "targets_remove": {"type": "array", "items": {"type": "string"}},
                }),
                &["id"],
            )
        },
    },
    ToolSpec {
        name: "list_schedules",
        description: "List every scheduled prompt of the hive.",
        schema: none,
    },
    ToolSpec {
        name: "get_logs",
        description: "Recent journal lines of a sub-agent's container.",
        schema: || {
            object(
                json!({"agent": {"type": "string"}, "lines": {"type": "integer", "minimum": 1, "maximum": 1000}}),
                &["agent"],
            )
        },
    },
    ToolSpec {
        name: "get_host_journal",
        description: "Recent host journal lines, filtered by unit, container, priority, regex or time (at most 100).",
        schema: || {
            object(
                json!({
                    "unit": {"type": "string"},
                    "container": {"type": "string", "description": "a machine name, h-<agent>"},
                    "lines": {"type": "integer", "minimum": 1, "maximum": 100},
                    "priority": {"type": "string", "enum": ["emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"]},
                    "grep": {"type": "string"},
                    "since": {"type": "string", "description": "ISO 8601 or relative, e.g. -1h"},
                    "until": {"type": "string"},
                }),
                &[],
            )
        },
    },
];

#[cfg(test)]
#[path = "tools_tests.rs"]
mod tests;
