//! Reading one commit out of a proposed repo: resolving the sha the
//! manager gave, and fetching exactly that commit into the applied repo,
//! the upload side sandboxed (see the module docs of `repos`).
//!
//! git hands `--upload-pack` to `sh`, appending the repo's path quoted: the
//! one string of this module a shell reads is built here from fixed words
//! and checked plain paths, each single-quoted ([`quoted`]); nothing of the
//! request reaches it (the sha goes into the refspec, an argv element).

use super::git;
use super::{RepoError, Repos, Sandbox};
use crate::hive::proposal::incoming_ref;
use crate::wire::ident::Ident;

/// Config the upload side gets on its own command line (a transient unit
/// does not inherit the fetch's `-c` flags): it reads a repo owned by
/// someone else, runs no hook and fetches nothing lazily.
const UPLOAD_CONFIG: &[&str] = &[
    "safe.directory=*",
    "core.hooksPath=/dev/null",
    "core.fsmonitor=false",
    "protocol.allow=never",
    "uploadpack.allowFilter=false",
];

impl Repos {
    /// The launcher in front of a git that reads `n`'s proposed repo: the
    /// transient unit's `systemd-run` argv, or nothing.
    fn launcher(&self, n: &Ident) -> Result<Vec<String>, RepoError> {
        let Sandbox::TransientUnit { systemd_run } = &self.sandbox else {
            return Ok(Vec::new());
        };
        let run = self.arg(systemd_run)?;
        // The top directory, not its `.git`: see [`Repos::fetch`].
        let top = self.arg(&self.proposed(n))?;
        let state = self.arg(&self.state_dir)?;
        let mut argv = vec![run, "--quiet".into(), "--pipe".into(), "--wait".into()];
        argv.push("--collect".into());
        for p in [
            "DynamicUser=yes",
            "PrivateNetwork=yes",
            "ProtectSystem=strict",
            "ProtectHome=yes",
            "PrivateTmp=yes",
            "PrivateDevices=yes",
            "NoNewPrivileges=yes",
            "RuntimeMaxSec=120",
            &format!("TemporaryFileSystem={state}:ro"),
            &format!("BindReadOnlyPaths={top}"),
        ] {
            argv.push("-p".into());
            argv.push(p.to_owned());
        }
        for e in [
            "GIT_CONFIG_NOSYSTEM=1",
            "GIT_CONFIG_GLOBAL=/dev/null",
            "GIT_NO_LAZY_FETCH=1",
            "HOME=/nonexistent",
        ] {
            argv.push(format!("--setenv={e}"));
        }
        argv.push("--".into());
        Ok(argv)
    }

    /// Let the sandboxed upload side, a dynamic user, into `n`'s proposed
    /// repo's top directory, which it is given whole ([`Repos::fetch`]):
    /// `a+rx` on that one directory (git made it under the daemon's umask:
    /// 0700; its `.git` is readable to all already, `seed`). By path: the
    /// entry is the hive's, in `proposed/`, which only root writes, so it
    /// is no link. Without the sandbox, nothing.
    fn let_upload_side_in(&self, n: &Ident) -> Result<(), RepoError> {
        use std::os::unix::fs::PermissionsExt as _;
        if self.sandbox == Sandbox::Off {
            return Ok(());
        }
        let top = self.proposed(n);
        let meta = std::fs::symlink_metadata(&top).map_err(Self::io(&top))?;
        let mode = meta.permissions().mode();
        if meta.is_dir() && mode & 0o555 != 0o555 {
            let open = std::fs::Permissions::from_mode(mode | 0o555);
            std::fs::set_permissions(&top, open).map_err(Self::io(&top))?;
        }
        Ok(())
    }

    /// git with the upload side's config, behind the launcher.
    pub(super) fn upload_side(&self, n: &Ident, args: &[&str]) -> Result<Vec<String>, RepoError> {
        let mut argv = self.launcher(n)?;
        argv.push(self.arg(&self.git)?);
        for kv in UPLOAD_CONFIG {
            argv.push("-c".into());
            argv.push((*kv).into());
        }
        argv.extend(args.iter().map(|s| (*s).to_owned()));
        Ok(argv)
    }

    /// The full sha of `commit_ref` (7-40 hex digits, checked by the
    /// caller) as `n`'s proposed repo knows it, read on the upload side.
    pub async fn resolve(&self, n: &Ident, commit_ref: &str) -> Result<String, RepoError> {
        self.check_layout(n)?;
        self.let_upload_side_in(n)?;
        let dir = format!("--git-dir={}", self.arg(&self.proposed(n).join(".git"))?);
        let spec = format!("{commit_ref}^{{commit}}");
        let argv = self.upload_side(
            n,
            &[
                &dir,
                "rev-parse",
                "--verify",
                "--quiet",
                "--end-of-options",
                &spec,
            ],
        )?;
        let Some((program, args)) = argv.split_first() else {
            return Err(not_found_early(n, commit_ref));
        };
        self.ensure_home()?;
        let not_found = || not_found_early(n, commit_ref);
        let out = match self
            .env
            .run("rev-parse", program.as_ref(), args, None)
            .await
        {
            Ok(out) => out,
            Err(git::GitError::Failed { .. }) => return Err(not_found()),
            Err(e) => return Err(e.into()),
        };
        let sha = String::from_utf8_lossy(&out).trim().to_owned();
        let full = sha.len() == 40 && sha.bytes().all(|b| b.is_ascii_hexdigit());
        let matches = sha.starts_with(&commit_ref.to_ascii_lowercase());
        (full && matches).then_some(sha).ok_or_else(not_found)
    }

    /// Fetch exactly commit `sha` (40 hex) of `n`'s proposed repo into its
    /// applied repo as `refs/hive/incoming/<id>`.
    ///
    /// The URL (and the sandbox's bind) is the repo's top directory
    /// `<state>/proposed/<n>`, an entry of the hive's in a directory only
    /// root writes, never its `.git`, which the manager can swap for a
    /// link after [`Repos::check_layout`]: root git would follow that link
    /// to whatever file it names (a bundle it then reads, a FIFO), and
    /// systemd would resolve the bind's source on the host. Given the top,
    /// root git sees a directory and hands it to the upload side, which
    /// finds `.git` inside its sandbox, where a link resolves in the
    /// sandbox's own namespace (the rest of the state directory hidden).
    pub async fn fetch(&self, n: &Ident, sha: &str, id: i64) -> Result<(), RepoError> {
        self.check_layout(n)?;
        self.let_upload_side_in(n)?;
        let source = self.arg(&self.proposed(n))?;
        let upload = quoted(&self.upload_side(n, &["upload-pack"])?)?;
        let upload_pack = format!("--upload-pack={upload}");
        let refspec = format!("+{sha}:{}", incoming_ref(id));
        self.in_applied(
            n,
            "fetch",
            &[
                "fetch",
                "--quiet",
                "--no-tags",
                "--no-recurse-submodules",
                "--no-write-fetch-head",
                "--no-auto-gc",
                "--no-auto-maintenance",
                &upload_pack,
                "--",
                &source,
                &refspec,
            ],
        )
        .await?;
        Ok(())
    }
}

/// `words` as one `sh` command line, each single-quoted; a word with a
/// quote or a control character is refused (none of ours has one).
pub(super) fn quoted(words: &[String]) -> Result<String, RepoError> {
    words
        .iter()
        .map(|w| {
            if w.contains('\'') || w.chars().any(char::is_control) {
                Err(RepoError::State(format!(
                    "{w:?} cannot be handed to git's upload-pack command"
                )))
            } else {
                Ok(format!("'{w}'"))
            }
        })
        .collect::<Result<Vec<_>, _>>()
        .map(|w| w.join(" "))
}

fn not_found_early(n: &Ident, commit_ref: &str) -> RepoError {
    RepoError::NoSuchCommit {
        agent: n.clone(),
        commit_ref: commit_ref.to_owned(),
    }
}
