//! `hive-c0re`: parse, run, print the error chain, exit.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hive_c0re::config::{Config, DriverKind, Overrides};

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
        /// With `--driver fake`: each container start takes this long (a
        /// slowly booting container), for tests of the answer budget.
        #[arg(long, value_name = "MS")]
        fake_job_delay_ms: Option<u64>,
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
            fake_job_delay_ms,
        } => Config::with_overrides(Overrides {
            file: config,
            state_dir,
            runtime_dir,
            driver,
            domain,
            fake_job_delay: fake_job_delay_ms.map(std::time::Duration::from_millis),
        })
        .map_err(anyhow::Error::from)
        .and_then(hive_c0re::daemon::serve),
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
