//! Paths under a directory an agent writes (its state directory, bound
//! into its container), reached by descriptor: the directory is opened
//! once, then each component relative to the one before with
//! `O_NOFOLLOW`, and files with `O_NOFOLLOW | O_NONBLOCK`. A symlink the
//! agent planted anywhere on the way, or swapped in between a look and a
//! use, fails the open (`ELOOP`, or `ENOTDIR` for a non-directory)
//! instead of leading the root daemon out of the tree, and a FIFO cannot
//! hang it. Used by every file the service reads or writes there: the
//! reminder files ([`super::reminders`]), the transcripts' reader
//! ([`super::transcripts`]) and the install of the Claude files
//! (`claude_files`). The config repos' hand-over walks the same way in
//! `systemd::dbus::handover` (a walk of a whole tree, with its own depth
//! cap).
//!
//! Rejected: looking at a path (`symlink_metadata`, canonicalize and
//! compare a prefix) and then using it by path: the agent swaps it in
//! between.

use std::os::fd::{AsFd, OwnedFd};
use std::path::Path;

use nix::NixPath;
use nix::errno::Errno;
use nix::fcntl::{OFlag, open, openat};
use nix::sys::stat::{Mode, mkdirat};

/// How each directory is opened: a directory, never a link.
fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

/// Open the directory `path` (its last component not followed: the
/// agent's state directory itself is an entry of the hive's).
pub(crate) fn open_dir(path: &Path) -> nix::Result<OwnedFd> {
    open(path, dir_flags(), Mode::empty())
}

/// The directory `name` in `at`, made first with `make`'s mode when it is
/// missing (one that exists is used as it is). A symlink there is
/// `ELOOP`, anything else but a directory `ENOTDIR`.
pub(crate) fn subdir<P: ?Sized + NixPath>(
    at: impl AsFd,
    name: &P,
    make: Option<Mode>,
) -> nix::Result<OwnedFd> {
    if let Some(mode) = make {
        match mkdirat(at.as_fd(), name, mode) {
            Ok(()) | Err(Errno::EEXIST) => {}
            Err(e) => return Err(e),
        }
    }
    openat(at, name, dir_flags(), Mode::empty())
}

/// Down `parts` from `at`, each a [`subdir`] (made when `make`): the last
/// one's descriptor, or the part it failed at and why.
pub(crate) fn beneath(
    at: OwnedFd,
    parts: &[String],
    make: Option<Mode>,
) -> Result<OwnedFd, (&str, Errno)> {
    let mut dir = at;
    for part in parts {
        dir = subdir(&dir, part.as_str(), make).map_err(|e| (part.as_str(), e))?;
    }
    Ok(dir)
}

/// Open the file `name` in `at` with `flags` (and `mode` if it is made),
/// never following a link there and never waiting on a FIFO.
pub(crate) fn file_at<P: ?Sized + NixPath>(
    at: impl AsFd,
    name: &P,
    flags: OFlag,
    mode: Mode,
) -> nix::Result<OwnedFd> {
    let flags = flags | OFlag::O_NOFOLLOW | OFlag::O_NONBLOCK | OFlag::O_CLOEXEC;
    openat(at, name, flags, mode)
}
