//! Reminders: `remind` stores a row (and, with `file_path`, writes the long
//! message into the agent's own state directory); the timer delivers it
//! from `reminder` at its due time.
//!
//! Caps: a message kept inline may be [`REMINDER_INLINE_MAX`] (4 KiB); one
//! written to `file_path` may be [`REMINDER_FILE_MAX`] (1 MiB), and the
//! inbox then gets a short path reference instead. An agent may have
//! [`MAX_PENDING_REMINDERS`] (1000) undelivered reminders at a time.
//!
//! The file is written without trusting anything the agent controls: the
//! path is checked lexically (relative, no `..`), then walked one component
//! at a time from a descriptor of the state directory with `openat` and
//! `O_NOFOLLOW`, so a symlink planted anywhere on the way — even between a
//! check and the write — makes the open fail instead of leading out. The
//! final file must be a regular file with one link (a hard link to a file
//! elsewhere on the same filesystem is refused), and it is opened
//! `O_NONBLOCK` so a planted FIFO cannot hang the daemon (the walk and the
//! open are [`super::confined`]'s). Rejected:
//! canonicalize-and-compare-prefix, which races with a symlink swapped in
//! after the check.

use std::fs::File;
use std::io::Write;
use std::os::unix::fs::MetadataExt;
use std::path::Path;

use nix::errno::Errno;
use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::{Hive, HiveError, confined};
use crate::hive::agenda::{
    AgendaError, MAX_PENDING_REMINDERS, REMINDER_FILE_MAX, REMINDER_INLINE_MAX, check_len,
    check_relative_path, reminder_due,
};
use crate::store::{immediate, reminders};
use crate::wire::agenda::ReminderTiming;
use crate::wire::ident::Ident;

impl Hive {
    /// Schedule a reminder for `owner`; its id. With `file_path`, the
    /// message is written to that file inside the owner's state directory
    /// now, and the reminder carries a reference to it.
    pub async fn remind(
        &self,
        owner: &Ident,
        message: String,
        timing: ReminderTiming,
        file_path: Option<String>,
    ) -> Result<i64, HiveError> {
        let now = self.now();
        let due = reminder_due(&timing, now);
        let o = owner.to_string();
        if self
            .store()
            .read(move |c| reminders::count_pending(c, Some(&o)))
            .await?
            >= MAX_PENDING_REMINDERS
        {
            return Err(too_many(owner));
        }
        let stored = match file_path {
            None => {
                check_len(
                    "the reminder message",
                    &message,
                    REMINDER_INLINE_MAX,
                    "; pass file_path to keep a longer message in a file",
                )?;
                message
            }
            Some(path) => {
                check_len("the reminder file", &message, REMINDER_FILE_MAX, "")?;
                let parts: Vec<String> = check_relative_path(&path)?
                    .into_iter()
                    .map(str::to_owned)
                    .collect();
                let root = self.config().agent_state_dir(owner);
                let len = message.len();
                let p = path.clone();
                tokio::task::spawn_blocking(move || {
                    write_confined(&root, &parts, message.as_bytes(), &p)
                })
                .await
                .map_err(|e| HiveError::Internal(format!("reminder file task: {e}")))??;
                format!(
                    "Reminder: the full message ({len} bytes) is in the file {path:?} of your state directory."
                )
            }
        };
        let o = owner.to_string();
        // Checked again where it counts, in the inserting transaction; the
        // first check only spares writing a file that would be refused.
        let id = self
            .store()
            .run(move |c| {
                let tx = immediate(c)?;
                if reminders::count_pending(&tx, Some(&o))? >= MAX_PENDING_REMINDERS {
                    return Ok(None);
                }
                let id = reminders::insert(&tx, &o, &stored, due, now)?;
                tx.commit()?;
                Ok(Some(id))
            })
            .await?
            .ok_or_else(|| too_many(owner))?;
        tracing::info!(id, owner = %owner, due, "reminder scheduled");
        self.publish(owner).await;
        Ok(id)
    }
}

fn too_many(owner: &Ident) -> HiveError {
    AgendaError::TooMany {
        who: owner.to_string(),
        what: "pending reminders",
        max: MAX_PENDING_REMINDERS,
    }
    .into()
}

fn refused(path: &str, why: &'static str) -> HiveError {
    AgendaError::BadPath {
        path: path.to_owned(),
        why,
    }
    .into()
}

/// Write `contents` to `root/parts...`, creating directories on the way,
/// never following a symlink (see the module doc). `shown` is the path as
/// the agent gave it, for messages.
pub(crate) fn write_confined(
    root: &Path,
    parts: &[String],
    contents: &[u8],
    shown: &str,
) -> Result<(), HiveError> {
    let io = |e: Errno| HiveError::io(root.join(shown), std::io::Error::from(e));
    let Some((file, dirs)) = parts.split_last() else {
        return Err(refused(shown, "it names no file"));
    };
    std::fs::create_dir_all(root).map_err(|e| HiveError::io(root, e))?;
    let top = confined::open_dir(root).map_err(io)?;
    let dir = match confined::beneath(top, dirs, Some(Mode::from_bits_truncate(0o755))) {
        Ok(dir) => dir,
        Err((_, Errno::ELOOP | Errno::ENOTDIR)) => {
            return Err(refused(
                shown,
                "a directory on the way is a symbolic link or not a directory",
            ));
        }
        Err((_, e)) => return Err(io(e)),
    };
    let fd = match confined::file_at(
        &dir,
        file.as_str(),
        OFlag::O_WRONLY | OFlag::O_CREAT,
        Mode::from_bits_truncate(0o644),
    ) {
        Ok(fd) => fd,
        Err(Errno::ELOOP) => return Err(refused(shown, "it is a symbolic link")),
        Err(Errno::EISDIR) => return Err(refused(shown, "it is a directory")),
        Err(Errno::ENXIO) => return Err(refused(shown, "it is not a regular file")),
        Err(e) => return Err(io(e)),
    };
    let mut f = File::from(fd);
    let meta = f
        .metadata()
        .map_err(|e| HiveError::io(root.join(shown), e))?;
    if !meta.file_type().is_file() {
        return Err(refused(shown, "it is not a regular file"));
    }
    if meta.nlink() > 1 {
        return Err(refused(shown, "it has other hard links"));
    }
    // The agent's user (the owner of its state directory, in its own user
    // range) must read what its reminder points at.
    let owner = std::fs::metadata(root).map_err(|e| HiveError::io(root, e))?;
    if (owner.uid(), owner.gid()) != (meta.uid(), meta.gid()) {
        std::os::unix::fs::fchown(&f, Some(owner.uid()), Some(owner.gid()))
            .map_err(|e| HiveError::io(root.join(shown), e))?;
    }
    f.set_len(0)
        .and_then(|()| f.write_all(contents))
        .and_then(|()| f.sync_all())
        .map_err(|e| HiveError::io(root.join(shown), e))
}
