//! The signals host.sock's `signal` sends to a container. Re-exported by
//! [`super::host`].

use serde::{Deserialize, Serialize};

/// The signals `signal` sends, by their names without `SIG` (journalctl's
/// and systemd's spelling on the wire: `"TERM"`). A fixed list: every one
/// means something to a container's init (systemd, see systemd(1)
/// "Signals"): HUP reload, INT reboot (ctrl-alt-del), KILL end,
/// USR1 reconnect to D-Bus, USR2 dump state, TERM re-execute, CONT/STOP
/// resume/freeze, WINCH kbrequest. Left out: QUIT, ABRT and the other fault
/// signals, which systemd as PID 1 takes as its own crash (it freezes), and
/// real-time signals.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "UPPERCASE")]
pub enum Signal {
    Hup,
    Int,
    Kill,
    Usr1,
    Usr2,
    Term,
    Cont,
    Stop,
    Winch,
}

impl Signal {
    pub const ALL: &'static [Self] = &[
        Self::Hup,
        Self::Int,
        Self::Kill,
        Self::Usr1,
        Self::Usr2,
        Self::Term,
        Self::Cont,
        Self::Stop,
        Self::Winch,
    ];

    /// The name without `SIG`, as on the wire.
    pub fn name(self) -> &'static str {
        match self {
            Self::Hup => "HUP",
            Self::Int => "INT",
            Self::Kill => "KILL",
            Self::Usr1 => "USR1",
            Self::Usr2 => "USR2",
            Self::Term => "TERM",
            Self::Cont => "CONT",
            Self::Stop => "STOP",
            Self::Winch => "WINCH",
        }
    }

    /// Linux's number (asm-generic, the same on x86-64 and arm64; checked
    /// against libc's in the tests).
    pub fn number(self) -> i32 {
        match self {
            Self::Hup => 1,
            Self::Int => 2,
            Self::Kill => 9,
            Self::Usr1 => 10,
            Self::Usr2 => 12,
            Self::Term => 15,
            Self::Cont => 18,
            Self::Stop => 19,
            Self::Winch => 28,
        }
    }

    /// `TERM`, `SIGTERM`, `term`, `sigterm` or `15`.
    pub fn parse(text: &str) -> Option<Self> {
        let upper = text.to_ascii_uppercase();
        let bare = upper.strip_prefix("SIG").unwrap_or(&upper);
        Self::ALL
            .iter()
            .copied()
            .find(|s| s.name() == bare || s.number().to_string() == bare)
    }
}

#[cfg(test)]
#[path = "signal_tests.rs"]
mod tests;
