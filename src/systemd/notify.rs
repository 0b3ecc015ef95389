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
