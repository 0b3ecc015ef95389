//! What each hivectl subcommand does: the [`Action`] a parsed [`Command`]
//! becomes (one request, a stream, a lifecycle verb that waits, or a local
//! job), with the exact host.sock request it sends.
//!
//! Split from `args` along the line between the command line's shape
//! (clap's types, value parsers, completion) and its meaning here, so a
//! new verb's request is read in one place.

use std::path::PathBuf;

use super::args::{Command, JournalFormat, TableView, Wait};
use crate::clock::{Clock, SystemClock};
use crate::wire::agenda::HostJournalFilters;
use crate::wire::host::{HostRequest, LifecycleScope, Signal};
use crate::wire::ident::Ident;

/// What a subcommand does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// One request, one answer.
    Call(HostRequest),
    /// A streaming request (`logs`/`journal --follow`): print each line until the
    /// stream ends.
    Stream(HostRequest),
    /// A lifecycle verb: resolve `--all`, send, then wait for the outcome.
    Lifecycle(Lifecycle),
    /// The roster, then its changes, reconnecting across daemon restarts.
    Watch,
    /// An agent's newest turns, then its live turn (`turns -f`),
    /// reconnecting across daemon restarts.
    FollowTurns { name: Ident, limit: u32 },
    /// Local: print completions.
    Completions(clap_complete::Shell),
    /// Local: write man pages.
    Man(PathBuf),
    /// hivectl's version, then the daemon's (`version`).
    Version,
}

impl Action {
    /// A read (`logs`, `journal`): one answer, or a stream with `follow`.
    fn read(request: HostRequest, follow: bool) -> Self {
        if follow {
            Self::Stream(request)
        } else {
            Self::Call(request)
        }
    }
}

/// A lifecycle verb and the agents it names.
#[derive(Debug, Clone, PartialEq)]
pub struct Lifecycle {
    pub verb: Verb,
    /// The named agents; empty with `all`.
    pub names: Vec<Ident>,
    /// `--all`: every agent of the roster the verb applies to.
    pub all: bool,
    /// Wait for the outcome (no `--no-block`).
    pub block: bool,
}

/// What a lifecycle verb does to each agent.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Start,
    /// `deadline_secs`: `-t`, the graceful stop's deadline.
    Stop {
        graceful: bool,
        deadline_secs: Option<u64>,
    },
    Restart,
    Spawn,
    /// `kill -s SIG` (any signal but KILL): sent to the container's init.
    Signal(Signal),
    /// `--all` is refused (see [`Verb::takes_all`]).
    Destroy {
        purge: bool,
    },
}

impl Verb {
    /// Whether `--all` may be asked of it: every verb but destroy, which
    /// no operator wants for the whole hive at once (and a typo must not
    /// give them).
    pub fn takes_all(self) -> bool {
        !matches!(self, Self::Destroy { .. })
    }

    /// Whether its names must be managed agents, checked against the
    /// roster before anything acts: not for spawn (a new name) nor for
    /// `destroy --purge` (a destroyed agent's leftovers).
    pub fn names_managed_agents(self) -> bool {
        !matches!(self, Self::Spawn | Self::Destroy { purge: true })
    }
}

impl Lifecycle {
    /// The requests acting on `names` (the resolved targets), each with the
    /// agents it acts on: one scoped request for start and stop (kill is a
    /// hard stop), one per agent for the others; none when there is
    /// nothing to act on.
    pub fn requests(&self, names: &[Ident]) -> Vec<(HostRequest, Vec<Ident>)> {
        if names.is_empty() {
            return Vec::new();
        }
        let scope = || LifecycleScope::agents(names.to_vec());
        let each = |request: &dyn Fn(Ident) -> HostRequest| -> Vec<(HostRequest, Vec<Ident>)> {
            names
                .iter()
                .map(|n| (request(n.clone()), vec![n.clone()]))
                .collect()
        };
        match self.verb {
            Verb::Start => vec![(HostRequest::Start { scope: scope() }, names.to_vec())],
            Verb::Stop {
                graceful,
                deadline_secs,
            } => vec![(
                HostRequest::Stop {
                    scope: scope(),
                    graceful,
                    deadline_secs,
                },
                names.to_vec(),
            )],
            Verb::Restart => each(&|name| HostRequest::Restart { name }),
            Verb::Spawn => each(&|name| HostRequest::Spawn { name }),
            Verb::Signal(signal) => each(&|name| HostRequest::Signal { name, signal }),
            Verb::Destroy { purge } => each(&|name| HostRequest::Destroy { name, purge }),
        }
    }
}

impl Command {
    /// The action, with the request it sends.
    pub fn action(&self) -> Action {
        let call = Action::Call;
        let lifecycle = |verb, names: Vec<Ident>, all, wait: &Wait| {
            Action::Lifecycle(Lifecycle {
                verb,
                names,
                all,
                block: !wait.no_block,
            })
        };
        match self {
            Self::Status { swarm: false, .. } => call(HostRequest::AgentStatus),
            Self::Status { swarm: true, .. } => call(HostRequest::SwarmStatus),
            Self::List => call(HostRequest::List),
            Self::Start { which, wait } => {
                lifecycle(Verb::Start, which.names.clone(), which.all, wait)
            }
            Self::Stop {
                which,
                force,
                time,
                wait,
                ..
            } => lifecycle(
                Verb::Stop {
                    graceful: !force,
                    deadline_secs: *time,
                },
                which.names.clone(),
                which.all,
                wait,
            ),
            Self::Kill {
                which,
                signal: Some(signal),
                wait,
            } if *signal != Signal::Kill => {
                lifecycle(Verb::Signal(*signal), which.names.clone(), which.all, wait)
            }
            Self::Kill { which, wait, .. } => lifecycle(
                Verb::Stop {
                    graceful: false,
                    deadline_secs: None,
                },
                which.names.clone(),
                which.all,
                wait,
            ),
            Self::Restart { which, wait } => {
                lifecycle(Verb::Restart, which.names.clone(), which.all, wait)
            }
            Self::Spawn { name, wait } => lifecycle(Verb::Spawn, vec![name.clone()], false, wait),
            Self::RestartAll => call(HostRequest::RestartAll),
            Self::Pause { name } => call(HostRequest::SetPaused {
                name: name.clone(),
                paused: true,
            }),
            Self::Resume { name } => call(HostRequest::SetPaused {
                name: name.clone(),
                paused: false,
            }),
            Self::RequestSpawn { name } => call(HostRequest::RequestSpawn { name: name.clone() }),
            Self::Destroy { names, all, purge } => Action::Lifecycle(Lifecycle {
                verb: Verb::Destroy { purge: *purge },
                names: names.clone(),
                all: *all,
                block: true,
            }),
            Self::Rebuild { name } => call(HostRequest::Rebuild { name: name.clone() }),
            Self::Pending { .. } => call(HostRequest::Pending),
            Self::Approve { id, expires_in } => call(HostRequest::Approve {
                id: *id,
                expires_in_secs: expires_in.map(|d| d.as_secs()),
            }),
            Self::Deny { id, note } => call(HostRequest::Deny {
                id: *id,
                note: note.clone(),
            }),
            Self::Show { id } => call(HostRequest::Show { id: *id }),
            Self::Rollback { name, id } => call(HostRequest::Rollback {
                name: name.clone(),
                id: *id,
            }),
            // clap's group guarantees exactly one of `parent` and `--root`;
            // `--root` (no parent) is null on the wire.
            Self::SetParent { child, parent, .. } => call(HostRequest::SetParent {
                child: child.clone(),
                new_parent: parent.clone(),
            }),
            Self::Urls => call(HostRequest::Urls),
            Self::Version => Action::Version,
            Self::Watch => Action::Watch,
            Self::Logs {
                name,
                lines,
                follow,
                unit,
                ..
            } => {
                let request = HostRequest::Logs {
                    name: name.clone(),
                    lines: *lines,
                    unit: unit.clone(),
                    follow: *follow,
                };
                Action::read(request, *follow)
            }
            Self::Journal {
                unit,
                agent,
                priority,
                grep,
                since,
                until,
                lines,
                follow,
                ..
            } => {
                let request = HostRequest::Journal {
                    filters: HostJournalFilters {
                        unit: unit.clone(),
                        container: agent.as_ref().map(Ident::machine_name),
                        lines: *lines,
                        priority: *priority,
                        grep: grep.clone(),
                        since: since.clone(),
                        until: until.clone(),
                    },
                    follow: *follow,
                };
                Action::read(request, *follow)
            }
            Self::Questions => call(HostRequest::Questions),
            Self::Answer { id, text } => call(HostRequest::Answer {
                id: *id,
                answer: text.clone(),
            }),
            Self::Schedules => call(HostRequest::Schedules),
            Self::CancelSchedule { id, targets } => call(HostRequest::CancelSchedule {
                id: *id,
                targets: (!targets.is_empty()).then(|| targets.clone()),
            }),
            Self::Grants { name } => call(HostRequest::Grants { name: name.clone() }),
            Self::Inspect { name } => call(HostRequest::InspectAgent { name: name.clone() }),
            Self::Grant(g) => call(HostRequest::Grant {
                name: g.name.clone(),
                capability: g.capability,
                tool_group: g.tool_group,
                egress: g.egress.clone(),
                expires_in_secs: g.expires_in.map(|d| d.as_secs()),
            }),
            Self::Revoke(g) => call(HostRequest::Revoke {
                name: g.name.clone(),
                capability: g.capability,
                tool_group: g.tool_group,
                egress: g.egress.clone(),
            }),
            Self::Inbox {
                action: Some(super::inbox::InboxAction::Show { id }),
                ..
            } => call(super::inbox::request(*id)),
            Self::Inbox {
                limit,
                action: None,
            } => call(HostRequest::Inbox {
                limit: Some(*limit),
                id: None,
            }),
            Self::Interrupt { name, note } => call(HostRequest::Interrupt {
                name: name.clone(),
                note: note.clone(),
            }),
            Self::Turns {
                name,
                limit,
                follow: true,
            } => Action::FollowTurns {
                name: name.clone(),
                limit: *limit,
            },
            Self::Turns { name, limit, .. } => call(HostRequest::Turns {
                name: name.clone(),
                limit: Some(*limit),
                follow: false,
            }),
            Self::EgressLog { name, limit } => call(HostRequest::EgressLog {
                name: name.clone(),
                limit: Some(*limit),
            }),
            Self::ModelLog(args) => call(HostRequest::ModelLog {
                name: args.name.clone(),
                limit: Some(args.limit),
            }),
            Self::Budget { action } => call(super::budget::request(action.as_ref())),
            Self::Image(action) => call(super::image_args::request(action)),
            Self::Usage { since, by } => call(HostRequest::Usage {
                since_secs: since.map(|s| s.seconds_before(SystemClock.now_unix())),
                by: *by,
            }),
            Self::Send { agent, text } => call(HostRequest::Send {
                to: agent.agent.clone(),
                body: text.clone(),
                hive: agent.hive.clone(),
            }),
            Self::Completions { shell } => Action::Completions(*shell),
            Self::Man { out } => Action::Man(out.clone()),
        }
    }

    /// The agent of `logs`/`journal`, which the operator may name by its
    /// machine name (`h-alice`); see [`resolve_machine_name`].
    pub fn agent_mut(&mut self) -> Option<&mut Ident> {
        match self {
            Self::Logs { name, .. } => Some(name),
            Self::Journal { agent, .. } => agent.as_mut(),
            _ => None,
        }
    }

    /// How a table answer is printed (defaults for commands without the flags).
    pub fn view(&self) -> TableView {
        match self {
            Self::Status { view, .. } | Self::Pending { view, .. } => *view,
            _ => TableView::default(),
        }
    }

    /// The journal output format of `logs`/`journal`.
    pub fn journal_format(&self) -> JournalFormat {
        match self {
            Self::Logs { output, .. } | Self::Journal { output, .. } => *output,
            _ => JournalFormat::Short,
        }
    }
}

/// The agent `given` names, among the `managed` ones: itself when managed,
/// else, for a machine name `h-alice`, the agent `alice` when managed; else
/// `given` unchanged (hive-c0re then says it is unknown). An agent whose own
/// name starts with `h-` stays reachable by its name.
pub fn resolve_machine_name(given: &Ident, managed: &[Ident]) -> Ident {
    if managed.contains(given) {
        return given.clone();
    }
    given
        .as_str()
        .strip_prefix("h-")
        .and_then(|rest| Ident::new(rest).ok())
        .filter(|agent| managed.contains(agent))
        .unwrap_or_else(|| given.clone())
}
