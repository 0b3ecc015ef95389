//! Idempotency keys of a turn's calls (issue 47, "nothing done twice"): a
//! call that acts ([`Request::keyed`]: a send, a question, a reminder, a
//! request for approval ...) made during a turn carries a key derived from
//! the turn and the call, and the daemon answers a repeat of the key with
//! the first answer (`service::replies`). A cut turn's resumed attempt that
//! makes the same call again makes it with the same key, so the message is
//! sent once.
//!
//! **The key** is SHA-256 of (the turn's id, the request as the socket gets
//! it, which names the tool's verb and its arguments in one canonical
//! order, and `n`: this is the n-th such identical call in this attempt),
//! cut to 32 hex digits. So the resumed attempt's first `send` of a body
//! repeats the cut attempt's first `send` of it; a second, deliberate
//! identical send in the same attempt is `n = 2`, another key, sent again;
//! another turn is another id. Rejected: a key from the tool call's id in
//! Claude's stream (a resumed attempt's calls get new ids), and a key from
//! the arguments alone (an identical message sent in two turns is two
//! messages).
//!
//! **The turn's id** is in the record of the turn in progress
//! ([`super::resume::TurnRecord::turn`]), made at the turn's first attempt
//! and kept by every attempt after it, a harness restart included.
//!
//! **The counts** start from zero at each attempt: the harness writes the
//! attempt's call log ([`CALLS_FILE`] in the state directory: a first line
//! `turn <id>`, then a line per keyed call made) before Claude starts, and
//! removes it when the turn ends. Every caller of the attempt counts in
//! that one file, under an exclusive `flock`: the `hyperhive` MCP server
//! Claude starts, and `hive-agent call` run from Claude's shell (its own
//! process per call, so a count in memory could not tell a script's second
//! identical send from a repeat). They find it through
//! [`ENV_TURN_CALLS`], in Claude's environment and in `mcp.json`. No file
//! (no turn, or a caller outside the harness): no key, the request is
//! served as before.
//!
//! The file is in the agent's own space (Claude's Bash tool can write it):
//! what it holds only ever chooses this agent's own keys, which the daemon
//! looks up with the agent's socket, never another's. It is read capped,
//! opened without following a link, and a first line that is not a turn
//! id means no key.
//!
//! A keyed call that got no answer (the connection broke: it may or may
//! not have been served) is asked once more with the same key by the MCP
//! server ([`super::mcp`]), so a daemon killed mid-call costs neither the
//! call nor a double. What this does not cover: a call that stays without
//! an answer and that the model then makes again in the same attempt is
//! the n+1-th, a new key; a call made by a process the cut attempt left
//! running after the next attempt began counts in the new attempt's log.

use std::io::{Read, Seek, Write};
use std::path::{Path, PathBuf};
use std::sync::atomic::{AtomicU64, Ordering};

use sha2::{Digest, Sha256};

use crate::wire::agent::Request;

/// The call log of the attempt running, in the state directory.
pub const CALLS_FILE: &str = "turn-calls";
/// The variable naming the call log to the attempt's callers.
pub const ENV_TURN_CALLS: &str = "HIVE_TURN_CALLS";
/// A log longer than this gives no more keys (about 60,000 calls).
const MAX_CALLS_BYTES: u64 = 1 << 20;
/// The longest turn id.
const MAX_TURN_ID: usize = 64;
/// Hex digits of a call's line in the log, and of a key.
const CALL_HEX: usize = 16;
const KEY_HEX: usize = 32;

/// A new turn id: the time in seconds, this process, a count and 64 bits
/// the standard library seeds from the OS's randomness (`RandomState`), in
/// hex — unique per agent without a dependency for random numbers: turns
/// of one harness differ by the count, a restarted harness (often the same
/// pid in its container, maybe the same second) by the random part.
pub fn new_turn_id() -> String {
    use std::hash::{BuildHasher, Hasher};
    static COUNT: AtomicU64 = AtomicU64::new(0);
    let n = COUNT.fetch_add(1, Ordering::Relaxed);
    let mut random = std::collections::hash_map::RandomState::new().build_hasher();
    random.write_u64(n);
    let now = crate::clock::Clock::now_unix(&crate::clock::SystemClock);
    format!(
        "{now:x}-{:x}-{n:x}-{:016x}",
        std::process::id(),
        random.finish()
    )
}

/// Whether `id` is a turn id this harness could have made.
pub fn valid_turn_id(id: &str) -> bool {
    !id.is_empty()
        && id.len() <= MAX_TURN_ID
        && id.bytes().all(|b| b.is_ascii_hexdigit() || b == b'-')
}

fn hex(bytes: &[u8], digits: usize) -> String {
    bytes
        .iter()
        .flat_map(|b| [b >> 4, b & 0xf])
        .take(digits)
        .map(|d| char::from_digit(u32::from(d), 16).unwrap_or('0'))
        .collect()
}

/// The request as its key and its log line see it: the socket's own JSON
/// of it (field order fixed by the type, defaults filled in).
fn canonical(request: &Request) -> String {
    serde_json::to_string(request).unwrap_or_default()
}

/// The key of the `occurrence`-th (from 1) call of `request` in turn `turn`.
pub fn derive(turn: &str, request: &Request, occurrence: u32) -> String {
    let mut hash = Sha256::new();
    hash.update(b"hive-idempotency-v1\n");
    hash.update(turn.as_bytes());
    hash.update(b"\n");
    hash.update(canonical(request).as_bytes());
    hash.update(format!("\n{occurrence}").as_bytes());
    hex(&hash.finalize(), KEY_HEX)
}

/// A call's line in the log.
fn call_line(request: &Request) -> String {
    hex(&Sha256::digest(canonical(request).as_bytes()), CALL_HEX)
}

/// The path of the call log in `state_dir`.
pub fn calls_path(state_dir: &Path) -> PathBuf {
    state_dir.join(CALLS_FILE)
}

/// Start an attempt of turn `turn`: a fresh log (written to a temporary
/// file and renamed over, so a caller never sees half of it). A failure
/// is logged: the attempt's calls then carry no key.
pub fn begin_attempt(state_dir: &Path, turn: &str) {
    use std::os::unix::fs::OpenOptionsExt;
    let path = calls_path(state_dir);
    let tmp = state_dir.join(format!("{CALLS_FILE}.tmp"));
    let _ = std::fs::remove_file(&tmp);
    let written = std::fs::OpenOptions::new()
        .write(true)
        .create_new(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(&tmp)
        .and_then(|mut f| f.write_all(format!("turn {turn}\n").as_bytes()))
        .and_then(|()| std::fs::rename(&tmp, &path));
    if let Err(e) = written {
        tracing::warn!(
            "cannot write {}: {e}; this attempt's calls carry no idempotency key",
            path.display()
        );
    }
}

/// The turn ended: no log, so nothing outside a turn gets a key.
pub fn end_turn(state_dir: &Path) {
    let _ = std::fs::remove_file(calls_path(state_dir));
}

/// The callers' side: the log named by [`ENV_TURN_CALLS`], if any.
#[derive(Debug, Clone, Default)]
pub struct Calls {
    path: Option<PathBuf>,
}

impl Calls {
    /// The log `path` (none: no keys).
    pub fn at(path: Option<PathBuf>) -> Self {
        Self { path }
    }

    /// From the environment.
    pub fn from_env() -> Self {
        Self::at(std::env::var_os(ENV_TURN_CALLS).map(PathBuf::from))
    }

    /// The key for `request`, counted in the log: none when the request
    /// does not act, or there is no turn (no log, or not one the harness
    /// wrote). The count and the line are one step under the file's lock,
    /// so calls made at once (Claude runs tools in parallel) each get
    /// their own `n`.
    pub fn key_for(&self, request: &Request) -> Option<String> {
        if !request.keyed() {
            return None;
        }
        let path = self.path.as_deref()?;
        match count_and_log(path, request) {
            Ok(key) => key,
            Err(e) => {
                if e.kind() != std::io::ErrorKind::NotFound {
                    tracing::warn!(
                        "{}: {e}; the call carries no idempotency key",
                        path.display()
                    );
                }
                None
            }
        }
    }
}

fn count_and_log(path: &Path, request: &Request) -> std::io::Result<Option<String>> {
    use nix::fcntl::{Flock, FlockArg};
    use std::os::unix::fs::OpenOptionsExt;
    let file = std::fs::OpenOptions::new()
        .read(true)
        .append(true)
        .custom_flags(nix::libc::O_NOFOLLOW)
        .open(path)?;
    let mut file = Flock::lock(file, FlockArg::LockExclusive)
        .map_err(|(_, errno)| std::io::Error::from(errno))?;
    file.rewind()?;
    let mut text = String::new();
    (&mut *file)
        .take(MAX_CALLS_BYTES + 1)
        .read_to_string(&mut text)?;
    if text.len() as u64 > MAX_CALLS_BYTES {
        return Ok(None);
    }
    let mut lines = text.lines();
    let Some(turn) = lines
        .next()
        .and_then(|l| l.strip_prefix("turn "))
        .filter(|t| valid_turn_id(t))
    else {
        return Ok(None);
    };
    let line = call_line(request);
    let before = lines.filter(|l| *l == line).count();
    let n = u32::try_from(before).unwrap_or(u32::MAX).saturating_add(1);
    file.write_all(format!("{line}\n").as_bytes())?;
    Ok(Some(derive(turn, request, n)))
}

#[cfg(test)]
#[path = "idempotency_tests.rs"]
mod tests;
