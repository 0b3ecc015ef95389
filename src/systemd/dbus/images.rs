//! The shared agent image (nspawn profile): one read-only `/usr` for every
//! agent, a small root of its own for each.
//!
//! `systemd/image/share` turns a built image (`systemd/image/build`) into
//! two parts: its `/usr` becomes a version in the store,
//! `<agent_images_dir>/<version>/usr` (with the package database that
//! describes it), and `<agent_images_dir>/current` (a symlink to the
//! version's directory name) names the newest; what is left (`/etc`,
//! `/var`, an empty `usr/`; about 2 MB) is the template
//! machined clones for each agent and nspawn shifts into its user range.
//! A container then binds its version's `usr` read-only on `/usr`
//! (`BindReadOnly=`, [`super::settings_files::Usr::Shared`]); the bind
//! line in its `.nspawn` file is the record of the version it runs.
//!
//! Decisions:
//! - **A read-only bind, not overlayfs.** The store's files stay the host
//!   root's, which is not in any agent's user range: inside, they belong to
//!   `nobody`, so neither the agent's user nor its container's root may
//!   write them, a setuid bit in them gives nothing (the kernel ignores one
//!   whose owner has no mapping), and the read-only flag set outside the
//!   container's user namespace is locked (no remount makes it writable).
//!   Every agent sees byte for byte the version it records, so a new version
//!   is a clean swap at its rebuild. Rejected: overlayfs with the image as
//!   the lower layer: a per-agent upper layer (copy-ups the agent could make
//!   diverge from the image, state a rebuild would have to merge), an
//!   overlay of a tree owned outside the range (copy-up permission checks
//!   then depend on the mounter's credentials), and `d_type` requirements on
//!   xfs; idmapped binds, which systemd 252 applies to an attached mount and
//!   Linux refuses (see [`super::settings_files::render_nspawn`]).
//! - **Versions are directories, never rewritten.** Sharing a new build adds
//!   a version and moves `current`; running agents keep the version they
//!   bound (a mount keeps its tree), a rebuild moves an agent to `current`.
//!   Only a prune removes a version, one no container uses ([`super::prune`]).
//!   Rejected: one `usr` replaced in place (every running agent's `/usr`
//!   would change under it).
//! - **The daemon only reads the store** but for a prune (root-owned, the
//!   operator's, like `/var/lib/machines`): `current`'s target must be a bare version name in
//!   the [`super::settings_files`] path alphabet, and its `usr` a directory.

use std::io;
use std::path::{Path, PathBuf};

use super::settings_files::{FileError, Usr};
use crate::containers::images::{AgentImage, Store, is_version_name};

/// The link naming the newest version.
pub const CURRENT: &str = "current";

/// The `usr` of the version `<dir>/current` names, `None` when the store
/// has no `current` (no shared image: agents run a full image or the
/// host's `/usr`).
pub fn current_usr(dir: &Path) -> Result<Option<PathBuf>, FileError> {
    let link = dir.join(CURRENT);
    let target = match std::fs::read_link(&link) {
        Ok(target) => target,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(None),
        Err(source) => return Err(FileError::Io { path: link, source }),
    };
    let version = target.to_str().unwrap_or_default();
    if !is_version_name(version) {
        return Err(FileError::Value {
            what: "the shared image store's link",
            value: link.display().to_string(),
            why: "it must name a version directory beside it (a-z, A-Z, 0-9, '.', '_', '-'); \
                  run systemd/image/share again",
        });
    }
    let usr = dir.join(version).join("usr");
    match std::fs::symlink_metadata(&usr) {
        Ok(m) if m.is_dir() => Ok(Some(usr)),
        _ => Err(FileError::Value {
            what: "the shared image version",
            value: usr.display().to_string(),
            why: "it is not a directory; run systemd/image/share again",
        }),
    }
}

/// The store at `dir`: its versions (directories with a version's name;
/// a link, a hidden `.part` of `share` or any other entry is no version)
/// and the one `current` names ([`current_usr`]). No store is an empty one.
pub fn read_store(dir: &Path) -> Result<Store, FileError> {
    let io = |source| FileError::Io {
        path: dir.to_path_buf(),
        source,
    };
    let entries = match std::fs::read_dir(dir) {
        Ok(entries) => entries,
        Err(e) if e.kind() == io::ErrorKind::NotFound => return Ok(Store::default()),
        Err(e) => return Err(io(e)),
    };
    let mut versions = Vec::new();
    for entry in entries {
        let entry = entry.map_err(io)?;
        let Some(name) = entry.file_name().to_str().map(str::to_owned) else {
            continue;
        };
        // `file_type` does not follow a link: a linked version is none.
        let dir = entry.file_type().map_err(io)?.is_dir();
        if dir && is_version_name(&name) {
            versions.push(name);
        }
    }
    versions.sort();
    let current = current_usr(dir)?.and_then(|usr| version_of(&usr));
    Ok(Store { versions, current })
}

/// The version whose `usr` is `usr` (`<store>/<version>/usr`).
fn version_of(usr: &Path) -> Option<String> {
    let name = usr.parent()?.file_name()?.to_str()?;
    is_version_name(name).then(|| name.to_owned())
}

/// The image an agent's `/usr` says it runs: a version of the store at
/// `dir` by name, one outside it by its directory's path.
pub fn agent_image(usr: &Usr, dir: &Path) -> AgentImage {
    match usr {
        Usr::Own => AgentImage::FullCopy,
        Usr::Host => AgentImage::Host,
        Usr::Shared(usr) => {
            let in_store = usr.parent().and_then(Path::parent) == Some(dir);
            match version_of(usr).filter(|_| in_store) {
                Some(version) => AgentImage::Shared(version),
                None => AgentImage::Shared(usr.parent().unwrap_or(usr).display().to_string()),
            }
        }
    }
}

/// The `/usr` an agent's settings file gets when it is written (create,
/// rebuild), from what its file says now (`None`: no file yet) and the
/// store at `dir`:
/// - an agent of the host's `/usr` keeps it (its template had no image
///   of its own: its `/etc` is not an image's);
/// - else the store's `current`, if any: a new agent, or a rebuild moving
///   a full-copy agent or one of an older version (its state, login and
///   inbox are in its state directory, untouched);
/// - else what the file says, or for a new agent `bind_host_usr`'s choice.
pub fn usr_for(written: Option<Usr>, dir: &Path, bind_host_usr: bool) -> Result<Usr, FileError> {
    if written == Some(Usr::Host) {
        return Ok(Usr::Host);
    }
    if let Some(usr) = current_usr(dir)? {
        return Ok(Usr::Shared(usr));
    }
    Ok(written.unwrap_or(if bind_host_usr { Usr::Host } else { Usr::Own }))
}

/// What moving from `now` to `next` changes, for the operator; `None`
/// when they are the same.
pub fn update_said(now: &Usr, next: &Usr) -> Option<String> {
    let version = |usr: &Path| {
        usr.parent().and_then(Path::file_name).map_or_else(
            || usr.display().to_string(),
            |v| v.to_string_lossy().into_owned(),
        )
    };
    match (now, next) {
        (a, b) if a == b => None,
        (Usr::Shared(a), Usr::Shared(b)) => Some(format!(
            "the shared agent image {} is newer than its {}",
            version(b),
            version(a)
        )),
        (Usr::Own, Usr::Shared(b)) => Some(format!(
            "a full copy of the agent image; a rebuild moves it onto the shared image {}",
            version(b)
        )),
        _ => None,
    }
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
