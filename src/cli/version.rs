//! `hivectl version`: this hivectl's release and protocol, then the
//! daemon's (`podman version`, `incus version`): which side is older is the
//! first question when the two disagree.
//!
//! The client line is printed before the daemon is asked, so it is there
//! when the daemon cannot be reached (then the usual unreachable error and
//! exit status follow). A daemon older than the verb refuses it as an
//! unknown `cmd`: that is an answer to "which daemon is this?" — older
//! than this hivectl — so it is printed as such and the exit status is 0.
//! With `--json`, stdout is the daemon's line byte for byte, as for every
//! verb (the client's version is `hivectl --version`), and an older
//! daemon's refusal line also exits 0.

use super::roster::duration;
use super::table::clean;
use super::{Io, exit, refused};
use crate::client::Reply;
use crate::wire::codes::ErrorCode;
use crate::wire::host::{HostRequest, VERSION};
use crate::wire::version::DaemonVersion;

/// `client: hivectl 0.1.0 (protocol 1)`.
pub fn client_line() -> String {
    format!(
        "client: hivectl {} (protocol {VERSION})\n",
        env!("CARGO_PKG_VERSION")
    )
}

/// `daemon: hive-c0re 0.1.0 (protocol 1), driver systemd, profile nspawn,
/// up 3h 5m`. The daemon's words are cleaned: they reach a terminal.
pub fn daemon_line(v: &DaemonVersion) -> String {
    let up = duration(i64::try_from(v.uptime_secs).unwrap_or(i64::MAX));
    format!(
        "daemon: {} {} (protocol {}), driver {}, profile {}, up {up}\n",
        clean(&v.name),
        clean(&v.version),
        v.protocol,
        clean(&v.driver),
        clean(&v.profile),
    )
}

/// The line for a daemon that does not know `version`.
pub const OLDER_DAEMON: &str = "daemon: unknown (older than this hivectl)\n";

/// The line for a success without the answer's field (no daemon of this
/// project sends one; said rather than printing nothing).
const UNSAID: &str = "daemon: unknown (its answer carried no version)\n";

/// Whether `reply` is a daemon's refusal of `version` as a verb it does
/// not know: `bad_request` (or no code, from before codes) saying so —
/// `unknown cmd` since the verb list, serde's `unknown variant` before.
pub fn is_unknown_verb(reply: &Reply) -> bool {
    let r = &reply.response;
    let words = r.error.as_deref().unwrap_or("");
    !r.ok
        && matches!(r.code, None | Some(ErrorCode::BadRequest))
        && (words.contains("unknown cmd") || words.contains("unknown variant"))
}

pub(crate) fn run(mut io: Io<'_>) -> u8 {
    if !io.json
        && let Err(status) = io.emit(&client_line())
    {
        return status;
    }
    let reply = match io.call(&HostRequest::Version) {
        Ok(reply) => reply,
        Err(status) => return status,
    };
    let older = is_unknown_verb(&reply);
    let text = match (io.json, &reply.response.daemon) {
        (true, _) => format!("{}\n", reply.line),
        (false, _) if older => OLDER_DAEMON.to_owned(),
        (false, Some(daemon)) => daemon_line(daemon),
        (false, None) if reply.response.ok => UNSAID.to_owned(),
        (false, None) => String::new(),
    };
    if let Err(status) = io.emit(&text) {
        return status;
    }
    if reply.response.ok || older {
        exit::OK
    } else {
        refused(io.err, &reply)
    }
}

#[cfg(test)]
#[path = "version_tests.rs"]
mod tests;
