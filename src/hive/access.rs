//! The one access policy: who may run which verb, on whom, with which
//! grants. Pure; the service applies it once per request
//! (`service::Hive::authorize`) for every front door — host.sock and the
//! dashboard (the operator), the agent sockets and the hook intake (an
//! agent), the manager socket (the manager).
//!
//! "Who may kill the manager?" is answered by the tables below: the
//! operator (host.sock `kill`), nobody from the manager's own socket
//! (`kill` spares the manager), no agent (`kill` is the manager's).
//!
//! Decisions:
//! - **A table keyed by command name, one per door**: a verb without a row
//!   is refused ([`Denied::NoPolicy`]) and a test over every command of
//!   both doors fails, so a new verb must be given its rule here.
//!   Rejected: a privilege flag on each wire variant, which put the rule
//!   in the wire and left grants and self-protection to the dispatchers.
//! - **Data-dependent scoping is decided here too** ([`resolve_target`],
//!   [`may_cancel`]), on snapshots the service reads (topology, grants).

use super::agenda::{Caller, HIVE_WIDE, Target};
use crate::hive::topology::Topology;
use crate::wire::agenda::{CancelLooseEndKind, Capability, ToolGroup};
use crate::wire::ident::Ident;

/// The kinds of caller, by the door they come through.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// The human operator: host.sock, the dashboard.
    Operator,
    /// An agent on its own socket (or its hook intake).
    Agent,
    /// The manager agent on the manager socket.
    Manager,
}

impl Kind {
    pub const ALL: [Kind; 3] = [Kind::Operator, Kind::Agent, Kind::Manager];
}

/// Who is calling, with the name the refusals quote.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Who<'a> {
    Operator,
    Agent(&'a Ident),
    Manager(&'a Ident),
}

impl Who<'_> {
    pub fn kind(&self) -> Kind {
        match self {
            Who::Operator => Kind::Operator,
            Who::Agent(_) => Kind::Agent,
            Who::Manager(_) => Kind::Manager,
        }
    }
}

impl<'a> From<&'a Caller> for Who<'a> {
    fn from(caller: &'a Caller) -> Self {
        match caller {
            Caller::Agent(name) => Who::Agent(name),
            Caller::Manager(name) => Who::Manager(name),
        }
    }
}

/// What a verb needs from one kind of caller.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Rule {
    /// Served.
    Allow,
    /// Not served to this kind of caller (the manager's verbs on an agent
    /// socket).
    Privileged,
    /// Served if the caller holds this tool group.
    ToolGroup(ToolGroup),
    /// Served if the caller holds this capability.
    Capability(Capability),
    /// Served unless the target is the manager; the participle completes
    /// the refusal ("... cannot be destroyed").
    SparesManager(&'static str),
}

/// One verb of the agent and manager sockets.
#[derive(Debug, Clone, Copy)]
pub struct AgentRow {
    pub verb: &'static str,
    pub agent: Rule,
    pub manager: Rule,
}

const fn open(verb: &'static str) -> AgentRow {
    AgentRow {
        verb,
        agent: Rule::Allow,
        manager: Rule::Allow,
    }
}

const fn managers(verb: &'static str, manager: Rule) -> AgentRow {
    AgentRow {
        verb,
        agent: Rule::Privileged,
        manager,
    }
}

/// The agent and manager sockets' verbs (`wire::agent::Request`).
pub const AGENT_VERBS: &[AgentRow] = &[
    open("send"),
    open("recv"),
    open("status"),
    open("operator_msg"),
    open("wake"),
    open("recent"),
    open("ask"),
    open("answer"),
    open("remind"),
    open("get_loose_ends"),
    open("count_pending_reminders"),
    open("reminder_rollup"),
    open("set_status"),
    open("get_agent_meta"),
    open("cancel_loose_end"),
    open("ack_turn"),
    open("requeue_inflight"),
    open("report_session"),
    open("report_turn"),
    open("await_interrupt"),
    open("turn_progress"),
    open("hook_event"),
    // For itself only (the socket says who): the operator decides.
    open("request_egress"),
    AgentRow {
        verb: "get_host_journal",
        agent: Rule::Capability(Capability::ReadHostJournal),
        manager: Rule::Allow,
    },
    AgentRow {
        verb: "list_descendants",
        agent: Rule::ToolGroup(ToolGroup::Lifecycle),
        manager: Rule::Allow,
    },
    managers("request_init_config", Rule::Allow),
    managers("kill", Rule::SparesManager("killed from its own socket")),
    managers("start", Rule::SparesManager("started from its own socket")),
    managers(
        "restart",
        Rule::SparesManager("restarted from its own socket"),
    ),
    managers("update", Rule::SparesManager("rebuilt from its own socket")),
    managers("request_apply_commit", Rule::Allow),
    managers("request_budget", Rule::Allow),
    managers("get_logs", Rule::Allow),
    managers("request_update_meta_inputs", Rule::Allow),
    managers("request_schedule_prompt", Rule::Allow),
    managers("cancel_schedule", Rule::Allow),
    managers("list_schedules", Rule::Allow),
    managers("fire_schedule_now", Rule::Allow),
    managers("edit_schedule", Rule::Allow),
];

/// host.sock's verbs (`wire::host::HostRequest`): all the operator's; the
/// manager is part of the hive and is never destroyed.
pub const HOST_VERBS: &[(&str, Rule)] = &[
    ("list", Rule::Allow),
    ("agent_status", Rule::Allow),
    ("subscribe_agent_status", Rule::Allow),
    ("swarm_status", Rule::Allow),
    ("urls", Rule::Allow),
    ("set_paused", Rule::Allow),
    ("start", Rule::Allow),
    ("stop", Rule::Allow),
    ("restart", Rule::Allow),
    ("restart_all", Rule::Allow),
    ("spawn", Rule::Allow),
    ("request_spawn", Rule::Allow),
    ("kill", Rule::Allow),
    ("destroy", Rule::SparesManager("destroyed")),
    ("rebuild", Rule::Allow),
    ("pending", Rule::Allow),
    ("approve", Rule::Allow),
    ("deny", Rule::Allow),
    ("show", Rule::Allow),
    ("rollback", Rule::Allow),
    ("set_parent", Rule::Allow),
    ("logs", Rule::Allow),
    ("journal", Rule::Allow),
    ("questions", Rule::Allow),
    ("answer", Rule::Allow),
    ("schedules", Rule::Allow),
    ("cancel_schedule", Rule::Allow),
    ("grants", Rule::Allow),
    ("grant", Rule::Allow),
    ("revoke", Rule::Allow),
    ("inbox", Rule::Allow),
    ("send", Rule::Allow),
    ("signal", Rule::Allow),
    ("interrupt", Rule::Allow),
    ("turns", Rule::Allow),
    ("usage", Rule::Allow),
    ("budgets", Rule::Allow),
    ("set_budget", Rule::Allow),
    ("unset_budget", Rule::Allow),
    ("egress_log", Rule::Allow),
    ("inspect_agent", Rule::Allow),
    ("version", Rule::Allow),
    ("model_log", Rule::Allow),
    ("images", Rule::Allow),
    ("prune_images", Rule::Allow),
];

/// The rule for `verb` from a caller of `kind`, if the policy has one.
pub fn rule(kind: Kind, verb: &str) -> Option<Rule> {
    match kind {
        Kind::Operator => HOST_VERBS
            .iter()
            .find(|(v, _)| *v == verb)
            .map(|(_, rule)| *rule),
        Kind::Agent | Kind::Manager => AGENT_VERBS.iter().find(|row| row.verb == verb).map(|row| {
            if kind == Kind::Agent {
                row.agent
            } else {
                row.manager
            }
        }),
    }
}

/// A caller's grants, as far as the rule needs them (empty for callers
/// the rule does not ask).
#[derive(Debug, Clone, Copy, Default)]
pub struct Grants<'a> {
    pub capabilities: &'a [Capability],
    pub tool_groups: &'a [ToolGroup],
}

/// What the policy refuses; each names what to ask for or to do instead.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
pub enum Denied {
    /// The manager's verb on an agent socket: ask the manager.
    #[error("privileged variant {verb} is refused on an agent socket")]
    Privileged { verb: String },
    /// A verb no table lists (a bug: the tests cover every command).
    #[error("internal: no access rule for {verb:?}; refused")]
    NoPolicy { verb: String },
    /// The manager agent is part of the hive itself: do it from host.sock
    /// (or not at all, for destroy).
    #[error("\"{name}\" is the hive's manager and cannot be {verb}")]
    ManagerProtected { name: Ident, verb: &'static str },
    /// Ask the operator for a grant (`hivectl grant`).
    #[error(
        "{what} needs the `{}` tool group, which agent \"{caller}\" does not have; the operator grants it with `hivectl grant {caller} --tool-group {}`",
        .group.as_str(), .group.as_str()
    )]
    NeedsToolGroup {
        caller: String,
        group: ToolGroup,
        what: String,
    },
    /// Ask the operator for a grant (`hivectl grant`).
    #[error(
        "\"{caller}\" lacks the {} capability; the operator grants it with `hivectl grant {caller} --capability {}`",
        .capability.as_str(), .capability.as_str()
    )]
    MissingCapability {
        caller: String,
        capability: Capability,
    },
    /// Ask the operator for a grant (`hivectl grant`), or query a child.
    #[error(
        "\"{caller}\" needs the {} capability to query \"{target}\", which is not its direct child; the operator grants it with `hivectl grant {caller} --capability {}`",
        .capability.as_str(), .capability.as_str()
    )]
    NeedsCapability {
        caller: Ident,
        capability: Capability,
        target: Ident,
    },
    /// Ask for one agent instead, or go through the manager.
    #[error("agent \"*\" (the whole hive) is only served on the manager socket")]
    HiveWideRefused,
    /// Ask the manager or the operator to withdraw the approval.
    #[error(
        "cancel_loose_end of an approval is for the manager only; ask the manager or the operator to withdraw it"
    )]
    ApprovalNeedsManager,
}

/// May `who` run `verb` on `target` (the agent the verb acts on, if it
/// names one), holding `grants`? `manager` is the hive's manager agent.
pub fn decide(
    who: Who<'_>,
    verb: &str,
    target: Option<&Ident>,
    grants: Grants<'_>,
    manager: &Ident,
) -> Result<(), Denied> {
    let Some(rule) = rule(who.kind(), verb) else {
        return Err(Denied::NoPolicy {
            verb: verb.to_owned(),
        });
    };
    let caller = || match who {
        Who::Agent(name) | Who::Manager(name) => name.to_string(),
        Who::Operator => super::OPERATOR.to_owned(),
    };
    match rule {
        Rule::Allow => Ok(()),
        Rule::Privileged => Err(Denied::Privileged {
            verb: verb.to_owned(),
        }),
        Rule::ToolGroup(group) if grants.tool_groups.contains(&group) => Ok(()),
        Rule::ToolGroup(group) => Err(Denied::NeedsToolGroup {
            caller: caller(),
            group,
            what: verb.to_owned(),
        }),
        Rule::Capability(capability) if grants.capabilities.contains(&capability) => Ok(()),
        Rule::Capability(capability) => Err(Denied::MissingCapability {
            caller: caller(),
            capability,
        }),
        Rule::SparesManager(participle) => match target {
            Some(name) if name == manager => Err(Denied::ManagerProtected {
                name: name.clone(),
                verb: participle,
            }),
            _ => Ok(()),
        },
    }
}

/// Why [`resolve_target`] did not resolve.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ScopeTarget {
    /// The name is valid but no such agent is managed.
    Unknown(Ident),
    /// Not a valid agent name.
    BadName(String),
    Denied(Denied),
}

/// Whose data a loose-ends style query covers. `requested` is the request's
/// `agent` field; `may_query_others` whether an agent caller holds
/// `query_agent_state`. An agent sees itself and its direct children
/// freely, others only with that capability; `"*"` (hive-wide) only on the
/// manager socket. Unknown names are refused as such by the caller (they
/// are not in `topology`).
pub fn resolve_target(
    caller: &Caller,
    requested: Option<&str>,
    topology: &Topology,
    may_query_others: bool,
) -> Result<Target, ScopeTarget> {
    let Some(requested) = requested else {
        return Ok(Target::One(caller.name().clone()));
    };
    if requested == HIVE_WIDE {
        return match caller {
            Caller::Manager(_) => Ok(Target::Hive),
            Caller::Agent(_) => Err(ScopeTarget::Denied(Denied::HiveWideRefused)),
        };
    }
    let target = Ident::new(requested).map_err(|_| ScopeTarget::BadName(requested.to_owned()))?;
    if !topology.contains(&target) {
        return Err(ScopeTarget::Unknown(target));
    }
    match caller {
        Caller::Manager(_) => Ok(Target::One(target)),
        Caller::Agent(me) => {
            let is_child = topology.parent_of(&target) == Some(me);
            if target == *me || is_child || may_query_others {
                Ok(Target::One(target))
            } else {
                Err(ScopeTarget::Denied(Denied::NeedsCapability {
                    caller: me.clone(),
                    capability: Capability::QueryAgentState,
                    target,
                }))
            }
        }
    }
}

/// May `caller` cancel a loose end of this kind? Questions and reminders
/// are checked against their owner by the service; approvals are the
/// manager's to withdraw.
pub fn may_cancel(caller: &Caller, kind: CancelLooseEndKind) -> Result<(), Denied> {
    match (kind, caller) {
        (CancelLooseEndKind::Approval, Caller::Agent(_)) => Err(Denied::ApprovalNeedsManager),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "access_tests.rs"]
mod tests;
