//! A validated commit's tree written out into a hive-owned directory (the
//! hive never builds in the proposed repo); the names of its Claude Code
//! files, which the service installs into an agent's working directory
//! (`service::claude_files`, by descriptor: that directory is the
//! agent's).
//!
//! Decisions:
//! - The tree is read with one `git cat-file --batch` in the applied repo
//!   and written by this file: every directory is made here, every file is
//!   created new (`create_new`), so nothing in the destination is followed.
//!   Rejected: `git checkout --work-tree` (an index, attributes, filters)
//!   and `git archive | tar` (a second program deciding paths).

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
