//! hivectl's command line (clap derive): the subcommands, their flags and
//! help, value parsers and agent-name completion. What each subcommand then
//! does, and the request it sends, is [`super::action`].
//!
//! Names are parsed as [`Ident`] by clap itself, so a bad name is a usage
//! error (exit 2) before any connection. The lifecycle verbs demand names
//! or `--all`: the protocol reads an empty scope as "everything", and a
//! forgotten argument must not stop the whole hive. Rejected alternative:
//! defaulting to everything like the wire does — convenient, and one typo
//! away from an outage.

use std::path::PathBuf;

use clap::{ArgGroup, Args, Parser, Subcommand};

use crate::wire::agenda::{Capability, JournalPriority, ToolGroup};
use crate::wire::egress::EgressPattern;
use crate::wire::egress_audit::DEFAULT_EGRESS_LOG_LIMIT;
use crate::wire::host::{DEFAULT_INBOX_LIMIT, DEFAULT_TURNS_LIMIT, MAX_STOP_DEADLINE_SECS, Signal};
use crate::wire::ident::{AgentAt, Ident};
use crate::wire::turns::UsageBy;

use super::value_parsers::{
    parse_capability, parse_duration, parse_signal, parse_tool_group, parse_usage_by,
    priority_parser,
};

use super::complete::agent_names;
pub use super::complete::default_socket;
pub use super::lifecycle_args::{Selection, Wait};

/// The help heading of the flags every subcommand accepts, so a
/// subcommand's own options stand apart from them.
const GLOBAL: &str = "Global options";

/// Operate a hive: talk to hive-c0re over its admin socket (host.sock).
#[derive(Debug, Parser)]
#[command(name = "hivectl", version, propagate_version = true)]
#[command(after_help = after_help())]
pub struct Cli {
    /// Path of hive-c0re's admin socket.
    #[arg(long, global = true, env = "HIVE_SOCKET", value_name = "PATH",
          help_heading = GLOBAL,
          default_value_os_t = default_socket())]
    pub socket: PathBuf,

    /// Print hive-c0re's answer line(s) unchanged instead of a table.
    #[arg(long, global = true, help_heading = GLOBAL)]
    pub json: bool,

    /// Total time budget of one call, in milliseconds (default 5000). For
    /// tests; set through HIVECTL_TIMEOUT_MS.
    #[arg(long = "timeout-ms", global = true, env = "HIVECTL_TIMEOUT_MS", hide = true,
          value_parser = clap::value_parser!(u64).range(1..))]
    pub timeout_ms: Option<u64>,

    #[command(subcommand)]
    pub command: Command,
}

/// The end of `hivectl --help`: examples, the environment, and every exit
/// status from the one table ([`crate::wire::codes::exit::MEANINGS`]).
pub fn after_help() -> String {
    let statuses: String = crate::wire::codes::exit::MEANINGS
        .iter()
        .map(|(status, words)| format!("\n  {status}  {words}"))
        .collect();
    format!(
        "Examples:\n\
         \x20 hivectl status                 the roster\n\
         \x20 hivectl spawn alice            create and start alice, waiting until she runs\n\
         \x20 hivectl stop --all             stop every running agent cleanly\n\
         \x20 hivectl watch                  the roster, then each change as it happens\n\
         \x20 hivectl logs alice -f          follow alice's container journal\n\
         \n\
         Environment: HIVE_SOCKET (the socket path), NO_COLOR (no colour on a terminal).\n\
         Exit status:{statuses}"
    )
}

/// One subcommand per host.sock verb, plus two local helpers.
#[derive(Debug, Subcommand)]
pub enum Command {
    /// Show the roster: one row per managed agent.
    #[command(
        after_help = "Examples:\n  hivectl status\n  hivectl status -q     names only\n  \
                            hivectl status --json\n  hivectl status --needs-me\n  \
                            hivectl status --swarm   every hive of the swarm"
    )]
    Status {
        /// Every hive of the swarm, with each agent's hive.
        #[arg(long)]
        swarm: bool,
        #[command(flatten)]
        view: TableView,
        /// Only agents waiting on a person (a permission prompt, a
        /// question, idle), as their Claude Code hooks report.
        #[arg(long)]
        needs_me: bool,
    },
    /// List managed agents by name.
    #[command(after_help = "Example:\n  hivectl list")]
    List,
    /// Start agent containers, waiting until they run.
    #[command(
        after_help = "Examples:\n  hivectl start alice bob\n  hivectl start --all\n  \
                            hivectl start alice --no-block"
    )]
    Start {
        #[command(flatten)]
        which: Selection,
        #[command(flatten)]
        wait: Wait,
    },
    /// Stop agent containers cleanly (the agent may quiesce, then it is killed
    /// after the hive's stop deadline), waiting until they stopped.
    #[command(
        after_help = "Examples:\n  hivectl stop alice\n  hivectl stop --all\n  \
                            hivectl stop --force alice    kill it now"
    )]
    Stop {
        #[command(flatten)]
        which: Selection,
        /// Kill at once (SIGKILL) instead of a clean stop; the same as `kill`.
        #[arg(long)]
        force: bool,
        /// Seconds the agent may take to stop cleanly before it is killed
        /// (default: the hive's stop deadline; 0 kills at once).
        #[arg(short = 't', long = "time", value_name = "SECONDS", conflicts_with = "force",
              value_parser = clap::value_parser!(u64).range(0..=MAX_STOP_DEADLINE_SECS))]
        time: Option<u64>,
        /// Accepted for scripts written against the old default (a clean stop
        /// is the default now).
        #[arg(long, hide = true, conflicts_with = "force")]
        graceful: bool,
        #[command(flatten)]
        wait: Wait,
    },
    /// Stop and start containers without rebuilding their config (a
    /// named stopped agent is started; `--all` restarts the running ones).
    #[command(after_help = "Examples:\n  hivectl restart alice bob\n  hivectl restart --all")]
    Restart {
        #[command(flatten)]
        which: Selection,
        #[command(flatten)]
        wait: Wait,
    },
    /// Restart every running container, one after the other (a stopped one
    /// stays stopped).
    #[command(after_help = "Example:\n  hivectl restart-all")]
    RestartAll,
    /// Pause an agent's turns: it takes no new message until resumed (a
    /// turn in progress finishes; works on a stopped container too).
    #[command(after_help = "Example:\n  hivectl pause alice")]
    Pause {
        /// The agent's name.
        #[arg(add = agent_names())]
        name: Ident,
    },
    /// Resume a paused agent's turns: its waiting messages are handed out.
    #[command(after_help = "Example:\n  hivectl resume alice")]
    Resume {
        /// The agent's name.
        #[arg(add = agent_names())]
        name: Ident,
    },
    /// Create and start a sub-agent now, without approval, waiting until it runs.
    #[command(after_help = "Examples:\n  hivectl spawn alice\n  hivectl spawn alice --no-block")]
    Spawn {
        /// The new agent's name.
        name: Ident,
        #[command(flatten)]
        wait: Wait,
    },
    /// Queue a spawn approval for the operator; prints the approval's id.
    #[command(after_help = "Example:\n  hivectl request-spawn bob && hivectl pending")]
    RequestSpawn {
        /// The new agent's name.
        name: Ident,
    },
    /// Kill containers at once (SIGKILL), or send their init another
    /// signal; `stop` is the clean way.
    #[command(
        after_help = "The signal goes to the container's init, a systemd (as with \
                      `podman kill` or `machinectl kill --kill-whom=leader`), which takes \
                      HUP as reload, INT as reboot, TERM as re-execute (the container stays \
                      up: `hivectl stop` shuts it down), USR1 as reconnect to D-Bus, USR2 as \
                      dump state to its journal, STOP/CONT as freeze/thaw; see systemd(1), \
                      SIGNALS.\n\nExamples:\n  hivectl kill alice\n  \
                      hivectl kill alice --signal HUP    systemd in h-alice reloads its units\n  \
                      hivectl kill alice -s INT          h-alice reboots\n  \
                      hivectl kill --all                 every running agent"
    )]
    Kill {
        #[command(flatten)]
        which: Selection,
        /// Send this signal to the container's init instead of stopping it
        /// (KILL, the default, stops it): HUP, INT, KILL, USR1, USR2, TERM,
        /// CONT, STOP, WINCH (SIGTERM, term and 15 work too).
        #[arg(short, long, value_name = "SIG", value_parser = parse_signal)]
        signal: Option<Signal>,
        #[command(flatten)]
        wait: Wait,
    },
    /// Tear containers down; their state is kept unless --purge.
    #[command(after_help = "Examples:\n  hivectl destroy alice bob\n  \
                            hivectl destroy alice --purge    state and image too")]
    Destroy {
        /// The agents to destroy (each must be managed, or have state left
        /// with --purge).
        #[arg(value_name = "NAME", required_unless_present = "all", add = agent_names())]
        names: Vec<Ident>,
        /// Refused: destroying every agent at once is one typo from losing
        /// the hive; name the agents.
        #[arg(long, conflicts_with = "names")]
        all: bool,
        /// Delete their state and image too (also of an agent already
        /// destroyed).
        #[arg(long)]
        purge: bool,
    },
    /// Rebuild a container from its deployed config and restart it.
    #[command(after_help = "Example:\n  hivectl rebuild alice")]
    Rebuild {
        /// The agent's name.
        #[arg(add = agent_names())]
        name: Ident,
    },
    /// Show the approvals waiting for the operator.
    #[command(
        after_help = "Examples:\n  hivectl pending\n  hivectl pending --all    \
                            with approved, denied, failed and cancelled ones"
    )]
    Pending {
        /// Show resolved approvals too (the history).
        #[arg(long)]
        all: bool,
        #[command(flatten)]
        view: TableView,
    },
    /// Approve a pending approval: its action runs now.
    #[command(after_help = "Examples:\n  hivectl approve 3\n  \
                            hivectl approve 4 --for 2h    an egress request, granted for two hours")]
    Approve {
        /// The approval's id, as `hivectl pending` shows it.
        id: i64,
        /// An egress request only: grant its host for this long (e.g. 90s,
        /// 30m, 2h, 1d); without it the grant lasts until revoked.
        #[arg(long = "for", value_name = "DURATION", value_parser = parse_duration)]
        expires_in: Option<std::time::Duration>,
    },
    /// Deny a pending approval.
    #[command(after_help = "Examples:\n  hivectl deny 3\n  \
                            hivectl deny 3 --note 'keep the 4G limit'")]
    Deny {
        /// The approval's id, as `hivectl pending` shows it.
        id: i64,
        /// Why: kept on the row and, for a config commit, on its
        /// `denied/<id>` tag.
        #[arg(long)]
        note: Option<String>,
    },
    /// Show an approval and, for a config commit, what it changes against
    /// the deployed config (`main..proposal/<id>`: stat, then the patch).
    #[command(after_help = "Example:\n  hivectl show 3")]
    Show {
        /// The approval's id, as `hivectl pending` shows it.
        id: i64,
    },
    /// Deploy an agent's config as it was at `deployed/<ID>` again, as a
    /// new commit and an approval row of its own.
    #[command(after_help = "Example:\n  hivectl rollback alice 3")]
    Rollback {
        /// The agent's name.
        #[arg(add = agent_names())]
        name: Ident,
        /// The id of the approval whose deployed config to return to
        /// (`deployed/<ID>` in the agent's applied repo; 0: as seeded).
        id: i64,
    },
    /// Move an agent in the topology: under PARENT, or to the root.
    #[command(group(ArgGroup::new("target").required(true).args(["parent", "root"])))]
    #[command(override_usage = "hivectl set-parent <CHILD> <PARENT|--root>")]
    #[command(after_help = "Examples:\n  hivectl set-parent alice ruth\n  \
                            hivectl set-parent alice --root")]
    SetParent {
        /// The agent to move.
        #[arg(add = agent_names())]
        child: Ident,
        /// The new parent.
        #[arg(add = agent_names())]
        parent: Option<Ident>,
        /// Make CHILD a root agent.
        #[arg(long)]
        root: bool,
    },
    /// Show this hive's domain and browser URLs.
    #[command(after_help = "Example:\n  hivectl urls")]
    Urls,
    /// Show hivectl's version and the daemon's (release, protocol, driver, uptime).
    #[command(after_help = "Examples:\n  hivectl version\n  hivectl version --json")]
    Version,
    /// Show open questions (asked of the operator or of an agent).
    #[command(after_help = "Example:\n  hivectl questions")]
    Questions,
    /// Answer a question as the operator.
    #[command(after_help = "Example:\n  hivectl answer 7 'yes, go ahead'")]
    Answer {
        /// The question's id, as `hivectl questions` shows it.
        id: i64,
        /// The answer text.
        text: String,
    },
    /// Show scheduled prompts.
    #[command(after_help = "Example:\n  hivectl schedules")]
    Schedules,
    /// Cancel a scheduled prompt, or only some of its targets.
    #[command(after_help = "Examples:\n  hivectl cancel-schedule 4\n  \
                            hivectl cancel-schedule 4 --target alice")]
    CancelSchedule {
        /// The schedule's id, as `hivectl schedules` shows it.
        id: i64,
        /// Cancel only these targets (agent names or `operator`).
        #[arg(long = "target", value_name = "TARGET")]
        targets: Vec<String>,
    },
    /// Show agents' capabilities and tool groups.
    #[command(after_help = "Examples:\n  hivectl grants\n  hivectl grants alice")]
    Grants {
        /// Only this agent.
        #[arg(add = agent_names())]
        name: Option<Ident>,
    },
    /// Show one agent's facts: state, deployed config, limits, egress
    /// with each entry's source, grants, budget, inbox, last turns.
    #[command(after_help = "Examples:\n  hivectl inspect alice\n  hivectl inspect alice --json")]
    Inspect {
        #[arg(add = agent_names())]
        name: Ident,
    },
    /// Grant an agent a capability, a tool group or an egress host.
    #[command(
        after_help = "Examples:\n  hivectl grant alice --capability read_host_journal\n  \
                            hivectl grant alice --tool-group web_tools\n  \
                            hivectl grant alice --egress pypi.org:443 --for 2h"
    )]
    Grant(GrantArgs),
    /// Revoke a capability, a tool group or an egress host from an agent.
    #[command(
        after_help = "Examples:\n  hivectl revoke alice --tool-group web_tools\n  \
                            hivectl revoke alice --egress pypi.org:443"
    )]
    Revoke(GrantArgs),
    /// Show the operator's inbox: messages agents sent to `operator`, newest
    /// first, bodies shortened; `inbox show ID` prints one whole.
    #[command(after_help = "Examples:\n  hivectl inbox\n  hivectl inbox -n 5\n  \
                            hivectl inbox show 7")]
    Inbox {
        /// How many messages to show.
        #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = DEFAULT_INBOX_LIMIT)]
        limit: u64,
        #[command(subcommand)]
        action: Option<super::inbox::InboxAction>,
    },
    /// End an agent's turn in progress: Claude is stopped, the turn is
    /// recorded `interrupted` and its messages count as handled.
    #[command(after_help = "Examples:\n  hivectl interrupt alice\n  \
                            hivectl interrupt alice --note 'stop; use the staging database'")]
    Interrupt {
        #[arg(add = agent_names())]
        name: Ident,
        /// The agent's next message (from `operator`), sent before the turn
        /// ends.
        #[arg(long)]
        note: Option<String>,
    },
    /// Show an agent's newest turns from the turn journal: outcome, time,
    /// model, the agent's metered requests of the turn's time and their
    /// cost, the tokens and cost the turn reported, and tool calls (a
    /// failed call ends in `!`); with -f, then its turn in progress as it
    /// happens.
    #[command(
        after_help = "Examples:\n  hivectl turns alice\n  hivectl turns alice -n 5 --json\n  \
                            hivectl turns alice -n 3 -f"
    )]
    Turns {
        #[arg(add = agent_names())]
        name: Ident,
        /// How many turns to show.
        #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = DEFAULT_TURNS_LIMIT)]
        limit: u32,
        /// Then follow the turn in progress (its messages, tool calls,
        /// reply, tokens) until Ctrl-C, across daemon restarts.
        #[arg(short = 'f', long)]
        follow: bool,
    },
    /// Show an agent's egress audit: its newest connections through the
    /// hive's egress proxy, oldest first — time, verdict (allowed, refused,
    /// forbidden, limited, ...), target, the address dialled, bytes out and
    /// in, duration, and why. Refusals of one target in one minute are one
    /// line with a count (xN).
    #[command(
        after_help = "Examples:\n  hivectl egress-log alice\n  hivectl egress-log alice -n 500\n  \
                            hivectl egress-log alice --json"
    )]
    EgressLog {
        #[arg(add = agent_names())]
        name: Ident,
        /// How many of its newest lines to show (1 to 10000).
        #[arg(short = 'n', long = "limit", value_name = "N", default_value_t = DEFAULT_EGRESS_LOG_LIMIT)]
        limit: u32,
    },
    ModelLog(super::model_log_args::ModelLogArgs),
    /// The agent images: `image ls`.
    #[command(subcommand)]
    Image(super::image_args::ImageAction),
    /// Show what the agents spent, as the model gateway metered it:
    /// requests, tokens and list cost per agent, subtree (an agent with
    /// everything under it), model or UTC day — with the turns and the
    /// cost they reported beside, never summed into the spend.
    #[command(
        after_help = "Examples:\n  hivectl usage\n  hivectl usage --since 24h --by subtree\n  \
                            hivectl usage --since 2026-12-01 --by day --json"
    )]
    Usage {
        /// Only requests made and turns ended in this window: 24h, 7d,
        /// 90m, or since a UTC date (2026-12-01). Everything kept when
        /// omitted.
        #[arg(long, value_name = "WINDOW", value_parser = super::since::parse_since)]
        since: Option<super::since::Since>,
        /// Group by agent, subtree, model or day.
        #[arg(long, value_name = "KEY", default_value = "agent", value_parser = parse_usage_by)]
        by: UsageBy,
    },
    /// List the budgets (spend caps) the host enforces, with what each
    /// window holds; set or unset one. A reached budget starts no new turn
    /// for the agents it covers: their messages wait in their inboxes.
    #[command(
        after_help = "Examples:\n  hivectl budget\n  hivectl budget set alice 20usd/day\n  \
                            hivectl budget set --hive 5usd/5h\n  hivectl budget unset alice"
    )]
    Budget {
        #[command(subcommand)]
        action: Option<super::budget::BudgetAction>,
    },
    /// Send a message to an agent, as `operator`.
    #[command(after_help = "Examples:\n  hivectl send alice 'please report'\n  \
                      hivectl send bob@hive-b 'hello from hive-a'   an agent of another hive")]
    Send {
        /// The agent's name, or NAME@HIVE for an agent of another hive of
        /// the swarm.
        #[arg(add = agent_names())]
        agent: AgentAt,
        /// The message.
        text: String,
    },
    /// Follow the roster: the current rows, then each change with its time,
    /// until interrupted (reconnecting when hive-c0re restarts).
    #[command(after_help = "Examples:\n  hivectl watch\n  hivectl watch --json")]
    Watch,
    /// Show an agent's container journal (journalctl -M h-NAME).
    #[command(
        after_help = "Examples:\n  hivectl logs alice\n  hivectl logs alice -n 100\n  \
                            hivectl logs alice -f\n  hivectl logs alice -o json"
    )]
    Logs {
        /// The agent's name (`alice`; its machine name `h-alice` works too).
        #[arg(add = agent_names())]
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
        /// Output format: short (time, unit, message), cat (the message
        /// only) or json (one object per entry).
        #[arg(short, long, value_enum, default_value_t = JournalFormat::Short)]
        output: JournalFormat,
    },
    /// Show the host's journal, filtered.
    #[command(
        after_help = "Examples:\n  hivectl journal --agent alice -p warning\n  \
                            hivectl journal --unit hive-c0re.service --since -1h\n  \
                            hivectl journal --grep crashed -o cat\n  \
                            hivectl journal --agent alice -f"
    )]
    Journal {
        /// Only this unit (e.g. hive-c0re.service).
        #[arg(long)]
        unit: Option<String>,
        /// Only this agent container's journal (`alice`; `h-alice` works too).
        #[arg(long, visible_alias = "container", value_name = "NAME",
              add = agent_names())]
        agent: Option<Ident>,
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
        /// Keep printing new entries until interrupted.
        #[arg(short, long, conflicts_with = "until")]
        follow: bool,
        /// Output format: short, cat or json.
        #[arg(short, long, value_enum, default_value_t = JournalFormat::Short)]
        output: JournalFormat,
    },
    /// Print a shell completion script to stdout (agent names complete too).
    #[command(
        after_help = "Examples:\n  hivectl completions bash > /etc/bash_completion.d/hivectl\n  \
                            hivectl completions zsh > ~/.zfunc/_hivectl"
    )]
    Completions {
        #[arg(value_enum)]
        shell: clap_complete::Shell,
    },
    /// Write manual pages (hivectl.1 and one per subcommand) into DIR; the
    /// daemon's hive-c0re.8 is systemd/hive-c0re.8 in the source tree.
    #[command(after_help = "Example:\n  hivectl man --out /usr/local/share/man/man1")]
    Man {
        #[arg(long, value_name = "DIR")]
        out: PathBuf,
    },
}

/// What `grant`/`revoke` change: exactly one capability, tool group or
/// egress host.
#[derive(Debug, Clone, Args)]
#[group(skip)]
#[command(group(ArgGroup::new("grant").required(true).args(["capability", "tool_group", "egress"])))]
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
    /// An egress host the agent may reach through the hive's proxy:
    /// HOST[:PORT] or *.DOMAIN[:PORT] (no port: any).
    #[arg(long, value_name = "HOST[:PORT]")]
    pub egress: Option<EgressPattern>,
    /// With --egress: for this long only (e.g. 90s, 30m, 2h, 1d); grant
    /// only (revoke ignores it).
    #[arg(
        long = "for",
        value_name = "DURATION",
        conflicts_with_all = ["capability", "tool_group"],
        value_parser = parse_duration
    )]
    pub expires_in: Option<std::time::Duration>,
}

/// How a table is printed.
#[derive(Debug, Clone, Copy, Default, Args)]
pub struct TableView {
    /// Print the first column only (agent names, approval ids), for scripts.
    #[arg(short, long)]
    pub quiet: bool,
    /// Leave out the header line.
    #[arg(long)]
    pub no_legend: bool,
}

/// The journal output formats (journalctl's `-o` names).
#[derive(Debug, Clone, Copy, PartialEq, Eq, clap::ValueEnum)]
pub enum JournalFormat {
    /// Time, identifier and message.
    Short,
    /// The message only.
    Cat,
    /// One JSON object per entry, as hive-c0re sent it.
    Json,
}

#[cfg(test)]
#[path = "args_tests.rs"]
mod tests;
