//! `hivectl image prune` on the nspawn profile's store ([`super::images`]):
//! remove the versions that no container's settings name and that are not
//! the newest.
//!
//! Decisions:
//! - **Kept when any `.nspawn` file names it**, not only the files of the
//!   agents the hive manages: every `*.nspawn` file in the settings
//!   directory (an installation's own container, a file this daemon did not
//!   write) is read as text, and a version whose directory's name appears
//!   in it as a path component (`/<version>/`, `/<version>:`, ...) is kept,
//!   whatever spelling of the store the file uses. A running container's
//!   file names the version it runs: the daemon rewrites an agent's file
//!   only while its container is stopped (a rebuild stops it first).
//!   Keeping too much is safe; removing a version in use is not.
//! - **Under the driver's image lock**, which every write of a `.nspawn`
//!   file holds from choosing its `/usr` ([`super::images::usr_for`]) to
//!   writing it: no spawn, start or rebuild begins to use a version between
//!   the check and its removal (the service holds its build queue too).
//! - **The newest is kept**: `current`'s version and any version whose
//!   directory is not older than it (`systemd/image/share` moves a new
//!   version into the store before it moves `current`; a prune in between
//!   must not take it). A store without `current` loses nothing.
//! - **Paths only from checked names, no link followed**: a version is an
//!   entry whose name [`is_version_name`] passed and that is a directory,
//!   not a link (checked again just before its removal, which refuses a
//!   link); `remove_dir_all` removes links inside it, never their targets.

use std::io;
use std::path::Path;
use std::time::SystemTime;

use super::images::{CURRENT, read_store};
use crate::containers::DriverError;
use crate::containers::images::is_version_name;

fn store_error(path: &Path, e: &io::Error) -> DriverError {
    let hint = if e.kind() == io::ErrorKind::ReadOnlyFilesystem {
        "; hive-c0re.service must list the store in ReadWritePaths= (the shipped unit \
         lists /var/lib/hive-images), then restart hive-c0re"
    } else {
        ""
    };
    DriverError::ImageStore(format!("{}: {e}{hint}", path.display()))
}

/// Whether `text` names `version` as a path component: `/<version>`
/// followed by anything but a character of a version's name.
pub fn mentions(text: &str, version: &str) -> bool {
    let needle = format!("/{version}");
    text.match_indices(&needle).any(|(at, _)| {
        let next = text[at + needle.len()..].bytes().next();
        !next.is_some_and(|b| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-'))
    })
}

/// The text of every `*.nspawn` file in `dir` (none: no directory).
fn settings_texts(dir: &Path) -> Result<Vec<String>, DriverError> {
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Vec::new()),
        Err(e) => return Err(store_error(dir, &e)),
    };
    let mut texts = Vec::new();
    for entry in entries {
        let path = entry.map_err(|e| store_error(dir, &e))?.path();
        if path.extension().is_some_and(|x| x == "nspawn") {
            texts.push(std::fs::read_to_string(&path).map_err(|e| store_error(&path, &e))?);
        }
    }
    Ok(texts)
}

fn modified(path: &Path) -> Result<SystemTime, DriverError> {
    std::fs::symlink_metadata(path)
        .and_then(|m| m.modified())
        .map_err(|e| store_error(path, &e))
}

/// The versions of the store at `dir` that a prune removes: not
/// `current`'s, not newer than it, named by no `*.nspawn` file in
/// `nspawn_dir`. By name.
pub fn prunable(dir: &Path, nspawn_dir: &Path) -> Result<Vec<String>, DriverError> {
    let store = read_store(dir).map_err(|e| DriverError::ImageStore(e.to_string()))?;
    let Some(current) = store.current else {
        return Ok(Vec::new());
    };
    let newest = modified(&dir.join(&current))?;
    let texts = settings_texts(nspawn_dir)?;
    let mut gone = Vec::new();
    for version in store.versions {
        let named = texts.iter().any(|t| mentions(t, &version));
        if version == current || version == CURRENT || named {
            continue;
        }
        if modified(&dir.join(&version))? < newest {
            gone.push(version);
        }
    }
    Ok(gone)
}

/// Remove the version `version` of the store at `dir`: a checked name, a
/// directory that is not a link.
pub fn remove(dir: &Path, version: &str) -> Result<(), DriverError> {
    if !is_version_name(version) || version == CURRENT {
        return Err(DriverError::ImageStore(format!(
            "{version:?} is not a version's name; nothing removed"
        )));
    }
    let path = dir.join(version);
    let meta = std::fs::symlink_metadata(&path).map_err(|e| store_error(&path, &e))?;
    if !meta.is_dir() {
        return Err(DriverError::ImageStore(format!(
            "{} is a link or not a directory; the hive removes only a version's own \
             directory, never what a link points to",
            path.display()
        )));
    }
    std::fs::remove_dir_all(&path).map_err(|e| store_error(&path, &e))
}

#[cfg(test)]
#[path = "prune_tests.rs"]
mod tests;
