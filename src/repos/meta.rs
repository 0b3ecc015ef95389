//! The hive's meta flake (`meta_flake` in the config): a git repository
//! the operator gives the hive, never an agent's. After `update_meta_inputs`
//! ran `nix flake update` in it, the hive commits its `flake.lock` here,
//! with the same safe git as everywhere (no hooks, no global config).
//! Rejected: leaving the lock uncommitted, which would make the hive's
//! base a working-tree state nobody can name or roll back.

use std::path::Path;

use super::{RepoError, Repos, git};

impl Repos {
    /// Commit `flake.lock` in the meta flake's repository at `dir` with
    /// `message`; the new commit's sha, or `None` when the lock did not
    /// change (nothing to commit).
    pub async fn commit_meta_lock(
        &self,
        dir: &Path,
        message: &str,
    ) -> Result<Option<String>, RepoError> {
        const LOCK: &str = "flake.lock";
        let work = format!("--work-tree={}", self.arg(dir)?);
        let git_dir = format!("--git-dir={}", self.arg(&dir.join(".git"))?);
        if !dir.join(".git").is_dir() {
            return Err(RepoError::State(format!(
                "the meta flake {} is not a git repository (its .git is not a directory): \
                 run `git init` there and commit its flake.nix and flake.lock",
                dir.display()
            )));
        }
        let run = |what: &'static str, args: Vec<&str>| {
            let mut all = git::safe_args(&[&git_dir, &work]);
            all.extend(args.iter().map(|s| (*s).to_owned()));
            async move {
                self.ensure_home()?;
                Ok::<_, RepoError>(self.env.run(what, &self.git, &all, None).await?)
            }
        };
        run("add", vec!["add", "--", LOCK]).await?;
        let unchanged = {
            let mut all = git::safe_args(&[&git_dir, &work]);
            all.extend(
                ["diff", "--cached", "--quiet", "--", LOCK]
                    .iter()
                    .map(|s| (*s).to_owned()),
            );
            self.env
                .run_yes_no("diff --cached", &self.git, &all)
                .await?
        };
        if unchanged {
            return Ok(None);
        }
        run("commit", vec!["commit", "-q", "-m", message, "--", LOCK]).await?;
        let out = run("rev-parse", vec!["rev-parse", "--verify", "HEAD"]).await?;
        Ok(Some(String::from_utf8_lossy(&out).trim().to_owned()))
    }
}
