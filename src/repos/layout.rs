//! What a proposed repo must not have before anything is fetched from it,
//! whatever the sandbox: a way to make git read objects or files from
//! somewhere else (alternates, a `commondir`, a `.git` file or symlink,
//! git's own directories swapped for symlinks).
//!
//! Decision: look with `symlink_metadata` (never following a link) and
//! refuse; the sandbox is the second wall, for what changes between this
//! look and the fetch.

use std::path::Path;

use super::{RepoError, Repos};
use crate::wire::ident::Ident;

/// Files whose presence makes git read another repository's objects or
/// directory.
const REDIRECTS: &[&str] = &[
    "objects/info/alternates",
    "objects/info/http-alternates",
    "commondir",
    "gitdir",
];

/// Directories of `.git` that must be directories, not symlinks.
const DIRS: &[&str] = &["objects", "objects/info", "objects/pack", "refs", "info"];

impl Repos {
    /// Refuse `n`'s proposed repo if it could make a fetch read elsewhere.
    pub fn check_layout(&self, n: &Ident) -> Result<(), RepoError> {
        check(&self.proposed(n)).map_err(|why| RepoError::Refused {
            agent: n.clone(),
            why,
        })
    }
}

/// The rule, on a proposed repo's work tree at `top`.
pub(super) fn check(top: &Path) -> Result<(), String> {
    let kind = |p: &Path| std::fs::symlink_metadata(p).map(|m| m.file_type());
    match kind(top) {
        Ok(t) if t.is_dir() => {}
        Ok(_) => return Err("it is not a directory".into()),
        Err(_) => return Err("it does not exist".into()),
    }
    let dotgit = top.join(".git");
    match kind(&dotgit) {
        Ok(t) if t.is_symlink() => return Err("its .git is a symlink".into()),
        Ok(t) if t.is_file() => {
            return Err("its .git is a file (a link to another git directory)".into());
        }
        Ok(t) if t.is_dir() => {}
        Ok(_) => return Err("its .git is not a directory".into()),
        Err(_) => return Err("it has no .git directory".into()),
    }
    for rel in REDIRECTS {
        if kind(&dotgit.join(rel)).is_ok() {
            return Err(format!(
                ".git/{rel} exists: a proposed repo may not borrow another repository's objects"
            ));
        }
    }
    for rel in DIRS {
        match kind(&dotgit.join(rel)) {
            Ok(t) if t.is_symlink() => return Err(format!(".git/{rel} is a symlink")),
            Ok(t) if !t.is_dir() => return Err(format!(".git/{rel} is not a directory")),
            _ => {}
        }
    }
    Ok(())
}
