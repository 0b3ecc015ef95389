//! `hive-agent`: the in-container harness. Parse, run, print the error
//! chain, exit. Subcommands live in [`hive_c0re::agent`].

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hive_c0re::agent::bash::BashServer;
use hive_c0re::agent::mcp::{self, Hyperhive};
use hive_c0re::agent::socket::{AgentSocket, DEFAULT_SOCKET, ENV_SOCKET};
use hive_c0re::agent::tools::{ENV_CAPABILITIES, ENV_TOOL_GROUPS, Selection};

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
    let socket = AgentSocket::new(cli.socket);
    match cli.command {
        Command::Mcp => {
            let groups = std::env::var(ENV_TOOL_GROUPS).ok();
            let default = match groups {
                Some(_) => &[][..],
                None => mcp::default_groups(&socket).await,
            };
            let caps = std::env::var(ENV_CAPABILITIES).ok();
            let selection = Selection::from_values(groups.as_deref(), caps.as_deref(), default)?;
            mcp::serve_stdio(Hyperhive::new(socket, &selection)).await
        }
        Command::McpBash => mcp::serve_stdio(BashServer::new(socket)).await,
    }
}
