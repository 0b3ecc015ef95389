//! `hive-c0re`: parse, run, print the error chain, exit.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hive_c0re::config::{Config, DriverKind};

#[derive(Debug, Parser)]
#[command(name = "hive-c0re", version, about = "The hive's host daemon")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon (socket-activated by hive-c0re.socket, or standalone).
    Serve {
        /// JSON config file; flags below override it [default:
        /// /etc/hive-c0re/config.json when it exists].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Database and agents' state [default: /var/lib/hyperhive].
        #[arg(long)]
        state_dir: Option<PathBuf>,
        /// Sockets [default: /run/hyperhive].
        #[arg(long)]
        runtime_dir: Option<PathBuf>,
        /// Container driver [default: systemd].
        #[arg(long, value_enum)]
        driver: Option<DriverKind>,
        /// The hive's public domain (enables URLs).
        #[arg(long)]
        domain: Option<String>,
    },
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match hive_c0re::logging::init() {
        Ok(target) => tracing::debug!(?target, "logging"),
        Err(err) => {
            eprintln!("hive-c0re: {err:#}");
            return ExitCode::FAILURE;
        }
    }
    let result = match cli.command {
        Command::Serve {
            config,
            state_dir,
            runtime_dir,
            driver,
            domain,
        } => {
            load(config, state_dir, runtime_dir, driver, domain).and_then(hive_c0re::daemon::serve)
        }
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("hive-c0re: {err:#}");
            ExitCode::FAILURE
        }
    }
}

fn load(
    file: Option<PathBuf>,
    state_dir: Option<PathBuf>,
    runtime_dir: Option<PathBuf>,
    driver: Option<DriverKind>,
    domain: Option<String>,
) -> anyhow::Result<Config> {
    let default = PathBuf::from(hive_c0re::config::DEFAULT_CONFIG);
    let file = file.or_else(|| default.exists().then_some(default));
    let mut config = match file {
        Some(path) => Config::load(&path)?,
        None => Config::default(),
    };
    if let Some(v) = state_dir {
        config.state_dir = v;
    }
    if let Some(v) = runtime_dir {
        config.runtime_dir = v;
    }
    if let Some(v) = driver {
        config.driver = v;
    }
    if domain.is_some() {
        config.domain = domain;
    }
    Ok(config)
}
