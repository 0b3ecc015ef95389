//! Each agent's disk quota (issue 44): one agent cannot fill the file
//! system its state lives on — the one `hive.db` usually shares — and so
//! cannot fail the hive's database writes and every other agent's.
//!
//! Decisions:
//! - **Project quotas** (XFS, or ext4 made with `-O quota,project`, both
//!   mounted with `prjquota`): one project per agent, its id the agent's
//!   user-range base ([`super::userns`]: stable across restarts and
//!   upgrades, unique among agents, recorded by the state directory's
//!   owner, never 0). The agent's state directory and, in the nspawn
//!   profile, its image directory (`/var/lib/machines/h-<n>`, where its
//!   root file system and its container journal are) get the project id
//!   and `PROJINHERIT`, so whatever is created in them later is charged
//!   to the agent whoever writes it (the agent, or the hive installing its
//!   Claude files); one limit, [`DiskLimits`], covers both where they
//!   share a file system. Rejected: **a fixed-size image** (a loop file
//!   per agent: its size is taken at once whether used or not, it needs a
//!   mount per start, and the state directory, bound from the host,
//!   would stay outside it); **btrfs qgroups** (machined's
//!   `SetImageLimit`): btrfs only, for the image only; **uid quotas**: the
//!   agent owns files under a whole range of ids (root and every user in
//!   its container), and the hive writes some as root.
//! - **The agent cannot leave its project**: Linux refuses a change of a
//!   file's project id, or of `PROJINHERIT`, from any user namespace but
//!   the host's (`fileattr_set_prepare`: `EINVAL`), and every process of
//!   an agent's container runs in the container's own, root included. A
//!   rename or hard link into a directory of another project is refused
//!   (`EXDEV`: `mv` copies, and the copy is charged). The kernel's
//!   `CAP_SYS_RESOURCE` override of a hard limit is checked in the host's
//!   namespace, which no agent process has.
//! - **Set by a helper systemd runs** (`hive-c0re set-quota`, hidden), in
//!   a transient oneshot before each start: the daemon's sandbox forbids
//!   `quotactl_fd` (`SystemCallFilter=@system-service`, which lacks
//!   `@privileged`) and sees `/var/lib/machines` read-only; loosening it
//!   for one call per start would give the daemon (and what it runs) every
//!   quota and more. The helper's unit writes only the directories it is
//!   given (`ReadWritePaths=`), built from a validated name. The pattern
//!   is [`super::inotify`]'s.
//! - **Existing files get the project once**: the helper walks the tree
//!   by descriptor, never following a link (directories opened
//!   `O_NOFOLLOW | O_DIRECTORY` relative to their parent, files
//!   `O_NOFOLLOW | O_NONBLOCK` and checked to be regular before the
//!   ioctl; symlinks, sockets and FIFOs keep their id, they hold no data
//!   blocks beyond a link's few bytes), the top directory last: a top
//!   already in the project with `PROJINHERIT` means the walk was done,
//!   and since then every new file inherited it, so later starts only set
//!   the limit again (idempotent). The container is stopped while it runs.
//! - **Whether a file system enforces project quota** is read by the
//!   daemon from `/proc/self/mountinfo` ([`support_in`]): the super
//!   options of the directory's mount name `prjquota` (what ext4 and XFS
//!   show when limits are enforced; XFS's accounting-only `pqnoenforce`
//!   is not enough). The daemon needs no privilege for it and the helper
//!   needs no way to report "unsupported" back. Where the agents' state is
//!   on a file system without it, the daemon warns once at start and logs
//!   each start as unlimited; with `agent_disk_quota_required` it refuses
//!   to start agents instead ([`crate::containers::DriverError::NoDiskQuota`]).
//!   A failing helper is a warning (the agent starts unlimited) or, with
//!   `_required`, the same refusal: as with the inotify caps, a host's
//!   fault takes no agent down unless the operator asked for it.
//! - Ids above 65,535 need XFS's `projid32bit` (the default of mkfs.xfs
//!   since 2013) and ext4's 32-bit project ids (always).

use std::os::fd::AsFd;
use std::os::unix::ffi::OsStrExt as _;
use std::os::unix::fs::MetadataExt as _;
use std::path::{Path, PathBuf};

use nix::dir::Dir;
use nix::errno::Errno;
use nix::fcntl::{AtFlags, OFlag, openat};
use nix::sys::stat::{Mode, SFlag, fstat, fstatat};
use zbus::zvariant::Value;

use super::Shared;
use super::quota_sys::{self, IfDqblk, QIF_LIMITS, XFLAG_PROJINHERIT};
use crate::containers::{DriverError, machine_name};
use crate::wire::ident::Ident;

/// How long the helper may take: a first walk of a large tree.
const HELPER_WAIT: std::time::Duration = std::time::Duration::from_secs(300);
/// The deepest tree the walk enters (one descriptor per level).
pub const MAX_DEPTH: usize = 128;
/// Where machined keeps the nspawn profile's images.
pub const MACHINES_DIR: &str = "/var/lib/machines";

/// One agent's limits: bytes and inodes, both hard.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct DiskLimits {
    pub bytes: u64,
    pub inodes: u64,
}

impl DiskLimits {
    /// The kernel's block limit: 1 KiB units, rounded up.
    pub fn blocks_kib(self) -> u64 {
        self.bytes.div_ceil(1024)
    }
}

/// What the driver does about disk quotas.
#[derive(Debug, Clone)]
pub struct DiskSettings {
    /// `None`: `agent_disk_quota` is `null` (no quota, no warning).
    pub limits: Option<DiskLimits>,
    /// Refuse to start an agent whose state cannot be held to its quota.
    pub required: bool,
    /// The binary whose `set-quota` sets them.
    pub exe: PathBuf,
}

/// Whether a directory's file system holds project quotas.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Support {
    Enforced,
    /// Why not, as a sentence fragment.
    Unlimited(String),
}

/// Whether the mount of device `dev` (major, minor) in `mountinfo` (the
/// text of `/proc/self/mountinfo`) enforces project quota.
pub fn support_in(mountinfo: &str, dev: (u64, u64)) -> Support {
    let want = format!("{}:{}", dev.0, dev.1);
    for line in mountinfo.lines() {
        let Some((pre, post)) = line.split_once(" - ") else {
            continue;
        };
        if pre.split(' ').nth(2) != Some(want.as_str()) {
            continue;
        }
        let mut post = post.split(' ');
        let fstype = post.next().unwrap_or("");
        let options = post.nth(1).unwrap_or("");
        if !matches!(fstype, "ext4" | "xfs") {
            return Support::Unlimited(format!("{fstype} has no project quota"));
        }
        if options.split(',').any(|o| o == "prjquota") {
            return Support::Enforced;
        }
        let how = if fstype == "ext4" {
            "made with -O quota,project and mounted with -o prjquota"
        } else {
            "mounted with -o prjquota"
        };
        return Support::Unlimited(format!(
            "{fstype} mounted without prjquota (it must be {how})"
        ));
    }
    Support::Unlimited(format!("no mount of device {want} in /proc/self/mountinfo"))
}

/// [`support_in`] for `dir` (or, missing, its nearest existing ancestor).
pub fn probe(dir: &Path) -> Support {
    let meta = dir
        .ancestors()
        .find_map(|d| std::fs::metadata(d).ok().filter(std::fs::Metadata::is_dir));
    let Some(meta) = meta else {
        return Support::Unlimited(format!("{} cannot be read", dir.display()));
    };
    let dev = meta.dev();
    match std::fs::read_to_string("/proc/self/mountinfo") {
        Ok(text) => support_in(
            &text,
            (nix::sys::stat::major(dev), nix::sys::stat::minor(dev)),
        ),
        Err(e) => Support::Unlimited(format!("/proc/self/mountinfo cannot be read: {e}")),
    }
}

/// What to warn about at start (with a quota configured): the agents'
/// directory `agents` is on a file system without project quota.
pub fn check_host(agents: &Path, required: bool) -> Option<String> {
    match probe(agents) {
        Support::Enforced => None,
        Support::Unlimited(why) if required => Some(format!(
            "agents' state in {} is on a file system without project quota ({why}); \
             agent_disk_quota_required is set, so no agent will start until it has one",
            agents.display()
        )),
        Support::Unlimited(why) => Some(format!(
            "agents' state in {} is on a file system without project quota ({why}): \
             agent_disk_quota does not hold and every agent's disk use is unlimited, so one \
             agent can fill the disk the hive's database may share; see the book's security \
             page, or set agent_disk_quota_required to refuse such starts",
            agents.display()
        )),
    }
}

/// The helper's transient unit (one per machine).
pub fn helper_unit(machine: &str) -> String {
    format!("hive-c0re-quota-{machine}.service")
}

/// The helper's argv: `hive-c0re set-quota` (hidden).
pub fn helper_argv(exe: &str, project: u32, limits: DiskLimits, dirs: &[PathBuf]) -> Vec<String> {
    let mut argv = vec![
        exe.to_owned(),
        "set-quota".to_owned(),
        "--project".to_owned(),
        project.to_string(),
        "--bytes".to_owned(),
        limits.bytes.to_string(),
        "--inodes".to_owned(),
        limits.inodes.to_string(),
    ];
    for dir in dirs {
        argv.push("--dir".to_owned());
        argv.push(dir.display().to_string());
    }
    argv
}

/// The helper's unit: a oneshot, collected even when it failed, with no
/// network and the file system read-only but for the directories it
/// sets.
pub fn transient_properties(
    exe: &str,
    argv: Vec<String>,
    machine: &str,
    dirs: &[PathBuf],
) -> Vec<(&'static str, Value<'static>)> {
    let writable: Vec<String> = dirs.iter().map(|d| d.display().to_string()).collect();
    vec![
        (
            "Description",
            Value::from(format!("hive-c0re: disk quota of {machine}")),
        ),
        ("Type", Value::from("oneshot")),
        ("CollectMode", Value::from("inactive-or-failed")),
        (
            "ExecStart",
            Value::from(vec![(exe.to_owned(), argv, false)]),
        ),
        ("ProtectSystem", Value::from("strict")),
        ("ReadWritePaths", Value::from(writable)),
        ("ProtectHome", Value::from("yes")),
        ("PrivateNetwork", Value::from(true)),
        ("PrivateTmp", Value::from(true)),
        ("NoNewPrivileges", Value::from(true)),
    ]
}

/// Why the helper could not hold a directory to its project's limits.
#[derive(Debug, thiserror::Error)]
pub enum QuotaError {
    #[error("{path}: {errno}")]
    Io { path: PathBuf, errno: Errno },
    #[error("{path}: cannot set its project id: {errno}")]
    Project { path: PathBuf, errno: Errno },
    #[error("{path}: nested deeper than {MAX_DEPTH} levels")]
    TooDeep { path: PathBuf },
    #[error(
        "{path}: the file system refused project {project}'s limits ({errno}): is it \
         mounted with prjquota?"
    )]
    Limit {
        path: PathBuf,
        project: u32,
        errno: Errno,
    },
    #[error("{path}: project {project} reads limits {read:?} after setting {wrote:?}")]
    NotTaken {
        path: PathBuf,
        project: u32,
        wrote: (u64, u64),
        read: (u64, u64),
    },
}

/// What one directory's project uses after the limits are set.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Usage {
    pub bytes: u64,
    pub inodes: u64,
    /// Whether the tree was walked (the first time) or only the limits set.
    pub walked: bool,
}

/// `hive-c0re set-quota`: put each of `dirs` in `project` (once) and set
/// the project's limits on each one's file system; the usage read back.
pub fn apply(dirs: &[PathBuf], project: u32, limits: DiskLimits) -> Result<Vec<Usage>, QuotaError> {
    let mut out = Vec::new();
    for dir in dirs {
        let top = Dir::open(dir.as_path(), dir_flags(), Mode::empty()).map_err(io(dir))?;
        let attr = quota_sys::get_xattr(top.as_fd()).map_err(project_err(dir))?;
        let done = attr.projid == project && attr.xflags & XFLAG_PROJINHERIT != 0;
        if !done {
            walk(top, dir, project, 0)?;
        }
        let top = Dir::open(dir.as_path(), dir_flags(), Mode::empty()).map_err(io(dir))?;
        let wanted = IfDqblk {
            bhardlimit: limits.blocks_kib(),
            ihardlimit: limits.inodes,
            valid: QIF_LIMITS,
            ..IfDqblk::default()
        };
        let limit = |errno| QuotaError::Limit {
            path: dir.clone(),
            project,
            errno,
        };
        quota_sys::set_project_limits(top.as_fd(), project, &wanted).map_err(limit)?;
        let read = quota_sys::project_quota(top.as_fd(), project).map_err(limit)?;
        if (read.bhardlimit, read.ihardlimit) != (wanted.bhardlimit, wanted.ihardlimit) {
            return Err(QuotaError::NotTaken {
                path: dir.clone(),
                project,
                wrote: (wanted.bhardlimit, wanted.ihardlimit),
                read: (read.bhardlimit, read.ihardlimit),
            });
        }
        out.push(Usage {
            bytes: read.curspace,
            inodes: read.curinodes,
            walked: !done,
        });
    }
    Ok(out)
}

fn dir_flags() -> OFlag {
    OFlag::O_RDONLY | OFlag::O_DIRECTORY | OFlag::O_NOFOLLOW | OFlag::O_CLOEXEC
}

fn io(path: &Path) -> impl Fn(Errno) -> QuotaError + '_ {
    move |errno| QuotaError::Io {
        path: path.to_path_buf(),
        errno,
    }
}

fn project_err(path: &Path) -> impl Fn(Errno) -> QuotaError + '_ {
    move |errno| QuotaError::Project {
        path: path.to_path_buf(),
        errno,
    }
}

/// Put the open file `fd` in `project` (directories also `PROJINHERIT`).
fn set_project(fd: std::os::fd::BorrowedFd<'_>, project: u32, dir: bool) -> nix::Result<()> {
    let mut attr = quota_sys::get_xattr(fd)?;
    let flags = if dir {
        attr.xflags | XFLAG_PROJINHERIT
    } else {
        attr.xflags
    };
    if attr.projid == project && attr.xflags == flags {
        return Ok(());
    }
    attr.projid = project;
    attr.xflags = flags;
    quota_sys::set_xattr(fd, &attr)
}

/// Post-order: every regular file and directory under `dir`, then `dir`.
fn walk(mut dir: Dir, path: &Path, project: u32, depth: usize) -> Result<(), QuotaError> {
    if depth > MAX_DEPTH {
        return Err(QuotaError::TooDeep {
            path: path.to_path_buf(),
        });
    }
    let names = super::handover::entry_names(&mut dir).map_err(io(path))?;
    for name in &names {
        let child = path.join(std::ffi::OsStr::from_bytes(name.to_bytes()));
        let st = match fstatat(dir.as_fd(), name.as_c_str(), AtFlags::AT_SYMLINK_NOFOLLOW) {
            Ok(st) => st,
            Err(Errno::ENOENT) => continue,
            Err(e) => return Err(io(&child)(e)),
        };
        let kind = SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT;
        if kind == SFlag::S_IFDIR {
            let sub = Dir::openat(dir.as_fd(), name.as_c_str(), dir_flags(), Mode::empty())
                .map_err(io(&child))?;
            walk(sub, &child, project, depth + 1)?;
        } else if kind == SFlag::S_IFREG {
            let flags = OFlag::O_RDONLY
                | OFlag::O_NOFOLLOW
                | OFlag::O_NONBLOCK
                | OFlag::O_NOCTTY
                | OFlag::O_CLOEXEC;
            let fd = match openat(dir.as_fd(), name.as_c_str(), flags, Mode::empty()) {
                Ok(fd) => fd,
                Err(Errno::ENOENT) => continue,
                Err(e) => return Err(io(&child)(e)),
            };
            // Swapped for something else since the look: leave it.
            let regular = fstat(fd.as_fd())
                .map(|st| SFlag::from_bits_truncate(st.st_mode) & SFlag::S_IFMT == SFlag::S_IFREG);
            if regular.map_err(io(&child))? {
                set_project(fd.as_fd(), project, false).map_err(project_err(&child))?;
            }
        }
    }
    set_project(dir.as_fd(), project, true).map_err(project_err(path))
}

impl Shared {
    /// Before a start (after [`super::userns::ensure`] gave `base`): hold
    /// the agent's state (and image) directory to its quota through the
    /// helper's transient unit. Unlimited where the file system cannot,
    /// said in the log; refused only when `agent_disk_quota_required`.
    pub(super) async fn limit_disk(
        &self,
        name: &Ident,
        base: u32,
        state_dir: PathBuf,
    ) -> Result<(), DriverError> {
        let Some(disk) = &self.settings.disk else {
            return Ok(());
        };
        let Some(limits) = disk.limits else {
            return Ok(());
        };
        let machine = machine_name(name);
        let image = (self.profile == crate::containers::Profile::Nspawn)
            .then(|| Path::new(MACHINES_DIR).join(&machine));
        let state = state_dir.clone();
        let probed = tokio::task::spawn_blocking(move || {
            let image = image
                .filter(|i| std::fs::symlink_metadata(i).is_ok_and(|m| m.is_dir()))
                .map(|i| {
                    let s = probe(&i);
                    (i, s)
                });
            (probe(&state), image)
        })
        .await
        .map_err(|e| DriverError::Setup(format!("probing the disk quota: {e}")))?;
        let refuse = |why: String| DriverError::NoDiskQuota {
            dir: state_dir.clone(),
            why,
        };
        let mut dirs = vec![state_dir.clone()];
        match probed {
            (Support::Unlimited(why), _) if disk.required => return Err(refuse(why)),
            (Support::Unlimited(why), _) => {
                tracing::info!(
                    agent = %name,
                    "{name}: disk unlimited: its state directory is on a file system without \
                     project quota ({why})"
                );
                return Ok(());
            }
            (Support::Enforced, Some((image, Support::Enforced))) => dirs.push(image),
            (Support::Enforced, _) => {}
        }
        match self
            .run_quota_helper(&machine, base, limits, &dirs, &disk.exe)
            .await
        {
            Ok(()) => {
                tracing::info!(
                    agent = %name,
                    bytes = limits.bytes,
                    inodes = limits.inodes,
                    "{name}: disk quota set (project {base})"
                );
                Ok(())
            }
            Err(why) if disk.required => Err(refuse(why)),
            Err(why) => {
                tracing::warn!(
                    agent = %name,
                    "{name}: its disk quota could not be set ({why}); it starts with its disk \
                     use unlimited"
                );
                Ok(())
            }
        }
    }

    async fn run_quota_helper(
        &self,
        machine: &str,
        project: u32,
        limits: DiskLimits,
        dirs: &[PathBuf],
        exe: &Path,
    ) -> Result<(), String> {
        let exe = exe
            .to_str()
            .ok_or_else(|| format!("the binary's path {exe:?} is not UTF-8"))?;
        let unit = helper_unit(machine);
        let argv = helper_argv(exe, project, limits, dirs);
        let props = transient_properties(exe, argv, machine, dirs);
        self.run_oneshot(&unit, &props, HELPER_WAIT).await
    }
}

#[cfg(test)]
#[path = "quota_tests.rs"]
mod tests;
