//! The nixos profile's builder seam: turning an agent into a NixOS system
//! closure (a store path) its `container@h-<n>.service` boots.
//!
//! [`CommandBuilder`] runs the configured command (argv, no shell) with the
//! machine name `h-<n>` appended and takes the last line of its stdout as
//! the store path — `nix build --no-link --print-out-paths <flake>#h-` style
//! commands print exactly that. [`RecordingBuilder`] is the fast-test stand-in:
//! it records the agents it was asked for and answers a fixed path.
//! Rejected: calling `nixos-container update`, which also restarts the
//! container and would take lifecycle decisions out of the hive's hands.

use std::path::PathBuf;
use std::sync::{Mutex, PoisonError};

use crate::command::{self, CommandError};
use crate::containers::machine_name;
use crate::wire::ident::Ident;

/// Why a system closure could not be built.
#[derive(Debug, thiserror::Error)]
pub enum BuildError {
    /// The configured command did not run or did not succeed.
    /// (The cause is part of the message: wire errors carry Display only.)
    #[error("building the system of {machine}: {cause}")]
    Command {
        machine: String,
        cause: CommandError,
    },
    #[error("the build of {machine} printed no absolute store path (last line {line:?})")]
    NoPath { machine: String, line: String },
}

/// Builds agent `name`'s system closure and returns its store path.
#[async_trait::async_trait]
pub trait SystemBuilder: Send + Sync + std::fmt::Debug {
    async fn build(&self, name: &Ident) -> Result<PathBuf, BuildError>;
}

/// Runs `argv` + `h-<n>` and reads the store path from stdout.
#[derive(Debug, Clone)]
pub struct CommandBuilder {
    argv: Vec<String>,
}

impl CommandBuilder {
    pub fn new(argv: Vec<String>) -> Self {
        Self { argv }
    }
}

#[async_trait::async_trait]
impl SystemBuilder for CommandBuilder {
    async fn build(&self, name: &Ident) -> Result<PathBuf, BuildError> {
        let machine = machine_name(name);
        let stdout = command::run("nixos_build_command", &self.argv, &[&machine])
            .await
            .map_err(|cause| BuildError::Command {
                machine: machine.clone(),
                cause,
            })?;
        let line = command::last_line(&stdout);
        if !line.starts_with('/') {
            return Err(BuildError::NoPath {
                machine,
                line: line.to_owned(),
            });
        }
        Ok(PathBuf::from(line))
    }
}

/// Test stand-in: records each build and answers `<out>/<h-n>-system`.
#[derive(Debug)]
pub struct RecordingBuilder {
    out: PathBuf,
    calls: Mutex<Vec<Ident>>,
}

impl RecordingBuilder {
    pub fn new(out: impl Into<PathBuf>) -> Self {
        Self {
            out: out.into(),
            calls: Mutex::new(Vec::new()),
        }
    }

    /// The agents built so far, in order.
    pub fn calls(&self) -> Vec<Ident> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .clone()
    }
}

#[async_trait::async_trait]
impl SystemBuilder for RecordingBuilder {
    async fn build(&self, name: &Ident) -> Result<PathBuf, BuildError> {
        self.calls
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .push(name.clone());
        Ok(self.out.join(format!("{}-system", machine_name(name))))
    }
}

#[cfg(test)]
#[path = "builder_tests.rs"]
mod tests;
