//! Telling systemd what the daemon is doing (`Type=notify`): READY=1 once it
//! serves, STATUS= lines along the way, STOPPING=1 on shutdown. Outside
//! systemd (`NOTIFY_SOCKET` unset) every call is a no-op.

use sd_notify::NotifyState;

fn send(states: &[NotifyState<'_>]) {
    if let Err(err) = sd_notify::notify(states) {
        tracing::warn!("cannot notify systemd: {err}");
    }
}

/// A `STATUS=` line for `systemctl status`.
pub fn status(text: &str) {
    tracing::info!("{text}");
    send(&[NotifyState::Status(text)]);
}

/// `READY=1` with a status line.
pub fn ready(text: &str) {
    tracing::info!("ready: {text}");
    send(&[NotifyState::Ready, NotifyState::Status(text)]);
}

/// `STOPPING=1` with a status line.
pub fn stopping(text: &str) {
    tracing::info!("stopping: {text}");
    send(&[NotifyState::Stopping, NotifyState::Status(text)]);
}

/// Whether systemd keeps fds for us: `$FDSTORE` (systemd ≥ 254 sets it to
/// `FileDescriptorStoreMax=`; our unit sets it too, for older systemd) is
/// a positive number and there is a `NOTIFY_SOCKET` to send them to.
pub fn fd_store_enabled() -> bool {
    fd_store_max().is_some_and(|m| m > 0) && std::env::var_os("NOTIFY_SOCKET").is_some()
}

/// How many fds systemd keeps for us (`$FDSTORE`), if it says.
pub fn fd_store_max() -> Option<u64> {
    std::env::var("FDSTORE").ok().and_then(|v| v.parse().ok())
}

/// `FDSTORE=1` + `FDNAME=name` with `fd`: systemd keeps a duplicate of it
/// across restarts and crashes of the daemon and hands it back in
/// `LISTEN_FDS`/`LISTEN_FDNAMES`.
pub fn store_fd(name: &str, fd: std::os::fd::BorrowedFd<'_>) -> std::io::Result<()> {
    send_with_fds(&format!("FDSTORE=1\nFDNAME={name}\n"), &[fd])
}

/// `FDSTOREREMOVE=1` + `FDNAME=name`: systemd closes its copy.
pub fn remove_fd(name: &str) -> std::io::Result<()> {
    send_with_fds(&format!("FDSTOREREMOVE=1\nFDNAME={name}\n"), &[])
}

/// One notify datagram with fds attached (`SCM_RIGHTS`), as
/// `sd_pid_notify_with_fds` sends it. Rejected alternative: sd-notify's
/// `fdstore` feature, one more crate for these few lines.
fn send_with_fds(text: &str, fds: &[std::os::fd::BorrowedFd<'_>]) -> std::io::Result<()> {
    use nix::sys::socket::{
        AddressFamily, ControlMessage, MsgFlags, SockFlag, SockType, UnixAddr, sendmsg, socket,
    };
    use std::os::fd::AsRawFd;
    use std::os::unix::ffi::OsStrExt;
    let Some(path) = std::env::var_os("NOTIFY_SOCKET") else {
        return Ok(());
    };
    let bytes = path.as_bytes();
    let addr = match bytes.strip_prefix(b"@") {
        Some(abstract_name) => UnixAddr::new_abstract(abstract_name)?,
        None => UnixAddr::new(bytes)?,
    };
    let sock = socket(
        AddressFamily::Unix,
        SockType::Datagram,
        SockFlag::SOCK_CLOEXEC,
        None,
    )?;
    let raw: Vec<i32> = fds.iter().map(AsRawFd::as_raw_fd).collect();
    let cmsgs = [ControlMessage::ScmRights(&raw)];
    let cmsgs: &[ControlMessage<'_>] = if raw.is_empty() { &[] } else { &cmsgs };
    let iov = [std::io::IoSlice::new(text.as_bytes())];
    sendmsg(
        sock.as_raw_fd(),
        &iov,
        cmsgs,
        MsgFlags::empty(),
        Some(&addr),
    )?;
    Ok(())
}
