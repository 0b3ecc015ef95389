//! hivectl: the operator's command line for hive-c0re. Everything but
//! parsing lives in [`hive_c0re::cli`]; clap exits 2 on a usage error itself.

use std::process::ExitCode;

use clap::Parser;
use hive_c0re::cli::{args::Cli, run};

fn main() -> ExitCode {
    let cli = Cli::parse();
    ExitCode::from(run(
        cli,
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}
