//! hivectl's command line (clap derive) and how each subcommand becomes a
//! host.sock request.
//!
//! Names are parsed as [`Ident`] by clap itself, so a bad name is a usage
//! error (exit 2) before any connection. `start`/`stop` demand names or
//! `--all`: the protocol reads an empty scope as "everything", and a
//! forgotten argument must not stop the whole hive. Rejected alternative:
//! defaulting to everything like the wire does — convenient, and one typo
//! away from an outage.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

use crate::config::{DEFAULT_RUNTIME_DIR, HOST_SOCKET_NAME};
use crate::wire::agenda::{Capability, ToolGroup};
use crate::wire::agenda::{HostJournalFilters, JournalPriority};
use crate::wire::host::{DEFAULT_INBOX_LIMIT, HostRequest, LifecycleScope};
use crate::wire::ident::Ident;

/// The default `--socket`: `/run/hyperhive/host.sock`.
pub fn default_socket() -> PathBuf {
    PathBuf::from(DEFAULT_RUNTIME_DIR).join(HOST_SOCKET_NAME)
}

/// Operate a hive: talk to hive-c0re over its admin socket (host.sock).
#[derive(Debug, Parser)]
#[command(name = "hivectl", version, propagate_version = true)]
#[command(
    after_help = "Exit status: 0 ok, 1 refused by hive-c0re (or a local file could not be \
                        written), 2 usage error, 3 hive-c0re could not be reached or did not \
                        answer properly."
)]
pub struct Cli {
    /// Path of hive-c0re's admin socket.
    #[arg(long, global = true, env = "HIVE_SOCKET", value_name = "PATH",
          default_value_os_t = default_socket())]
    pub socket: PathBuf,

    /// Print hive-c0re's answer line(s) unchanged instead of a table.
    #[arg(long, global = true)]
    pub json: bool,

    /// Total time budget of one call, in milliseconds (default 5000). For
    /// tests; set through HIVECTL_TIMEOUT_MS.
    #[arg(long = "timeout-ms", global = true, env = "HIVECTL_TIMEOUT_MS", hide = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: Option<u64>,

    #[command(subcommand)]
    pub command: Command,
}

/// One subcommand per host.sock verb, plus two local helpers.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the roster: one row per managed agent.
    Status,
    /// List managed agents by name.
    List,
    /// Start agent containers.
    Start(Selection),
    /// Stop agent containers.
    Stop {
        #[command(flatten)]
        which: Selection,
        /// Ask each agent to quiesce and stop cleanly within a deadline, then kill.
        #[arg(long)]
        graceful: bool,
    },
    /// Stop and start one container without rebuilding its config.
    Restart {
        /// The agent's name.
        name: Ident,
    },
    /// Restart every managed container, one after the other.
    RestartAll,
    /// Park an agent's turn loop (works on a stopped container too).
    Pause {
        /// The agent's name.
        name: Ident,
    },
    /// Un-park an agent's turn loop.
    Resume {
        /// The agent's name.
        name: Ident,
    },
    /// Create and start a sub-agent now, without approval.
    Spawn {
        /// The agent's name.
        name: Ident,
    },
    /// Queue a spawn approval for the operator.
    RequestSpawn {
        /// The agent's name.
        name: Ident,
    },
    /// Stop a managed container (gracefully).
    Kill {
        /// The agent's name.
        name: Ident,
    },
    /// Tear a container down; its state is kept unless --purge.
    Destroy {
        /// The agent's name.
        name: Ident,
        /// Delete the agent's state too.
        #[arg(long)]
        purge: bool,
    },
    /// Apply pending config to a container.
    Rebuild {
        /// The agent's name.
        name: Ident,
    },
    /// Show the approval queue.
    Pending,
    /// Approve a pending approval: its action runs now.
    Approve {
        /// The approval's id, as `hivectl pending` shows it.
        id: i64,
    },
    /// Deny a pending approval.
    Deny {
        /// The approval's id, as `hivectl pending` shows it.
        id: i64,
    },
    /// Move an agent in the topology: under PARENT, or to the root.
    #[command(group(ArgGroup::new("target").required(true).args(["parent", "root"])))]
    #[command(override_usage = "hivectl set-parent <CHILD> <PARENT|--root>")]
    SetParent {
        /// The agent to move.
        child: Ident,
        /// The new parent.
        parent: Option<Ident>,
        /// Make CHILD a root agent.
        #[arg(long)]
        root: bool,
    },
    /// Show this hive's domain and browser URLs.
    Urls,
    /// Show open questions (asked of the operator or of an agent).
    Questions,
    /// Answer a question as the operator.
    Answer {
        /// The question's id, as `hivectl questions` shows it.
        id: i64,
        /// The answer text.
        text: String,
    },
    /// Show scheduled prompts.
    Schedules,
    /// Cancel a scheduled prompt, or only some of its targets.
    CancelSchedule {
        /// The schedule's id, as `hivectl schedules` shows it.
        id: i64,
        /// Cancel only these targets (agent names or `operator`).
        #[arg(long = "target", value_name = "TARGET")]
        targets: Vec<String>,
    },
    /// Show agents' capabilities and tool groups.
    Grants {
        /// Only this agent.
        name: Option<Ident>,
    },
    /// Grant an agent a capability or a tool group.
    Grant(GrantArgs),
    /// Revoke a capability or a tool group from an agent.
    Revoke(GrantArgs),
    /// Show the operator's inbox: messages agents sent to `operator`, newest first.
    Inbox {
        /// How many messages to show.
        #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = DEFAULT_INBOX_LIMIT)]
        limit: u64,
    },
    /// Send a message to an agent, as `operator`.
    Send {
        /// The agent's name.
        agent: Ident,
        /// The message.
        text: String,
    },
    /// Follow the roster: print each agent's row whenever it changes.
    Watch,
    /// Show an agent's container journal (journalctl -M h-NAME).
    Logs {
        name: Ident,
        /// How many of the newest entries (default 30, at most 1000).
        #[arg(short = 'n', long)]
        lines: Option<u32>,
        /// Keep printing new entries until interrupted.
        #[arg(short, long)]
        follow: bool,
        /// Only this unit inside the container.
        #[arg(long)]
        unit: Option<String>,
    },
    /// Show the host's journal, filtered.
    Journal {
        /// Only this unit (e.g. hive-c0re.service).
        #[arg(long)]
        unit: Option<String>,
        /// Only this agent container's journal (h-NAME).
        #[arg(long)]
        container: Option<String>,
        /// This priority and more severe.
        #[arg(short, long, value_parser = priority_parser())]
        priority: Option<JournalPriority>,
        /// Only entries whose message matches this regular expression.
        #[arg(long)]
        grep: Option<String>,
        /// Entries on or after this time (journalctl syntax, e.g. -1h).
        #[arg(long, allow_hyphen_values = true)]
        since: Option<String>,
        /// Entries on or before this time.
        #[arg(long, allow_hyphen_values = true)]
        until: Option<String>,
        /// How many of the newest entries (default 30, at most 100).
        #[arg(short = 'n', long)]
        lines: Option<u32>,
    },
    /// Print a shell completion script to stdout.
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write manual pages (hivectl.1 and one per subcommand) into DIR.
    Man {
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// `--priority`: journalctl's names, offered to completion, parsed into the
/// wire type.
fn priority_parser() -> impl clap::builder::TypedValueParser<Value = JournalPriority> {
    use clap::builder::TypedValueParser;
    let names: Vec<&'static str> = JournalPriority::ALL.iter().map(|p| p.as_str()).collect();
    clap::builder::PossibleValuesParser::new(names).try_map(|name: String| {
        JournalPriority::parse(&name).ok_or_else(|| format!("unknown priority {name:?}"))
    })
}

/// What `grant`/`revoke` change: exactly one capability or tool group.
#[derive(Debug, Clone, Args)]
#[group(skip)]
#[command(group(ArgGroup::new("grant").required(true).args(["capability", "tool_group"])))]
pub struct GrantArgs {
    /// The agent's name.
    pub name: Ident,
    /// A capability: manage_root_agent, read_host_journal, query_agent_state.
    #[arg(long, value_parser = parse_capability)]
    pub capability: Option<Capability>,
    /// A tool group: messaging, meta, inbox, lifecycle, approvals,
    /// scheduling, diagnostics, execution, web_tools.
    #[arg(long, value_parser = parse_tool_group)]
    pub tool_group: Option<ToolGroup>,
}

fn parse_capability(value: &str) -> Result<Capability, String> {
    Capability::parse(value).ok_or_else(|| {
        let known: Vec<&str> = Capability::ALL.iter().map(|c| c.as_str()).collect();
        format!("unknown capability; known: {}", known.join(", "))
    })
}

fn parse_tool_group(value: &str) -> Result<ToolGroup, String> {
    ToolGroup::parse(value).ok_or_else(|| {
        let known: Vec<&str> = ToolGroup::ALL.iter().map(|g| g.as_str()).collect();
        format!("unknown tool group; known: {}", known.join(", "))
    })
}

/// Which agents `start`/`stop` act on: names, or `--all`; one is required.
#[derive(Debug, Clone, Args)]
#[group(id = "which", required = true, multiple = false)]
pub struct Selection {
    /// Agents to act on.
    #[arg(value_name = "NAME")]
    pub names: Vec<Ident>,
    /// Every managed agent.
    #[arg(long)]
    pub all: bool,
}

impl Selection {
    /// The wire scope: `--all` selects every agent (`agents: true`), names
    /// select those agents only.
    pub fn scope(&self) -> LifecycleScope {
        if self.all {
            LifecycleScope {
                agents: true,
                ..LifecycleScope::default()
            }
        } else {
            LifecycleScope::agents(self.names.clone())
        }
    }
}

/// What a subcommand does.
#[derive(Debug, Clone, PartialEq)]
pub enum Action {
    /// One request, one answer.
    Call(HostRequest),
    /// A streaming request (`subscribe_agent_status`, `logs --follow`):
    /// print each line until the stream ends.
    Stream(HostRequest),
    /// Local: print completions.
    Completions(clap_complete::Shell),
    /// Local: write man pages.
    Man(PathBuf),
}

impl Command {
    /// The action, with the request it sends.
    pub fn action(&self) -> Action {
        let call = Action::Call;
        match self {
            Self::Status => call(HostRequest::AgentStatus),
            Self::List => call(HostRequest::List),
            Self::Start(which) => call(HostRequest::Start {
                scope: which.scope(),
            }),
            Self::Stop { which, graceful } => call(HostRequest::Stop {
                scope: which.scope(),
                graceful: *graceful,
            }),
            Self::Restart { name } => call(HostRequest::Restart { name: name.clone() }),
            Self::RestartAll => call(HostRequest::RestartAll),
            Self::Pause { name } => call(HostRequest::SetPaused {
                name: name.clone(),
                paused: true,
            }),
            Self::Resume { name } => call(HostRequest::SetPaused {
                name: name.clone(),
                paused: false,
            }),
            Self::Spawn { name } => call(HostRequest::Spawn { name: name.clone() }),
            Self::RequestSpawn { name } => call(HostRequest::RequestSpawn { name: name.clone() }),
            Self::Kill { name } => call(HostRequest::Kill { name: name.clone() }),
            Self::Destroy { name, purge } => call(HostRequest::Destroy {
                name: name.clone(),
                purge: *purge,
            }),
            Self::Rebuild { name } => call(HostRequest::Rebuild { name: name.clone() }),
            Self::Pending => call(HostRequest::Pending),
            Self::Approve { id } => call(HostRequest::Approve { id: *id }),
            Self::Deny { id } => call(HostRequest::Deny { id: *id }),
            // clap's group guarantees exactly one of `parent` and `--root`;
            // `--root` (no parent) is null on the wire.
            Self::SetParent { child, parent, .. } => call(HostRequest::SetParent {
                child: child.clone(),
                new_parent: parent.clone(),
            }),
            Self::Urls => call(HostRequest::Urls),
            Self::Watch => Action::Stream(HostRequest::SubscribeAgentStatus),
            Self::Logs {
                name,
                lines,
                follow,
                unit,
            } => {
                let request = HostRequest::Logs {
                    name: name.clone(),
                    lines: *lines,
                    unit: unit.clone(),
                    follow: *follow,
                };
                if *follow {
                    Action::Stream(request)
                } else {
                    call(request)
                }
            }
            Self::Journal {
                unit,
                container,
                priority,
                grep,
                since,
                until,
                lines,
            } => call(HostRequest::Journal(HostJournalFilters {
                unit: unit.clone(),
                container: container.clone(),
                lines: *lines,
                priority: *priority,
                grep: grep.clone(),
                since: since.clone(),
                until: until.clone(),
            })),
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
            Self::Grant(g) => call(HostRequest::Grant {
                name: g.name.clone(),
                capability: g.capability,
                tool_group: g.tool_group,
            }),
            Self::Revoke(g) => call(HostRequest::Revoke {
                name: g.name.clone(),
                capability: g.capability,
                tool_group: g.tool_group,
            }),
            Self::Inbox { limit } => call(HostRequest::Inbox {
                limit: Some(*limit),
            }),
            Self::Send { agent, text } => call(HostRequest::Send {
                to: agent.clone(),
                body: text.clone(),
            }),
            Self::Completions { shell } => Action::Completions(*shell),
            Self::Man { out } => Action::Man(out.clone()),
        }
    }
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
