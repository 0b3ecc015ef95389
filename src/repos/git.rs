//! The one place `git` runs: an explicit argv, no shell of ours, and an
//! environment that reads no configuration but the repository's own and
//! the hive's `-c` flags.
//!
//! Every run gets: an empty environment except `PATH`, `HOME` and
//! `XDG_CONFIG_HOME` pointing at an empty hive-owned directory,
//! `GIT_CONFIG_NOSYSTEM=1`, `GIT_CONFIG_GLOBAL=/dev/null`, no terminal
//! prompt; and the flags of [`SAFE_CONFIG`] (no hooks, no fsmonitor, only
//! the `file` protocol, objects checked on fetch, no submodules).
//! Rejected: libgit2 or gix, which run no hooks but follow alternates as
//! git does, and whose file transport (gix) spawns `git` anyway.

use std::path::{Path, PathBuf};
use std::time::Duration;

/// Config every git run of the hive gets on its command line (which wins
/// over a repository's own config).
pub const SAFE_CONFIG: &[&str] = &[
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "core.untrackedCache=false",
    "protocol.allow=never",
    "protocol.file.allow=always",
    "fetch.fsckObjects=true",
    "transfer.fsckObjects=true",
    "receive.fsckObjects=true",
    "submodule.recurse=false",
    "fetch.recurseSubmodules=false",
    "gc.auto=0",
    "maintenance.auto=false",
    "user.name=hive-c0re",
    "user.email=hive-c0re@localhost",
    "init.defaultBranch=main",
    "advice.detachedHead=false",
];

/// How long one git run may take before it is killed.
pub const GIT_TIMEOUT: Duration = Duration::from_secs(120);

/// Why a git run did not succeed.
#[derive(Debug, thiserror::Error)]
pub enum GitError {
    /// `git` (or the sandbox launcher) could not be started.
    #[error("cannot run {program}: {error}")]
    Spawn {
        program: String,
        error: std::io::Error,
    },
    /// It ran and failed; the last lines of its stderr.
    #[error("git {what} failed ({status}): {stderr}")]
    Failed {
        what: String,
        status: String,
        stderr: String,
    },
    /// It ran past [`GIT_TIMEOUT`] and was killed.
    #[error("git {what} took longer than {}s and was stopped", GIT_TIMEOUT.as_secs())]
    TimedOut { what: String },
}

/// The environment git runs in (see the module docs).
#[derive(Debug, Clone)]
pub struct GitEnv {
    /// An empty directory, git's `HOME` and `XDG_CONFIG_HOME`.
    pub home: PathBuf,
    /// `PATH` as the daemon got it.
    pub path: Option<std::ffi::OsString>,
}

impl GitEnv {
    /// Run `program args` in this environment (a `git`, or the sandbox
    /// launcher in front of one), `stdin` fed from `input`; stdout on
    /// success. `what` names the run in errors.
    pub async fn run(
        &self,
        what: &str,
        program: &Path,
        args: &[String],
        input: Option<Vec<u8>>,
    ) -> Result<Vec<u8>, GitError> {
        let out = self.output(what, program, args, input).await?;
        if out.status.success() {
            Ok(out.stdout)
        } else {
            Err(failed(what, &out))
        }
    }

    /// As [`GitEnv::run`], but whether it said yes: exit 0 is `true`, 1 is `false`
    /// (`merge-base --is-ancestor`: "no"; `cat-file -e`: absent).
    pub async fn run_yes_no(
        &self,
        what: &str,
        program: &Path,
        args: &[String],
    ) -> Result<bool, GitError> {
        let out = self.output(what, program, args, None).await?;
        match out.status.code() {
            Some(0) => Ok(true),
            Some(1) => Ok(false),
            _ => Err(failed(what, &out)),
        }
    }

    async fn output(
        &self,
        what: &str,
        program: &Path,
        args: &[String],
        input: Option<Vec<u8>>,
    ) -> Result<std::process::Output, GitError> {
        #[allow(clippy::disallowed_methods)] // this module is the seam for git
        let mut cmd = tokio::process::Command::new(program);
        cmd.args(args)
            .env_clear()
            .env("HOME", &self.home)
            .env("XDG_CONFIG_HOME", &self.home)
            .env("GIT_CONFIG_NOSYSTEM", "1")
            .env("GIT_CONFIG_GLOBAL", "/dev/null")
            .env("GIT_TERMINAL_PROMPT", "0")
            .env("GIT_NO_REPLACE_OBJECTS", "1")
            .env("LC_ALL", "C");
        if let Some(path) = &self.path {
            cmd.env("PATH", path);
        }
        let spawn_err = |error| GitError::Spawn {
            program: program.display().to_string(),
            error,
        };
        let run = crate::command::output(cmd, input.as_deref(), Err);
        tokio::time::timeout(GIT_TIMEOUT, run)
            .await
            .map_err(|_| GitError::TimedOut {
                what: what.to_owned(),
            })?
            .map_err(spawn_err)
    }
}

fn failed(what: &str, out: &std::process::Output) -> GitError {
    let stderr = String::from_utf8_lossy(&out.stderr);
    let tail: Vec<&str> = stderr
        .lines()
        .filter(|l| !l.trim().is_empty())
        .rev()
        .take(4)
        .collect();
    GitError::Failed {
        what: what.to_owned(),
        status: out.status.to_string(),
        stderr: tail.into_iter().rev().collect::<Vec<_>>().join(" / "),
    }
}

/// `-c k=v` for every entry of [`SAFE_CONFIG`], then `extra`.
pub fn safe_args(extra: &[&str]) -> Vec<String> {
    let mut args = Vec::with_capacity(SAFE_CONFIG.len() * 2 + extra.len());
    for kv in SAFE_CONFIG {
        args.push("-c".to_owned());
        args.push((*kv).to_owned());
    }
    args.extend(extra.iter().map(|s| (*s).to_owned()));
    args
}

/// A path as one argument, if it is a plain absolute path (the only paths
/// the hive builds: the state directory and [`crate::wire::ident::Ident`]s).
pub fn plain_path(p: &Path) -> Option<String> {
    let s = p.to_str()?;
    let ok = p.is_absolute()
        && s.bytes()
            .all(|b| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-' | b'+'))
        && !s.split('/').any(|c| c == "..");
    ok.then(|| s.to_owned())
}

/// `program` found in `path` (the daemon's `PATH`), absolute.
pub fn find_program(name: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    std::env::split_paths(path?)
        .map(|dir| dir.join(name))
        .find(|p| p.is_absolute() && p.is_file())
}
