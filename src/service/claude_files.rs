//! The Claude Code files of a deployed config (`CLAUDE.md`, `.claude/`)
//! installed into the agent's working directory, its state directory:
//! a directory the agent writes, so everything in it is the agent's to
//! plant or swap.
//!
//! Decisions:
//! - **Only while the container is stopped**: the caller installs after a
//!   stop that ended (`deploy::switch_to` refuses a pending one), or
//!   before the container's first start.
//! - **By descriptor** ([`super::confined`]), so a process of the agent's
//!   still alive cannot lead the install out of the tree either: the
//!   state directory is opened with `O_NOFOLLOW`; what is there under each
//!   name is removed without following it (`unlinkat`; a directory with
//!   `remove_dir_all`, which opens it `O_NOFOLLOW` and removes beneath
//!   its descriptor); each directory is made with `mkdirat` (a new one:
//!   `EEXIST` fails), opened `O_NOFOLLOW | O_DIRECTORY` and chmod'ed on
//!   that descriptor; each file is created `O_CREAT | O_EXCL | O_NOFOLLOW
//!   | O_NONBLOCK` beneath it and chmod'ed on its own; a symlink of the
//!   tree is made with `symlinkat`, never followed. Rejected: making each
//!   path and then `chmod`/`open` by path (how it was): with `.claude`
//!   swapped for a link to `/etc` after its `mkdir`, the `chmod` and the
//!   new root-owned files landed in `/etc`.
//! - Explicit modes (0755 for directories and executables, 0644 for the
//!   rest) whatever the daemon's umask (its unit's is 0077): the agent's
//!   user reads them as the files of `nobody` (they stay the host root's,
//!   so the agent cannot change them in place).
//!
//! The tree is the hive's own export (`<state>/deployed/<n>/tree`), read
//! by path.

use std::ffi::OsStr;
use std::io::Write as _;
use std::os::fd::{AsFd, OwnedFd};
use std::os::unix::fs::PermissionsExt as _;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::{Mode, fchmod, mkdirat};
use nix::unistd::{UnlinkatFlags, symlinkat, unlinkat};

use super::{HiveError, confined};
use crate::repos::CLAUDE_FILES;

/// [`install`] on a blocking thread, off the reactor.
pub(super) async fn install_off_reactor(tree: &Path, workdir: &Path) -> Result<(), HiveError> {
    let (tree, workdir) = (tree.to_path_buf(), workdir.to_path_buf());
    tokio::task::spawn_blocking(move || install(&tree, &workdir))
        .await
        .map_err(|e| HiveError::Internal(format!("installing the Claude files: {e}")))?
}

/// Replace the Claude Code files of `workdir` with those of the exported
/// tree `tree` (a name the tree lacks is removed). The container must be
/// stopped.
pub(crate) fn install(tree: &Path, workdir: &Path) -> Result<(), HiveError> {
    std::fs::create_dir_all(workdir).map_err(|e| HiveError::io(workdir, e))?;
    let at = confined::open_dir(workdir).map_err(io(workdir))?;
    for name in CLAUDE_FILES {
        let target = workdir.join(name);
        remove(&at, name, &target)?;
        let source = tree.join(name);
        if std::fs::symlink_metadata(&source).is_ok() {
            copy(&source, &at, OsStr::new(name), &target)?;
        }
    }
    Ok(())
}

fn io(path: &Path) -> impl Fn(Errno) -> HiveError + '_ {
    move |e| HiveError::io(path, std::io::Error::from(e))
}

/// Remove `name` from `at` (`shown` is its path), not following it.
fn remove(at: &OwnedFd, name: &str, shown: &Path) -> Result<(), HiveError> {
    match unlinkat(at, name, UnlinkatFlags::NoRemoveDir) {
        Ok(()) | Err(Errno::ENOENT) => Ok(()),
        // std's removal opens it `O_NOFOLLOW` and works beneath that
        // descriptor (since Rust 1.58.1, CVE-2022-21658).
        Err(Errno::EISDIR) => std::fs::remove_dir_all(shown).map_err(|e| HiveError::io(shown, e)),
        Err(e) => Err(io(shown)(e)),
    }
}

/// Copy `src` to the new entry `name` of `at` (`shown` is its path):
/// directories recursively, symlinks as symlinks, never following one in
/// the destination.
fn copy(src: &Path, at: impl AsFd, name: &OsStr, shown: &Path) -> Result<(), HiveError> {
    let meta = std::fs::symlink_metadata(src).map_err(|e| HiveError::io(src, e))?;
    if meta.is_symlink() {
        let target = std::fs::read_link(src).map_err(|e| HiveError::io(src, e))?;
        symlinkat(&target, at, name).map_err(io(shown))
    } else if meta.is_dir() {
        let mode = Mode::from_bits_truncate(0o755);
        mkdirat(at.as_fd(), name, mode).map_err(io(shown))?;
        let dir = confined::subdir(at, name, None).map_err(io(shown))?;
        fchmod(&dir, mode).map_err(io(shown))?;
        for entry in std::fs::read_dir(src).map_err(|e| HiveError::io(src, e))? {
            let entry = entry.map_err(|e| HiveError::io(src, e))?;
            let child = entry.file_name();
            copy(&entry.path(), &dir, &child, &shown.join(&child))?;
        }
        Ok(())
    } else {
        let body = std::fs::read(src).map_err(|e| HiveError::io(src, e))?;
        let mode = if meta.permissions().mode() & 0o100 != 0 {
            0o755
        } else {
            0o644
        };
        let flags = OFlag::O_WRONLY | OFlag::O_CREAT | OFlag::O_EXCL;
        let fd = confined::file_at(at, name, flags, Mode::from_bits_truncate(mode))
            .map_err(io(shown))?;
        let mut file = std::fs::File::from(fd);
        file.write_all(&body)
            .and_then(|()| file.set_permissions(std::fs::Permissions::from_mode(mode)))
            .map_err(|e| HiveError::io(shown, e))
    }
}

#[cfg(test)]
#[path = "claude_files_tests.rs"]
mod tests;
