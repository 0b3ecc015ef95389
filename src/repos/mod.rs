//! Agents' config repositories: agent `N`'s *proposed* repo
//! `<state_dir>/proposed/N` (a plain repo, the manager's workspace, written
//! by an untrusted agent) and its *applied* repo `<state_dir>/applied/N.git`
//! (bare, the hive's own: its `main` is what is deployed, its tags tell
//! each proposal's story, [`crate::hive::proposal::Tag`]).
//!
//! Decisions, because the proposed repo is hostile (its writer is an
//! agent; as root, `git status` in it runs its `core.fsmonitor`, a push
//! into it runs its hooks, a fetch from it follows its alternates):
//! - **The hive never runs porcelain, commits or pushes in a proposed
//!   repo.** It reads one commit out of it with `git fetch` run in the
//!   applied repo (`<sha>:refs/hive/incoming/<id>`), hooks off, only the
//!   file protocol, objects fsck'd, no tags, no submodules, no system or
//!   global config (`git.rs`); the only other read is resolving an
//!   abbreviated sha (`rev-parse`), under the same rules.
//! - **The upload side runs sandboxed** ([`Sandbox::TransientUnit`]): `git
//!   upload-pack` (and that `rev-parse`) as a transient systemd unit with a
//!   dynamic user, the repo's top directory bound read-only (never its
//!   `.git`, which the manager can swap for a link: `fetch.rs`), the rest
//!   of the state directory hidden and no network, so alternates or
//!   symlinks planted in the repo reach nothing the hive could read. Under `--driver
//!   fake` no systemd runs: [`Sandbox::Off`], every other rule kept, logged
//!   once.
//! - **Refused before any fetch, whatever the sandbox** (`layout.rs`): a
//!   proposed repo with `objects/info/alternates` or `http-alternates`, a
//!   `commondir`, a `.git` that is a file or a symlink, or git's own
//!   directories replaced by symlinks.
//! - Paths are built from the state directory and an
//!   [`crate::wire::ident::Ident`] only, and checked plain
//!   ([`git::plain_path`]) before they reach an argv.
//!
//! Rejected: `git clone <proposed>` (hardlinks and follows symlinks,
//! CVE-2022-39253, CVE-2024-32020/32021), and libgit2 or gix (both follow
//! alternates; gix's file transport spawns `git` anyway).

mod applied;
mod export;
mod fetch;
pub mod git;
mod layout;
mod meta;

use std::path::{Path, PathBuf};

pub use export::CLAUDE_FILES;
pub use git::GitError;

use crate::wire::ident::Ident;

/// How the upload side of a fetch from a proposed repo runs.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Sandbox {
    /// As a transient systemd unit (`systemd-run --pipe --wait`, dynamic
    /// user, only the repo bound, no network): the real driver.
    TransientUnit { systemd_run: PathBuf },
    /// In the daemon's own process tree (the fake driver, no systemd).
    Off,
}

/// Why a repository operation did not happen.
#[derive(Debug, thiserror::Error)]
pub enum RepoError {
    /// The proposed repo breaks a rule checked before anything is fetched
    /// (alternates, a `.git` file, ...): the manager fixes the repo.
    #[error("the proposed repo of {agent} is refused: {why}")]
    Refused { agent: Ident, why: String },
    /// The commit is not in the proposed repo: the manager commits it
    /// there (or names the right one).
    #[error("commit {commit_ref:?} is not in the proposed repo of {agent}")]
    NoSuchCommit { agent: Ident, commit_ref: String },
    /// The agent has (or has not) its repos when the caller needs the
    /// opposite.
    #[error("{0}")]
    State(String),
    /// git failed (the message has its stderr's tail).
    #[error(transparent)]
    Git(#[from] GitError),
    /// A file or directory of the hive's could not be made.
    #[error("cannot write {path}: {error}")]
    Io {
        path: PathBuf,
        error: std::io::Error,
    },
}

/// The config repositories of a hive's agents. Cheap to clone.
#[derive(Debug, Clone)]
pub struct Repos {
    state_dir: PathBuf,
    sandbox: Sandbox,
    git: PathBuf,
    env: git::GitEnv,
}

impl Repos {
    /// The repos under `state_dir`, their upload side run by `sandbox`.
    /// `git` is looked up in the daemon's `PATH` (absolute, so the
    /// transient unit runs the same program).
    pub fn new(state_dir: &Path, sandbox: Sandbox) -> Self {
        let path = std::env::var_os("PATH");
        let git = git::find_program("git", path.as_deref()).unwrap_or_else(|| "git".into());
        if sandbox == Sandbox::Off {
            tracing::warn!(
                "config proposals are fetched without the sandbox (no systemd with --driver \
                 fake): the upload side runs as the daemon's user; every other rule applies"
            );
        }
        Self {
            state_dir: state_dir.to_path_buf(),
            sandbox,
            git,
            env: git::GitEnv {
                home: state_dir.join("git-home"),
                path,
            },
        }
    }

    /// The systemd-run of this host, for [`Sandbox::TransientUnit`].
    pub fn find_systemd_run() -> Option<PathBuf> {
        git::find_program("systemd-run", std::env::var_os("PATH").as_deref())
    }

    /// `<state_dir>/proposed`: every proposed repo (the manager's
    /// `/hive/proposed`).
    pub fn proposed_root(&self) -> PathBuf {
        self.state_dir.join("proposed")
    }

    /// `<state_dir>/applied`: every applied repo (the manager's
    /// `/hive/applied`).
    pub fn applied_root(&self) -> PathBuf {
        self.state_dir.join("applied")
    }

    /// `<state_dir>/proposed/<n>`.
    pub fn proposed(&self, n: &Ident) -> PathBuf {
        self.proposed_root().join(n.as_str())
    }

    /// `<state_dir>/applied/<n>.git`.
    pub fn applied(&self, n: &Ident) -> PathBuf {
        self.applied_root().join(format!("{n}.git"))
    }

    /// Has `n` an applied repo (its config exists)?
    pub fn has_config(&self, n: &Ident) -> bool {
        self.applied(n).exists()
    }

    /// Has `n` a proposed or an applied repo?
    pub fn has_any(&self, n: &Ident) -> bool {
        self.has_config(n) || std::fs::symlink_metadata(self.proposed(n)).is_ok()
    }

    fn arg(&self, p: &Path) -> Result<String, RepoError> {
        git::plain_path(p).ok_or_else(|| {
            RepoError::State(format!(
                "the path {} cannot be handed to git: the state directory must be a plain \
                 absolute path (a-z, A-Z, 0-9, '/', '.', '_', '-', '+')",
                p.display()
            ))
        })
    }

    fn io(path: &Path) -> impl Fn(std::io::Error) -> RepoError + '_ {
        move |error| RepoError::Io {
            path: path.to_path_buf(),
            error,
        }
    }

    /// `git -c ... --git-dir=<applied> <args>` in the applied repo of `n`.
    async fn in_applied(&self, n: &Ident, what: &str, args: &[&str]) -> Result<Vec<u8>, RepoError> {
        self.in_applied_with(n, what, args, None).await
    }

    /// As [`Repos::in_applied`], with `input` on stdin.
    async fn in_applied_with(
        &self,
        n: &Ident,
        what: &str,
        args: &[&str],
        input: Option<String>,
    ) -> Result<Vec<u8>, RepoError> {
        let dir = format!("--git-dir={}", self.arg(&self.applied(n))?);
        let mut all = git::safe_args(&[&dir]);
        all.extend(args.iter().map(|s| (*s).to_owned()));
        self.ensure_home()?;
        let input = input.map(String::into_bytes);
        Ok(self.env.run(what, &self.git, &all, input).await?)
    }

    fn ensure_home(&self) -> Result<(), RepoError> {
        std::fs::create_dir_all(&self.env.home).map_err(Self::io(&self.env.home))
    }
}

#[cfg(test)]
#[path = "repos_tests.rs"]
mod tests;
