//! `hive-agent`: the in-container harness. Parse, run, print the error
//! chain, exit. Subcommands live in [`hive_c0re::agent`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hive_c0re::agent::bash::BashServer;
use hive_c0re::agent::claude::Launch;
use hive_c0re::agent::config::{ENV_CLAUDE_COMMAND, ENV_CONFIG, RunConfig};
use hive_c0re::agent::egress;
use hive_c0re::agent::hook;
use hive_c0re::agent::idempotency::Calls;
use hive_c0re::agent::mcp::{self, Hyperhive};
use hive_c0re::agent::socket::{AgentSocket, DEFAULT_SOCKET, ENV_SOCKET};
use hive_c0re::agent::tools::{ENV_CAPABILITIES, ENV_TOOL_GROUPS, Selection};
use hive_c0re::agent::turn::TurnLoop;
use hive_c0re::wire::claude_env::{self, ENV_CLAUDE_ENV};

#[derive(Debug, Parser)]
#[command(
    name = "hive-agent",
    version,
    about = "The hive's harness inside an agent container"
)]
struct Cli {
    /// The agent socket.
    #[arg(long, global = true, env = ENV_SOCKET, default_value = DEFAULT_SOCKET)]
    socket: PathBuf,
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// The `hyperhive` MCP server on stdio (tools from HIVE_TOOL_GROUPS,
    /// HIVE_CAPABILITIES).
    Mcp,
    /// The `bash` MCP server on stdio (the execution group's run/status).
    McpBash,
    /// Call one `hyperhive` tool as Claude would and print its result
    /// (exit 1 when the result is an error): for scripts and debugging.
    Call {
        /// The tool's name, e.g. `send`.
        tool: String,
        /// Its arguments as a JSON object, e.g. '{"to":"operator","body":"hi"}'.
        #[arg(default_value = "{}")]
        args: String,
    },
    /// Forward one Claude Code hook (its JSON on stdin) to the hive.
    /// Bounded (well under a second), silent on stdout, always exit 0:
    /// a note on stderr when the hive is unreachable or refuses it.
    Hook,
    /// Relay TCP connections on a loopback port to the hive's egress
    /// proxy (`egress.sock` beside the agent socket), for a shell; `run`
    /// starts its own for Claude.
    EgressForward {
        /// The loopback address to listen on.
        #[arg(long, default_value = "127.0.0.1:3128")]
        listen: std::net::SocketAddr,
    },
    /// A scripted stand-in for Claude Code (not a model): reads a turn's
    /// prompt on stdin, answers each sender with `send`, prints the
    /// stream-json of a turn. The demo hive's agents run it
    /// (`hive-c0re serve --driver fake --demo-agents`).
    DemoModel,
    /// The turn loop (the container's hive-agent.service): recv, run
    /// Claude, ack or requeue; with an egress forwarder on a free
    /// loopback port, which Claude gets as HTTPS_PROXY/HTTP_PROXY.
    Run {
        /// JSON config [default: /etc/hive-agent/config.json when it exists].
        #[arg(long, env = ENV_CONFIG)]
        config: Option<PathBuf>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("hive-agent: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli)) {
        Ok(()) => ExitCode::SUCCESS,
        Err(e) => {
            eprintln!("hive-agent: {e:#}");
            ExitCode::FAILURE
        }
    }
}

async fn run(cli: Cli) -> anyhow::Result<()> {
    let socket = AgentSocket::new(&cli.socket);
    match cli.command {
        Command::Hook => {
            if let Err(note) = hook::forward(&socket, tokio::io::stdin(), hook::headless()).await {
                eprintln!("hive-agent hook: {note}");
            }
            Ok(())
        }
        Command::Mcp => {
            let selection = selection(&socket).await?;
            let hyperhive = Hyperhive::new(socket, &selection).with_calls(Calls::from_env());
            mcp::serve_stdio(hyperhive).await
        }
        Command::McpBash => mcp::serve_stdio(BashServer::new(socket)).await,
        Command::EgressForward { listen } => {
            hive_c0re::logging::init()?;
            let listener = egress::bind(listen).await?;
            let to = egress::egress_socket(&cli.socket);
            eprintln!(
                "hive-agent: forwarding {} to {}; use HTTPS_PROXY=http://{}",
                listener.local_addr()?,
                to.display(),
                listener.local_addr()?
            );
            egress::forward(listener, to).await;
            Ok(())
        }
        Command::Call { tool, args } => {
            let args: serde_json::Map<String, serde_json::Value> = serde_json::from_str(&args)
                .map_err(|e| anyhow::anyhow!("the arguments must be a JSON object: {e}"))?;
            let selection = selection(&socket).await?;
            let (text, is_error) = Hyperhive::new(socket, &selection)
                .with_calls(Calls::from_env())
                .call(&tool, Some(args))
                .await;
            println!("{text}");
            if is_error {
                anyhow::bail!("{tool} failed");
            }
            Ok(())
        }
        Command::DemoModel => {
            let mut prompt = String::new();
            tokio::io::AsyncReadExt::read_to_string(&mut tokio::io::stdin(), &mut prompt).await?;
            let selection = selection(&socket).await?;
            if !hive_c0re::agent::demo_model::run(socket, &selection, &prompt).await {
                anyhow::bail!("a reply could not be sent");
            }
            Ok(())
        }
        Command::Run { config } => {
            hive_c0re::logging::init()?;
            let command = std::env::var(ENV_CLAUDE_COMMAND).ok();
            let config = RunConfig::load(config.as_deref(), command.as_deref())?;
            let selection = selection(&socket).await?;
            // The agent's own variables (its agent.json), for each turn.
            let agent_env = match std::env::var(ENV_CLAUDE_ENV) {
                Ok(text) => claude_env::decode(&text)?,
                Err(_) => Vec::new(),
            };
            let names: Vec<&str> = agent_env.iter().map(|(k, _)| k.as_str()).collect();
            tracing::info!("agent variables for Claude: [{}]", names.join(","));
            let groups: Vec<&str> = selection.groups.iter().map(|g| g.as_str()).collect();
            let source = if std::env::var(ENV_TOOL_GROUPS).ok().is_some() {
                ENV_TOOL_GROUPS
            } else {
                "the socket's default"
            };
            tracing::info!("tool groups {} from {source}", groups.join(","));
            // Claude's only way out: a forwarder on the container's
            // loopback to the hive's egress proxy (any free port, so
            // harnesses sharing a host's loopback in tests never collide).
            let listener = egress::bind(([127, 0, 0, 1], 0).into()).await?;
            let egress_port = listener.local_addr()?.port();
            let to = egress::egress_socket(&cli.socket);
            tracing::info!(
                "egress forwarder on 127.0.0.1:{egress_port} to {}",
                to.display()
            );
            tokio::spawn(egress::forward(listener, to));
            let launch = Launch {
                config,
                selection,
                harness: std::env::current_exe()?,
                socket: cli.socket,
                egress_port: Some(egress_port),
                agent_env,
            };
            let (tx, rx) = tokio::sync::watch::channel(false);
            tokio::spawn(async move {
                stop_signal().await;
                let _ = tx.send(true);
            });
            TurnLoop::new(launch, socket).run(rx).await?;
            Ok(())
        }
    }
}

/// The tools this agent gets: HIVE_TOOL_GROUPS / HIVE_CAPABILITIES, the
/// default groups of the socket's side (agent or manager) when unset.
async fn selection(socket: &AgentSocket) -> anyhow::Result<Selection> {
    let groups = std::env::var(ENV_TOOL_GROUPS).ok();
    let default = match groups {
        Some(_) => &[][..],
        None => mcp::default_groups(socket).await,
    };
    let caps = std::env::var(ENV_CAPABILITIES).ok();
    Ok(Selection::from_values(
        groups.as_deref(),
        caps.as_deref(),
        default,
    )?)
}

/// SIGTERM (systemd's stop) or SIGINT.
async fn stop_signal() {
    use tokio::signal::unix::{SignalKind, signal};
    match (
        signal(SignalKind::terminate()),
        signal(SignalKind::interrupt()),
    ) {
        (Ok(mut term), Ok(mut int)) => {
            tokio::select! {
                _ = term.recv() => {}
                _ = int.recv() => {}
            }
        }
        _ => std::future::pending().await,
    }
}
