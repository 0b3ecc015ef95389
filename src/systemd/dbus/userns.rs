//! Each agent container's own user range (nspawn profile): the agent's
//! container runs in a user namespace whose uid/gid 0..65535 are the host's
//! `base..base+65535`, so no process of it is a host user, root inside
//! included.
//!
//! Decisions:
//! - **The hive picks the range and records it in the ownership of the
//!   agent's state directory** (owned by `base + AGENT_UID`). Stable across
//!   restarts, rebuilds and daemon upgrades with no table to migrate: the
//!   range of an agent is read back from its directory (as nspawn's own
//!   `PrivateUsers=pick` reads it back from the image's root). The first
//!   candidate is a hash of the name, then the next free slot; a slot is
//!   taken when another agent's state directory is owned from it. Rejected:
//!   nspawn's `pick`, whose range is only known once the container has
//!   started, too late for the bound directories and the sockets.
//! - **Ownership of the bound directories by a one-time chown**, done by the
//!   daemon before the container starts: everything in the state directory
//!   not yet owned from the range becomes the agent user's
//!   (`base + AGENT_UID`), so an agent that ran as root before the upgrade
//!   keeps its files, login and inbox, now as its unprivileged user. The
//!   runtime directory and its sockets go the same way (so only that user
//!   connects). The image itself is chowned by nspawn
//!   (`PrivateUsersOwnership=chown`). Rejected: idmapped binds (`:idmap`):
//!   systemd 252 idmaps an attached mount, which Linux refuses (EBUSY, see
//!   `settings_files::render_nspawn`), and tmpfs (`/run`) supports them only
//!   since Linux 6.3 (Debian 12 ships 6.1).
//! - The walk is the config repos' hand-over ([`super::handover`]): by
//!   descriptor, each directory opened `O_NOFOLLOW` relative to its parent
//!   and each entry changed with `fchownat(AT_SYMLINK_NOFOLLOW)`, so a
//!   directory the agent swaps for a link under the walk (a process of its
//!   container still alive, or one racing a start) fails the open instead
//!   of leading the walk out; uid and gid each move into the range unless
//!   already in it. It runs while the container is stopped and only until
//!   the top directory is in range. Rejected: a walk by path (`lstat`,
//!   then `read_dir` of what had become a link meanwhile).
//! - Ranges come from nspawn's container block (`0x00080000..0x6FFF0000`,
//!   systemd's UIDS-GIDS.md), 65536 ids each.

use std::os::unix::fs::MetadataExt;
use std::path::Path;
use std::sync::{Mutex, PoisonError};

use super::handover::{chown, walk};
use super::settings_files::{FileError, USER_RANGE};
use crate::wire::ident::Ident;
/// Ids per container.
const RANGE: u32 = USER_RANGE;
const FIRST: u32 = 0x0008_0000;
const END: u32 = 0x6FFF_0000;
const SLOTS: u32 = (END - FIRST) / RANGE;

/// Allocation and adoption one at a time: two spawns never take one slot.
static ALLOCATING: Mutex<()> = Mutex::new(());

fn io(path: &Path) -> impl Fn(std::io::Error) -> FileError + '_ {
    move |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    }
}

/// The range base a uid belongs to, if it is in the container block.
fn base_of(uid: u32) -> Option<u32> {
    (FIRST..END).contains(&uid).then_some(uid & !(RANGE - 1))
}

/// The range recorded by `dir`'s owner, if any.
pub fn recorded(dir: &Path) -> Option<u32> {
    std::fs::metadata(dir).ok().and_then(|m| base_of(m.uid()))
}

/// FNV-1a of the name: the first slot tried, the same on every host.
fn first_slot(name: &Ident) -> u32 {
    let mut h: u32 = 0x811c_9dc5;
    for b in name.as_str().bytes() {
        h ^= u32::from(b);
        h = h.wrapping_mul(0x0100_0193);
    }
    h % SLOTS
}

/// The bases recorded by the state directories beside `state_dir` (the
/// other agents'), skipping `state_dir` itself.
fn taken(state_dir: &Path) -> Vec<u32> {
    let Some(parent) = state_dir.parent() else {
        return Vec::new();
    };
    let Ok(entries) = std::fs::read_dir(parent) else {
        return Vec::new();
    };
    entries
        .flatten()
        .filter(|e| e.path() != state_dir)
        .filter_map(|e| e.metadata().ok().and_then(|m| base_of(m.uid())))
        .collect()
}

/// Agent `name`'s range: the recorded one, else a free one now recorded by
/// adopting `state_dir` and `runtime_dir` (see the module docs). Both
/// directories are created if missing. Call only while the container is
/// stopped.
pub fn ensure(name: &Ident, state_dir: &Path, runtime_dir: &Path) -> Result<u32, FileError> {
    let _one = ALLOCATING.lock().unwrap_or_else(PoisonError::into_inner);
    for dir in [state_dir, runtime_dir] {
        std::fs::create_dir_all(dir).map_err(io(dir))?;
    }
    let base = match recorded(state_dir) {
        Some(base) => base,
        None => {
            let taken = taken(state_dir);
            let start = first_slot(name);
            let slot = (0..SLOTS)
                .map(|i| (start + i) % SLOTS)
                .find(|s| !taken.contains(&(FIRST + s * RANGE)))
                .ok_or_else(|| FileError::Value {
                    what: "user range for agent",
                    value: name.to_string(),
                    why: "every container range is taken",
                })?;
            FIRST + slot * RANGE
        }
    };
    // A daemon that is not root (tests with a fake bus) cannot chown; it
    // could not start a container either.
    if !nix::unistd::geteuid().is_root() {
        return Ok(base);
    }
    // The runtime directory first and the state directory's top last: the
    // record exists only once everything below it is adopted.
    adopt(runtime_dir, base, false)?;
    adopt(state_dir, base, true)?;
    Ok(base)
}

/// Give `dir` and what is in it (all levels when `deep`, else one) to
/// the agent user of the range at `base`, leaving alone what is already
/// owned from the range; the top directory last. A `deep` adoption of a
/// top already in range is done.
fn adopt(dir: &Path, base: u32, deep: bool) -> Result<(), FileError> {
    let top = std::fs::symlink_metadata(dir).map_err(io(dir))?;
    if (base..base + RANGE).contains(&top.uid()) && deep {
        return Ok(());
    }
    walk(dir, base, true, deep, &mut |_, change| chown(change))
}

#[cfg(test)]
#[path = "userns_tests.rs"]
mod tests;
