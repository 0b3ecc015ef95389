//! The applied repo, the hive's own: seeding both repos of an agent,
//! tags, and reading a fetched proposal (its tree, a blob, whether it
//! descends from `main`).
//!
//! Seeding is the one time the hive writes a proposed repo: it does not
//! exist yet (refused otherwise), so nothing in it is an agent's. It is a
//! `git clone --no-local` of the freshly made applied repo, whose `origin`
//! is then set to the path the manager sees (`/hive/applied/N.git`).

use std::path::Path;

use super::{RepoError, Repos};
use crate::hive::proposal::{TreeEntry, parse_ls_tree};
use crate::wire::ident::Ident;

pub use crate::hive::proposal::MANAGER_APPLIED_DIR;

/// The mode git gives every file it writes in an applied repo
/// (`core.sharedRepository`; directories get `0705`): readable through the
/// manager's read-only bind by its user, whatever the daemon's umask
/// (`UMask=0077` would make them `0600`). No group bit, so git sets no
/// setgid bit on the directories, which the daemon's unit refuses
/// (`RestrictSUIDSGID=yes`; plain `--shared` would).
const APPLIED_MODE: &str = "0604";

impl Repos {
    /// Give an applied repo made before [`APPLIED_MODE`] that mode for
    /// what git writes from now on, and make what it holds readable
    /// (start-up, once per agent with repos).
    pub async fn share_applied(&self, n: &Ident) -> Result<(), RepoError> {
        let applied = self.applied(n);
        // Every start asks this of every agent: the hive's own config file
        // answers without a git process (git writes the key as below, in
        // either case; any other spelling only costs one `git config` that
        // changes nothing).
        let written = format!("\tsharedrepository = {APPLIED_MODE}\n");
        let config = std::fs::read_to_string(applied.join("config")).unwrap_or_default();
        if config.to_ascii_lowercase().contains(&written) {
            return Ok(());
        }
        let key = "core.sharedRepository";
        self.in_applied(n, "config", &["config", key, APPLIED_MODE])
            .await?;
        readable(&applied).map_err(Self::io(&applied))
    }
}

/// Make the tree at `dir` (just made by the hive: no symlink is followed
/// anyway) readable by everyone: directories `a+rx`, files `a+r`.
fn readable(dir: &Path) -> std::io::Result<()> {
    use std::os::unix::fs::PermissionsExt as _;
    let meta = std::fs::symlink_metadata(dir)?;
    if meta.is_symlink() {
        return Ok(());
    }
    let mode = meta.permissions().mode();
    let add = if meta.is_dir() { 0o555 } else { 0o444 };
    std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | add))?;
    if meta.is_dir() {
        for entry in std::fs::read_dir(dir)? {
            readable(&entry?.path())?;
        }
    }
    Ok(())
}

impl Repos {
    /// Make `n`'s applied repo with one commit of `files` on `main`
    /// (tagged `tag` if given) and clone it as its proposed repo. Refused
    /// if either repo exists. Answers the commit's sha.
    pub async fn seed(
        &self,
        n: &Ident,
        files: &[(String, Vec<u8>)],
        message: &str,
        tag: Option<&str>,
    ) -> Result<String, RepoError> {
        if self.has_any(n) {
            return Err(RepoError::State(format!(
                "agent {n} already has a config repo"
            )));
        }
        let applied = self.applied(n);
        let work = self.state_dir.join("build").join(format!("seed-{n}"));
        let _ = std::fs::remove_dir_all(&work);
        for (path, bytes) in files {
            let file = work.join(path);
            if let Some(dir) = file.parent() {
                std::fs::create_dir_all(dir).map_err(Self::io(dir))?;
            }
            std::fs::write(&file, bytes).map_err(Self::io(&file))?;
        }
        let result = self.seed_from(n, &applied, &work, message, tag).await;
        let _ = std::fs::remove_dir_all(&work);
        if result.is_err() {
            let _ = std::fs::remove_dir_all(&applied);
            let _ = std::fs::remove_dir_all(self.proposed(n));
        }
        result
    }

    async fn seed_from(
        &self,
        n: &Ident,
        applied: &Path,
        work: &Path,
        message: &str,
        tag: Option<&str>,
    ) -> Result<String, RepoError> {
        if let Some(parent) = applied.parent() {
            std::fs::create_dir_all(parent).map_err(Self::io(parent))?;
        }
        self.ensure_home()?;
        let applied_arg = self.arg(applied)?;
        let shared = format!("--shared={APPLIED_MODE}");
        let init =
            super::git::safe_args(&["init", "--quiet", "--bare", &shared, "--", &applied_arg]);
        self.env.run("init", &self.git, &init, None).await?;
        let tree = format!("--work-tree={}", self.arg(work)?);
        self.in_applied(n, "add", &[&tree, "add", "--all", "--", "."])
            .await?;
        self.in_applied(n, "commit", &[&tree, "commit", "--quiet", "-m", message])
            .await?;
        let _ = std::fs::remove_file(applied.join("index"));
        let sha = self.rev(n, "refs/heads/main").await?;
        if let Some(tag) = tag {
            self.tag(n, tag, &sha, None).await?;
        }
        let proposed = self.proposed(n);
        if let Some(parent) = proposed.parent() {
            std::fs::create_dir_all(parent).map_err(Self::io(parent))?;
        }
        let clone = super::git::safe_args(&[
            "clone",
            "--quiet",
            "--no-local",
            "--no-hardlinks",
            "--",
            &applied_arg,
            &self.arg(&proposed)?,
        ]);
        self.env.run("clone", &self.git, &clone, None).await?;
        let origin = format!("{MANAGER_APPLIED_DIR}/{n}.git");
        let dir = format!("--git-dir={}", self.arg(&proposed.join(".git"))?);
        for (key, value) in [
            ("remote.origin.url", origin.as_str()),
            // What the manager writes (in its container, as its user)
            // stays readable by the sandboxed upload side, a dynamic user.
            ("core.sharedRepository", "world"),
        ] {
            let set = super::git::safe_args(&[&dir, "config", key, value]);
            self.env.run("config", &self.git, &set, None).await?;
        }
        readable(&proposed.join(".git")).map_err(Self::io(&proposed))?;
        readable(applied).map_err(Self::io(applied))?;
        Ok(sha)
    }

    /// The full sha `rev` names in `n`'s applied repo.
    pub async fn rev(&self, n: &Ident, rev: &str) -> Result<String, RepoError> {
        let spec = format!("{rev}^{{commit}}");
        let out = self
            .in_applied(
                n,
                "rev-parse",
                &["rev-parse", "--verify", "--end-of-options", &spec],
            )
            .await?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// Tag `sha` as `name` in `n`'s applied repo: annotated with `note` if
    /// given, else lightweight. An existing tag of that name is replaced.
    pub async fn tag(
        &self,
        n: &Ident,
        name: &str,
        sha: &str,
        note: Option<&str>,
    ) -> Result<(), RepoError> {
        match note {
            Some(note) => {
                let msg = if note.trim().is_empty() { name } else { note };
                self.in_applied(n, "tag", &["tag", "-f", "-a", "-m", msg, "--", name, sha])
                    .await?
            }
            None => {
                let r = format!("refs/tags/{name}");
                self.in_applied(n, "update-ref", &["update-ref", &r, sha])
                    .await?
            }
        };
        Ok(())
    }

    /// Move `main` of `n`'s applied repo to `sha`, only if it is at `old`
    /// now (a fast-forward the caller checked).
    pub async fn set_main(&self, n: &Ident, sha: &str, old: &str) -> Result<(), RepoError> {
        self.in_applied(
            n,
            "update-ref",
            &["update-ref", "refs/heads/main", sha, old],
        )
        .await?;
        Ok(())
    }

    /// A new commit on top of `main` whose tree is `rev`'s (a rollback).
    pub async fn commit_tree_of(
        &self,
        n: &Ident,
        rev: &str,
        message: &str,
    ) -> Result<String, RepoError> {
        let tree = format!("{rev}^{{tree}}");
        let out = self
            .in_applied(
                n,
                "commit-tree",
                &["commit-tree", "-p", "refs/heads/main", "-m", message, &tree],
            )
            .await?;
        Ok(String::from_utf8_lossy(&out).trim().to_owned())
    }

    /// Does tag `name` exist in `n`'s applied repo?
    pub async fn has_tag(&self, n: &Ident, name: &str) -> Result<bool, RepoError> {
        let r = format!("refs/tags/{name}");
        let dir = format!("--git-dir={}", self.arg(&self.applied(n))?);
        let args = super::git::safe_args(&[&dir, "show-ref", "--verify", "--quiet", &r]);
        self.ensure_home()?;
        Ok(self.env.run_yes_no("show-ref", &self.git, &args).await?)
    }

    /// Every entry of commit `sha`'s tree.
    pub async fn tree(&self, n: &Ident, sha: &str) -> Result<Vec<TreeEntry>, RepoError> {
        let out = self
            .in_applied(
                n,
                "ls-tree",
                &["ls-tree", "-r", "-z", "--long", "--full-tree", sha],
            )
            .await?;
        parse_ls_tree(&out).map_err(|e| RepoError::State(e.to_string()))
    }

    /// The bytes of blob `object`.
    pub async fn blob(&self, n: &Ident, object: &str) -> Result<Vec<u8>, RepoError> {
        self.in_applied(n, "cat-file", &["cat-file", "blob", object])
            .await
    }

    /// Does `sha` descend from (or equal) `main` of `n`'s applied repo?
    pub async fn descends_from_main(&self, n: &Ident, sha: &str) -> Result<bool, RepoError> {
        let dir = format!("--git-dir={}", self.arg(&self.applied(n))?);
        let args =
            super::git::safe_args(&[&dir, "merge-base", "--is-ancestor", "refs/heads/main", sha]);
        self.ensure_home()?;
        Ok(self.env.run_yes_no("merge-base", &self.git, &args).await?)
    }

    /// Does `n`'s applied repo hold object `sha` (any kind)?
    pub async fn has_object(&self, n: &Ident, sha: &str) -> Result<bool, RepoError> {
        let dir = format!("--git-dir={}", self.arg(&self.applied(n))?);
        let args = super::git::safe_args(&[&dir, "cat-file", "-e", sha]);
        self.ensure_home()?;
        let out = self.env.run_yes_no("cat-file", &self.git, &args).await;
        Ok(out.unwrap_or(false))
    }

    /// What `to` changes against `from` in `n`'s applied repo: the stat and
    /// summary, the patch (at most `cap` bytes, then cut), and the entries
    /// to flag (binary files, symlinks). No external diff, no textconv, no
    /// attributes.
    pub async fn diff(
        &self,
        n: &Ident,
        from: &str,
        to: &str,
        cap: usize,
    ) -> Result<(String, String, bool, Vec<String>), RepoError> {
        const PLAIN: &[&str] = &[
            "-c",
            "core.attributesFile=/dev/null",
            "-c",
            "attr.tree=",
            "-c",
            "diff.external=",
            "diff",
            "--no-ext-diff",
            "--no-textconv",
            "--no-color",
        ];
        let with = |extra: &[&'static str]| {
            let mut args: Vec<&str> = PLAIN.to_vec();
            args.extend_from_slice(extra);
            args.extend_from_slice(&[from, to, "--"]);
            args
        };
        let text = |b: Vec<u8>| String::from_utf8_lossy(&b).into_owned();
        let stat = text(
            self.in_applied(n, "diff", &with(&["--stat", "--summary"]))
                .await?,
        );
        let mut patch = self.in_applied(n, "diff", &with(&["-M"])).await?;
        let truncated = patch.len() > cap;
        patch.truncate(cap);
        let raw = self.in_applied(n, "diff", &with(&["--raw", "-z"])).await?;
        let numstat = self
            .in_applied(n, "diff", &with(&["--numstat", "-z"]))
            .await?;
        let mut flagged = Vec::new();
        let mut fields = raw.split(|b| *b == 0).filter(|f| !f.is_empty());
        while let Some(head) = fields.next() {
            let head = String::from_utf8_lossy(head);
            let Some(path) = fields.next() else { break };
            if head.starts_with(':') && head.split(' ').take(2).any(|m| m.ends_with("120000")) {
                flagged.push(format!("symlink {}", String::from_utf8_lossy(path)));
            }
            if head.ends_with('R') || head.contains(" R") || head.contains(" C") {
                let _ = fields.next();
            }
        }
        for record in numstat.split(|b| *b == 0) {
            if let Some(path) = record.strip_prefix(b"-\t-\t") {
                flagged.push(format!("binary {}", String::from_utf8_lossy(path)));
            }
        }
        Ok((stat, text(patch), truncated, flagged))
    }
}
