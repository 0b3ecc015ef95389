//! hivectl: the operator's command line for hive-c0re. Everything but
//! parsing lives in [`hive_c0re::cli`]; clap exits 2 on a usage error itself.

use std::process::ExitCode;

use clap::{CommandFactory, Parser};
use hive_c0re::cli::{COMPLETE_VAR, Terminal, args::Cli, run};

fn main() -> ExitCode {
    // A shell asking for completions (`COMPLETE=bash hivectl -- ...`) is
    // answered here, before parsing, and the process exits.
    clap_complete::CompleteEnv::with_factory(Cli::command)
        .var(COMPLETE_VAR)
        .complete();
    let cli = Cli::parse();
    ExitCode::from(run(
        cli,
        Terminal::detect(),
        &mut std::io::stdout().lock(),
        &mut std::io::stderr().lock(),
    ))
}
