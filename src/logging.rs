//! The daemon's own logs, through `tracing`.
//!
//! Decision: when stderr **is** the journal — `$JOURNAL_STREAM` names
//! stderr's device and inode, as systemd sets it for `StandardError=journal`
//! — events go to journald as structured entries (tracing-journald), so
//! `journalctl -u hive-c0re.service AGENT=iris` finds every line logged with
//! an `agent = %name` field, including lines inside a span that carries it.
//! Otherwise events are readable text on stderr (tracing-subscriber `fmt`).
//! Rejected: assuming journald whenever the socket exists, which sends the
//! logs of a daemon run by hand (or with stderr redirected to a file) to a
//! place its operator is not looking; and text on stderr under systemd,
//! which loses the fields.
//!
//! Field names: tracing-journald upper-cases names and, by default, prefixes
//! them with `F_`; the prefix is removed here so `agent` becomes `AGENT`.
//! Leading underscores are stripped by the layer, so no field can forge a
//! trusted journal field (`_SYSTEMD_UNIT`, `_PID`). Do not name fields
//! `priority`, `syslog_identifier`, `target`, `code_file`, `code_line` or
//! `message` (the layer writes those itself), and record names with `%`
//! (`agent = %name`): `?name` would store the Debug form, quotes included.
//!
//! Levels map to syslog priorities the conventional way (INFO = info, not
//! the layer's default of notice), so `journalctl -p info` and `-p notice`
//! mean what an operator expects.
//!
//! The filter is `RUST_LOG` (default `info`); a malformed `RUST_LOG` is an
//! error at start rather than silently logging at the wrong level.

use std::os::fd::AsFd;

use tracing_journald::{Priority, PriorityMappings};
use tracing_subscriber::filter::{LevelFilter, ParseError};
use tracing_subscriber::layer::SubscriberExt;
use tracing_subscriber::util::{SubscriberInitExt, TryInitError};
use tracing_subscriber::{EnvFilter, Layer as _};

/// The `SYSLOG_IDENTIFIER` of every daemon entry (`journalctl -t hive-c0re`).
pub const SYSLOG_IDENTIFIER: &str = "hive-c0re";

/// Where the daemon's logs went.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum LogTarget {
    /// Structured entries to journald.
    Journald,
    /// Text on stderr. `journal_error` is set when stderr is the journal but
    /// the journald socket could not be used (the text still reaches the
    /// journal, without fields).
    Stderr { journal_error: Option<String> },
}

/// Why logging could not be set up.
#[derive(Debug, thiserror::Error)]
pub enum LoggingError {
    /// `RUST_LOG` does not parse: fix or unset it.
    #[error(
        "RUST_LOG={value:?} is not a valid log filter; use e.g. \"info\" or \"hive_c0re=debug,info\""
    )]
    BadFilter {
        value: String,
        #[source]
        source: ParseError,
    },
    /// `init` ran twice, or another subscriber was installed first: a bug
    /// in the caller.
    #[error("logging is already set up in this process")]
    AlreadyInitialised(#[source] TryInitError),
}

/// Set up logging once, at the start of `main`. Reads `RUST_LOG` and
/// `JOURNAL_STREAM`, and returns where logs go so `main` can say so.
pub fn init() -> Result<LogTarget, LoggingError> {
    let rust_log = std::env::var_os("RUST_LOG").map(|v| v.to_string_lossy().into_owned());
    let filter = env_filter(rust_log.as_deref())?;
    let journal_stream = std::env::var("JOURNAL_STREAM").ok();
    let to_journal = stderr_is_journal(journal_stream.as_deref(), stderr_dev_ino());

    let (journald, target) = if to_journal {
        match journald_layer() {
            Ok(layer) => (Some(layer), LogTarget::Journald),
            Err(error) => (
                None,
                LogTarget::Stderr {
                    journal_error: Some(error.to_string()),
                },
            ),
        }
    } else {
        (
            None,
            LogTarget::Stderr {
                journal_error: None,
            },
        )
    };
    // Text on stderr: without timestamps when the journal adds its own.
    let fmt = journald.is_none().then(|| {
        let layer = tracing_subscriber::fmt::layer()
            .with_writer(std::io::stderr)
            .with_ansi(!to_journal && std::io::IsTerminal::is_terminal(&std::io::stderr()));
        if to_journal {
            layer.without_time().boxed()
        } else {
            layer.boxed()
        }
    });
    tracing_subscriber::registry()
        .with(filter)
        .with(journald)
        .with(fmt)
        .try_init()
        .map_err(LoggingError::AlreadyInitialised)?;
    Ok(target)
}

/// The journald layer exactly as the daemon uses it: no field prefix, the
/// daemon's identifier, conventional priorities. Fails when journald's
/// socket cannot be reached.
pub fn journald_layer() -> std::io::Result<tracing_journald::Layer> {
    Ok(tracing_journald::layer()?
        .with_field_prefix(None)
        .with_syslog_identifier(SYSLOG_IDENTIFIER.to_owned())
        .with_priority_mappings(PriorityMappings {
            error: Priority::Error,
            warn: Priority::Warning,
            info: Priority::Informational,
            debug: Priority::Debug,
            trace: Priority::Debug,
        }))
}

/// The filter for `RUST_LOG` (`None` or empty: `info`).
pub fn env_filter(rust_log: Option<&str>) -> Result<EnvFilter, LoggingError> {
    let builder = EnvFilter::builder().with_default_directive(LevelFilter::INFO.into());
    match rust_log.map(str::trim) {
        None | Some("") => Ok(builder.parse_lossy("")),
        Some(value) => builder
            .parse(value)
            .map_err(|source| LoggingError::BadFilter {
                value: value.to_owned(),
                source,
            }),
    }
}

/// Whether stderr is the journal stream systemd connected: `JOURNAL_STREAM`
/// is `<device>:<inode>` in decimal and must equal stderr's. A set variable
/// that does not match means stderr was redirected (a child process, a
/// shell redirection) and the journal is not where it goes.
pub fn stderr_is_journal(journal_stream: Option<&str>, stderr: Option<(u64, u64)>) -> bool {
    let (Some(value), Some((dev, ino))) = (journal_stream, stderr) else {
        return false;
    };
    let Some((want_dev, want_ino)) = value.trim().split_once(':') else {
        return false;
    };
    want_dev.parse::<u64>() == Ok(dev) && want_ino.parse::<u64>() == Ok(ino)
}

/// stderr's (device, inode), if it is open.
fn stderr_dev_ino() -> Option<(u64, u64)> {
    let stat = nix::sys::stat::fstat(std::io::stderr().as_fd()).ok()?;
    #[allow(clippy::useless_conversion)] // dev_t/ino_t are u64 on Linux, not everywhere
    Some((u64::from(stat.st_dev), u64::from(stat.st_ino)))
}

#[cfg(test)]
#[path = "logging_tests.rs"]
mod tests;
