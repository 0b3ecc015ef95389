//! Handing a directory tree to a container's user (nspawn profile): the
//! proposed config repos, which the manager writes from its container as
//! its user `agent` (host uid `base + AGENT_UID`), are made by the hive as
//! root (at seeding) and so must change hands: at seeding while the
//! manager runs, and at each start of the manager (a repo seeded while it
//! was down, or before its range existed). The same walk adopts an
//! agent's state and runtime directories into its range
//! ([`super::userns`]).
//!
//! Decisions:
//! - **Every entry not owned from the range gets the container's user**
//!   (uid and gid separately: the host's root, or any id outside the
//!   range, becomes `base + AGENT_UID`); what the container already owns
//!   (its `agent`, its root) keeps its owner.
//! - **Post-order**: a directory changes hands after everything in it. A
//!   directory the hive made is the host root's while it is walked, so
//!   the manager, running beside a seeding, cannot rename or replace what
//!   is in it under the walk.
//! - **By file descriptor, never following a link**: each directory is
//!   opened relative to its parent with `O_NOFOLLOW | O_DIRECTORY`, each
//!   entry is looked at with `fstatat(AT_SYMLINK_NOFOLLOW)` and changed
//!   with `fchownat(AT_SYMLINK_NOFOLLOW)` (lchown), a directory itself
//!   with `fchown` on the descriptor walked. So a directory the manager
//!   swaps for a symlink in its own tree (a restart walks while it still
//!   runs) fails the open instead of leading the walk out of the tree, and
//!   a symlink is changed itself, never its target. Rejected: a walk by
//!   path with `lchown` (between the look and `read_dir` a directory can
//!   become a link, and the walk would give away what the link names).
//! - At most [`MAX_DEPTH`] levels: a deeper tree fails (its open
//!   directories would be one descriptor each).

use std::ffi::{CStr, CString, OsStr};
use std::os::fd::{AsFd, BorrowedFd};
use std::os::unix::ffi::OsStrExt as _;
use std::path::{Path, PathBuf};

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag};
use nix::sys::stat::{FileStat, Mode, SFlag, fstat, fstatat};
use nix::unistd::{Gid, Uid, fchown, fchownat};

use super::settings_files::{AGENT_UID, FileError, USER_RANGE};
use crate::containers::RepoBinds;

/// The deepest tree handed over.
pub const MAX_DEPTH: usize = 64;

/// One change of owner: the entry, and the ids it gets.
pub(super) struct Change<'a> {
    /// The entry, by a descriptor: its directory and its name, or (a
    /// directory walked) its own descriptor.
    pub at: At<'a>,
    pub uid: u32,
    pub gid: u32,
}

/// An entry, reached without a path walk.
pub(super) enum At<'a> {
    /// `name` in the directory `dir` (not followed if it is a symlink).
    Name { dir: BorrowedFd<'a>, name: &'a CStr },
    /// The directory open as `fd`.
    Fd(BorrowedFd<'a>),
}

/// What the walk does with each change, given the entry's path (for the
/// tests): [`chown`] for real.
pub(super) type Apply<'f> = dyn FnMut(&Path, &Change<'_>) -> nix::Result<()> + 'f;

/// Apply one change: `fchownat(AT_SYMLINK_NOFOLLOW)` or `fchown`.
pub(super) fn chown(change: &Change<'_>) -> nix::Result<()> {
    let (uid, gid) = (
        Some(Uid::from_raw(change.uid)),
        Some(Gid::from_raw(change.gid)),
    );
    match change.at {
        At::Name { dir, name } => fchownat(dir, name, uid, gid, AtFlags::AT_SYMLINK_NOFOLLOW),
        At::Fd(fd) => fchown(fd, uid, gid),
    }
}

/// Give `dir` and everything in it to the user of the range at `base`
/// (see the module docs). `dir`'s own last component is not followed
/// either. Run as root.
pub fn hand_over(dir: &Path, base: u32) -> Result<(), FileError> {
    walk(dir, base, true, true, &mut |_, c| chown(c))
}

/// Give what is in `dir` (not `dir` itself, which stays its owner's) to
/// the user of the range at `base`; a missing `dir` is nothing to do.
pub fn hand_over_entries(dir: &Path, base: u32) -> Result<(), FileError> {
    match walk(dir, base, false, true, &mut |_, c| chown(c)) {
        Err(FileError::Io { source, .. }) if source.kind() == std::io::ErrorKind::NotFound => {
            // Only the top can be missing here: an entry that vanished
            // during the walk is skipped below.
            if std::fs::symlink_metadata(dir).is_err() {
                Ok(())
            } else {
                Err(FileError::Io {
                    path: dir.to_path_buf(),
                    source,
                })
            }
        }
        other => other,
    }
}

/// The walk, each change handed to `apply` in post-order (`top` last, if
/// `with_top`); `deep`: every level, else only the entries of `top` (a
/// directory among them changed as an entry, not entered).
pub(super) fn walk(
    top: &Path,
    base: u32,
    with_top: bool,
    deep: bool,
    apply: &mut Apply<'_>,
) -> Result<(), FileError> {
    let dir = Dir::open(top, dir_flags(), Mode::empty()).map_err(io(top))?;
    walk_dir(dir, top, base, with_top, deep, 0, apply)
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn io(path: &Path) -> impl Fn(Errno) -> FileError + '_ {
    move |e| FileError::Io {
        path: path.to_path_buf(),
        source: std::io::Error::from(e),
    }
}

/// The ids an entry owned by `st` gets, if they change.
fn new_ids(st: &FileStat, base: u32) -> Option<(u32, u32)> {
    let in_range = |id: u32| (base..base + USER_RANGE).contains(&id);
    let owner = base + AGENT_UID;
    let uid = if in_range(st.st_uid) {
        st.st_uid
    } else {
        owner
    };
    let gid = if in_range(st.st_gid) {
        st.st_gid
    } else {
        owner
    };
    (uid != st.st_uid || gid != st.st_gid).then_some((uid, gid))
}

/// The names in `dir` but `.` and `..`, as read (the walks of an agent's
/// tree by descriptor: this handover and the disk quota's).
pub(super) fn entry_names(dir: &mut Dir) -> Result<Vec<CString>, Errno> {
    let mut names = Vec::new();
    for entry in dir.iter() {
        let name = entry?.file_name().to_owned();
        if name.as_c_str() != c"." && name.as_c_str() != c".." {
            names.push(name);
        }
    }
    Ok(names)
}

fn walk_dir(
    mut dir: Dir,
    path: &Path,
    base: u32,
    with_self: bool,
    deep: bool,
    depth: usize,
    apply: &mut Apply<'_>,
) -> Result<(), FileError> {
    if depth > MAX_DEPTH {
        return Err(FileError::Value {
            what: "directory",
            value: path.display().to_string(),
            why: "it is nested deeper than the 64 levels a tree handed to a container may have",
        });
    }
    let mut names = entry_names(&mut dir).map_err(io(path))?;
    names.sort();
    for name in &names {
        let child: PathBuf = path.join(OsStr::from_bytes(name.to_bytes()));
        let st = match fstatat(dir.as_fd(), name.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::ENOENT) => continue,
            Err(e) => return Err(io(&child)(e)),
        };
        let is_dir = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFDIR;
        if is_dir && deep {
            let sub = Dir::openat(dir.as_fd(), name.as_c_str(), dir_flags(), Mode::empty())
                .map_err(io(&child))?;
            walk_dir(sub, &child, base, true, true, depth + 1, apply)?;
        } else if let Some((uid, gid)) = new_ids(&st, base) {
            let at = At::Name {
                dir: dir.as_fd(),
                name: name.as_c_str(),
            };
            let change = Change { at, uid, gid };
            match apply(&child, &change) {
                Ok(()) | Err(Errno::ENOENT) => {}
                Err(e) => return Err(io(&child)(e)),
            }
        }
    }
    if with_self {
        let st = fstat(dir.as_fd()).map_err(io(path))?;
        if let Some((uid, gid)) = new_ids(&st, base) {
            let change = Change {
                at: At::Fd(dir.as_fd()),
                uid,
                gid,
            };
            apply(path, &change).map_err(io(path))?;
        }
    }
    Ok(())
}

/// The manager's repo binds before its container starts: both sources
/// exist (nspawn refuses a missing one) and can be entered and listed by
/// the container's users (`a+rx`: the daemon's `UMask=0077` made them
/// `0700`), and every proposed repo is handed to the range at `base`
/// ([`hand_over_entries`]: a repo seeded while the manager was
/// down, or before its range existed). `proposed` itself stays root's.
pub(super) fn repo_binds_ready(repos: &RepoBinds, base: u32) -> Result<(), FileError> {
    use std::os::unix::fs::PermissionsExt as _;
    for dir in [&repos.proposed, &repos.applied] {
        let io = |source| FileError::Io {
            path: dir.clone(),
            source,
        };
        std::fs::create_dir_all(dir).map_err(io)?;
        let mode = std::fs::metadata(dir).map_err(io)?.permissions().mode();
        if mode & 0o555 != 0o555 {
            std::fs::set_permissions(dir, std::fs::Permissions::from_mode(mode | 0o555))
                .map_err(io)?;
        }
    }
    if nix::unistd::geteuid().is_root() {
        hand_over_entries(&repos.proposed, base)?;
    }
    Ok(())
}

#[cfg(test)]
#[path = "handover_tests.rs"]
mod tests;
