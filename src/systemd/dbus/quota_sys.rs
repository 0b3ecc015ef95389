//! The four kernel calls of the per-agent disk quota ([`super::quota`]),
//! the crate's only `unsafe` for it: `FS_IOC_FSGETXATTR` and
//! `FS_IOC_FSSETXATTR` (a file's project id and its `PROJINHERIT` flag)
//! and `quotactl_fd(2)` `Q_GETQUOTA`/`Q_SETQUOTA` for a project
//! (`PRJQUOTA`). Neither `nix` (its `sys::quota` knows user and group
//! quotas only, through a device path) nor `libc` wraps them, so the
//! structures are declared here as the kernel's uapi headers lay them out
//! (`linux/fs.h`, `linux/quota.h`). Rejected: `quotactl(2)` with the
//! block device — the helper would have to find the device behind a
//! directory and open it by path; `quotactl_fd` (Linux 5.14, 2021) takes
//! the directory's own descriptor, the one the walk opened without
//! following links.

#![allow(unsafe_code)] // ioctl and syscall with kernel structures; see the SAFETY notes

use std::os::fd::{AsRawFd, BorrowedFd};

use nix::errno::Errno;
use nix::libc;

/// `struct fsxattr` (`linux/fs.h`), 28 bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct FsXattr {
    pub xflags: u32,
    pub extsize: u32,
    pub nextents: u32,
    pub projid: u32,
    pub cowextsize: u32,
    pub pad: [u8; 8],
}

/// `FS_XFLAG_PROJINHERIT`: what is created in the directory takes its
/// project id (and a rename into it from another project is refused with
/// `EXDEV`, so `mv` copies instead and the copy is charged).
pub const XFLAG_PROJINHERIT: u32 = 0x0000_0200;

/// `_IOR('X', 31, struct fsxattr)`.
const FS_IOC_FSGETXATTR: libc::c_ulong = 0x801c_581f;
/// `_IOW('X', 32, struct fsxattr)`.
const FS_IOC_FSSETXATTR: libc::c_ulong = 0x401c_5820;

/// `struct if_dqblk` (`linux/quota.h`): block limits in 1 KiB units
/// (`QIF_DQBLKSIZE`), space used in bytes.
#[repr(C)]
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct IfDqblk {
    pub bhardlimit: u64,
    pub bsoftlimit: u64,
    pub curspace: u64,
    pub ihardlimit: u64,
    pub isoftlimit: u64,
    pub curinodes: u64,
    pub btime: u64,
    pub itime: u64,
    pub valid: u32,
}

/// `QIF_BLIMITS | QIF_ILIMITS`: the call sets the four limits only.
pub const QIF_LIMITS: u32 = 1 | 4;
const PRJQUOTA: u32 = 2;
const Q_GETQUOTA: u32 = 0x80_0007;
const Q_SETQUOTA: u32 = 0x80_0008;

/// `QCMD(cmd, type)`.
pub const fn qcmd(cmd: u32, kind: u32) -> u32 {
    (cmd << 8) | (kind & 0xff)
}

/// A file's extended attributes (`FS_IOC_FSGETXATTR`).
pub fn get_xattr(fd: BorrowedFd<'_>) -> nix::Result<FsXattr> {
    let mut attr = FsXattr::default();
    // SAFETY: the request reads into a `struct fsxattr`, which `FsXattr`
    // lays out exactly (repr(C), 28 bytes); the pointer is to a live local
    // the kernel writes at most that many bytes of; `fd` is open for the
    // call's length.
    let rc = unsafe {
        libc::ioctl(
            fd.as_raw_fd(),
            FS_IOC_FSGETXATTR,
            std::ptr::from_mut(&mut attr),
        )
    };
    Errno::result(rc).map(|_| attr)
}

/// Set a file's extended attributes (`FS_IOC_FSSETXATTR`).
pub fn set_xattr(fd: BorrowedFd<'_>, attr: &FsXattr) -> nix::Result<()> {
    // SAFETY: the kernel only reads a `struct fsxattr` (28 bytes) from
    // the pointer, which is to a live `FsXattr` of that layout; `fd` is
    // open for the call's length.
    let rc = unsafe { libc::ioctl(fd.as_raw_fd(), FS_IOC_FSSETXATTR, std::ptr::from_ref(attr)) };
    Errno::result(rc).map(drop)
}

/// `quotactl_fd(fd, QCMD(cmd, PRJQUOTA), project, dqblk)`.
fn quotactl(fd: BorrowedFd<'_>, cmd: u32, project: u32, dqblk: *mut IfDqblk) -> nix::Result<()> {
    // SAFETY: `quotactl_fd(unsigned int fd, unsigned int cmd, qid_t id,
    // void *addr)`: for Q_GETQUOTA/Q_SETQUOTA `addr` is a `struct
    // if_dqblk` (72 bytes), which `IfDqblk` lays out (repr(C)); callers
    // pass a pointer to a live local. The fd stays open for the call.
    let rc = unsafe {
        libc::syscall(
            libc::SYS_quotactl_fd,
            fd.as_raw_fd(),
            qcmd(cmd, PRJQUOTA),
            project,
            dqblk,
        )
    };
    Errno::result(rc).map(drop)
}

/// Set project `project`'s limits on the file system of `fd`.
pub fn set_project_limits(fd: BorrowedFd<'_>, project: u32, limits: &IfDqblk) -> nix::Result<()> {
    let mut copy = *limits;
    quotactl(fd, Q_SETQUOTA, project, &raw mut copy)
}

/// Project `project`'s limits and usage on the file system of `fd`.
pub fn project_quota(fd: BorrowedFd<'_>, project: u32) -> nix::Result<IfDqblk> {
    let mut out = IfDqblk::default();
    quotactl(fd, Q_GETQUOTA, project, &raw mut out)?;
    Ok(out)
}
