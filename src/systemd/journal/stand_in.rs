//! Test-only [`Spawn`] that runs another program in journalctl's place
//! (`cat <fixture>`, `sleep`, `yes`) and records the argv it was given.
//! It copies the one real decision of the seam: the program is started by
//! the shared runner, so the kill, cap and parsing paths are the real ones.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
use std::ffi::OsString;
use std::path::{Path, PathBuf};
use std::sync::Mutex;

use tokio::process::Command;

use super::runner::Spawn;

#[derive(Debug)]
pub struct StandIn {
    program: PathBuf,
    args: Vec<OsString>,
    seen: Mutex<Vec<Vec<OsString>>>,
}

impl StandIn {
    pub fn new<I, A>(program: &str, args: I) -> Self
    where
        I: IntoIterator<Item = A>,
        A: Into<OsString>,
    {
        Self {
            program: program.into(),
            args: args.into_iter().map(Into::into).collect(),
            seen: Mutex::new(Vec::new()),
        }
    }

    /// Every argv the journal code asked for, in order.
    pub fn seen(&self) -> Vec<Vec<OsString>> {
        self.seen.lock().unwrap().clone()
    }
}

impl Spawn for StandIn {
    fn command(&self, args: &[OsString]) -> Command {
        self.seen.lock().unwrap().push(args.to_vec());
        let mut command = Command::new(&self.program);
        command.args(&self.args);
        command
    }

    fn program(&self) -> &Path {
        &self.program
    }
}
