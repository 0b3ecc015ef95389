//! A validated commit's tree written out into a hive-owned directory (the
//! hive never builds in the proposed repo), and its Claude Code files
//! installed into an agent's working directory.
//!
//! Decisions:
//! - The tree is read with one `git cat-file --batch` in the applied repo
//!   and written by this file: every directory is made here, every file is
//!   created new (`create_new`), so nothing in the destination is followed.
//!   Rejected: `git checkout --work-tree` (an index, attributes, filters)
//!   and `git archive | tar` (a second program deciding paths).
//! - Installing into the agent's working directory (a directory the agent
//!   writes) happens only while its container is stopped (the caller's
//!   rule), and removes what is there first without following it: a
//!   symlink the agent planted as `.claude` is removed, not written through.

use std::io::Write as _;
use std::os::unix::fs::{OpenOptionsExt as _, PermissionsExt as _};
use std::path::Path;

use super::{RepoError, Repos};
use crate::hive::proposal::EntryKind;
use crate::wire::ident::Ident;

/// What the hive installs from a config into the agent's working directory.
pub const CLAUDE_FILES: &[&str] = &["CLAUDE.md", ".claude"];

impl Repos {
    /// Write commit `sha`'s tree (validated at submit) into `dest`, which
    /// must not exist.
    pub async fn export(&self, n: &Ident, sha: &str, dest: &Path) -> Result<(), RepoError> {
        let entries = self.tree(n, sha).await?;
        let input: String = entries.iter().map(|e| format!("{}\n", e.object)).collect();
        let out = self
            .in_applied_with(n, "cat-file", &["cat-file", "--batch"], Some(input))
            .await?;
        std::fs::create_dir_all(dest.parent().unwrap_or(dest)).map_err(Self::io(dest))?;
        std::fs::create_dir(dest).map_err(Self::io(dest))?;
        let mut rest: &[u8] = &out;
        for entry in &entries {
            let bad = || RepoError::State(format!("cannot read {} from git", entry.shown()));
            let nl = rest.iter().position(|b| *b == b'\n').ok_or_else(bad)?;
            let header = std::str::from_utf8(&rest[..nl]).map_err(|_| bad())?;
            let size: usize = header
                .rsplit(' ')
                .next()
                .and_then(|s| s.parse().ok())
                .ok_or_else(bad)?;
            let body = rest.get(nl + 1..nl + 1 + size).ok_or_else(bad)?;
            rest = rest.get(nl + 2 + size..).unwrap_or_default();
            let rel = std::str::from_utf8(&entry.path).map_err(|_| bad())?;
            let path = dest.join(rel);
            if let Some(dir) = path.parent() {
                std::fs::create_dir_all(dir).map_err(Self::io(dir))?;
            }
            match entry.kind {
                EntryKind::Symlink => {
                    use std::os::unix::ffi::OsStrExt as _;
                    let target = std::ffi::OsStr::from_bytes(body);
                    std::os::unix::fs::symlink(target, &path).map_err(Self::io(&path))?;
                }
                EntryKind::File | EntryKind::Executable => {
                    let executable = entry.kind == EntryKind::Executable;
                    create_file(&path, executable, body).map_err(Self::io(&path))?;
                }
                EntryKind::Gitlink | EntryKind::Other(_) => return Err(bad()),
            }
        }
        Ok(())
    }
}

/// Replace the Claude Code files of `workdir` with those of the exported
/// tree `tree` (a name the tree lacks is removed). The container must be
/// stopped.
pub fn install_claude_files(tree: &Path, workdir: &Path) -> Result<(), RepoError> {
    std::fs::create_dir_all(workdir).map_err(Repos::io(workdir))?;
    for name in CLAUDE_FILES {
        let target = workdir.join(name);
        match std::fs::symlink_metadata(&target) {
            Ok(m) if m.is_dir() => std::fs::remove_dir_all(&target),
            Ok(_) => std::fs::remove_file(&target),
            Err(_) => Ok(()),
        }
        .map_err(Repos::io(&target))?;
        let source = tree.join(name);
        if std::fs::symlink_metadata(&source).is_ok() {
            copy(&source, &target)?;
        }
    }
    Ok(())
}

/// Copy `src` to `dst` (new), directories recursively, symlinks as
/// symlinks, never following one.
fn copy(src: &Path, dst: &Path) -> Result<(), RepoError> {
    let meta = std::fs::symlink_metadata(src).map_err(Repos::io(src))?;
    if meta.is_symlink() {
        let target = std::fs::read_link(src).map_err(Repos::io(src))?;
        std::os::unix::fs::symlink(target, dst).map_err(Repos::io(dst))
    } else if meta.is_dir() {
        std::fs::create_dir(dst).map_err(Repos::io(dst))?;
        // Explicit modes: the daemon's umask (0077) must not hide the files
        // from the agent (its user reads them as `nobody`'s).
        std::fs::set_permissions(dst, std::fs::Permissions::from_mode(0o755))
            .map_err(Repos::io(dst))?;
        for entry in std::fs::read_dir(src).map_err(Repos::io(src))? {
            let entry = entry.map_err(Repos::io(src))?;
            copy(&entry.path(), &dst.join(entry.file_name()))?;
        }
        Ok(())
    } else {
        let bytes = std::fs::read(src).map_err(Repos::io(src))?;
        let executable = meta.permissions().mode() & 0o100 != 0;
        create_file(dst, executable, &bytes).map_err(Repos::io(dst))
    }
}

/// Create `path`, which must not exist yet, holding `body`, with mode 0755
/// or 0644 whatever the daemon's umask (its unit's is 0077).
fn create_file(path: &Path, executable: bool, body: &[u8]) -> std::io::Result<()> {
    let mode = if executable { 0o755 } else { 0o644 };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .mode(mode)
        .open(path)?;
    file.write_all(body)?;
    file.set_permissions(std::fs::Permissions::from_mode(mode))
}
