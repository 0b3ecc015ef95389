//! Reading the journal: container logs (`get_logs`, `hivectl logs`) and the
//! host journal (`get_host_journal`) through `journalctl --output=json`.
//!
//! Decision: **spawn journalctl** with a validated argv ([`query`]), a
//! timeout and an output cap ([`runner`]), and parse its JSON ([`entry`]).
//! journalctl already knows how to reach a container's journal
//! (`--machine=h-<n>` via machined), match units, priorities and PCRE2
//! patterns, and follow with inotify. Rejected: reading `*.journal` files in
//! process (the `sdjournal` crate), which would re-implement machine lookup,
//! unit matching and `--grep`, and track the on-disk format ourselves.
//!
//! The seam is [`runner::Spawn`]: production uses [`runner::Journalctl`];
//! tests put `cat`, `sleep` or `yes` behind it and run the same code. The
//! real journalctl is tested too (`tests/journal_real.rs`), on journal files
//! written by `systemd-journal-remote`.
//!
//! ```text
//! query    validated filters -> argv (--opt=value, one element each)
//! runner   Spawn seam, timeout + cap + kill, follow stream
//! entry    -o json lines -> JournalEntry (strings, byte arrays, nulls)
//! (wire::journal renders entries as short text for Logs/HostJournal content)
//! ```

pub mod entry;
pub mod query;
pub mod runner;
#[cfg(test)]
mod stand_in;

/// The priority filter's wire type, re-exported so the journal code names
/// it in one place: `wire::agenda`.
pub use crate::wire::agenda::JournalPriority;
pub use crate::wire::journal::{render_line, render_short};
pub use entry::{JournalEntry, parse_output};
pub use query::{HostJournalRequest, InvalidFilter, JournalQuery, JournalSource, MachineId};
pub use runner::{Follow, JournalError, Journalctl, Limits, Spawn};

/// The journal reader the daemon holds: where to read, how, and the limits.
#[derive(Debug, Clone)]
pub struct Journal<S: Spawn = Journalctl> {
    spawn: S,
    source: JournalSource,
    limits: Limits,
}

impl Journal<Journalctl> {
    /// journalctl from `PATH`, reading `source`, with the default limits.
    pub fn new(source: JournalSource) -> Self {
        Self::with_spawn(Journalctl::default(), source, Limits::default())
    }
}

impl<S: Spawn> Journal<S> {
    pub fn with_spawn(spawn: S, source: JournalSource, limits: Limits) -> Self {
        Self {
            spawn,
            source,
            limits,
        }
    }

    pub fn source(&self) -> &JournalSource {
        &self.source
    }

    /// The entries the query selects, oldest first. The query's filters
    /// were validated when it was built ([`InvalidFilter`]); what can fail
    /// here is running journalctl ([`JournalError`]).
    pub async fn read(&self, query: &JournalQuery) -> Result<Vec<JournalEntry>, JournalError> {
        let args = query.args(&self.source, false);
        let output = match runner::run_to_end(&self.spawn, &args, self.limits).await {
            Ok(output) => output,
            Err(error) if query.grep.is_some() && is_silent_no_match(&error) => Vec::new(),
            Err(error) => return Err(error),
        };
        let mut parsed = parse_output(&output);
        if parsed.skipped > 0 {
            tracing::warn!(
                skipped = parsed.skipped,
                "journalctl wrote lines that are not JSON entries"
            );
        }
        if query.reads_newest_first() {
            parsed.entries.reverse();
        }
        Ok(parsed.entries)
    }

    /// [`Journal::read`] rendered as short text (the `content` of `Logs`
    /// and `HostJournal`).
    pub async fn read_text(&self, query: &JournalQuery) -> Result<String, JournalError> {
        Ok(render_short(&self.read(query).await?))
    }

    /// The query's last `lines` entries (journalctl's default: 10), then
    /// every new entry as it is written, until the [`Follow`] is dropped.
    ///
    /// A follow of the host journal (no machine) reads this machine's
    /// entries of every boot ([`MachineId::host_follow_args`]), not only
    /// those of the boot `/proc` names.
    pub fn follow(&self, query: &JournalQuery) -> Result<Follow, JournalError> {
        let mut args = query.args(&self.source, true);
        if self.source == JournalSource::Host && query.machine.is_none() {
            let id = std::fs::read_to_string("/etc/machine-id").ok();
            match id.as_deref().and_then(MachineId::parse) {
                Some(id) => args.extend(id.host_follow_args()),
                None => tracing::debug!("no /etc/machine-id: following the current boot only"),
            }
        }
        runner::follow(&self.spawn, &args, self.limits)
    }
}

/// journalctl 252 exits 1 **without a word** when `--grep` matched nothing
/// (a bad pattern also exits 1, but says `Bad pattern ...`). That is an
/// empty result, not a refusal.
fn is_silent_no_match(error: &JournalError) -> bool {
    matches!(error, JournalError::Refused { status, stderr, .. }
        if status.code() == Some(1) && stderr.is_empty())
}

#[cfg(test)]
#[path = "journal_tests.rs"]
mod tests;
