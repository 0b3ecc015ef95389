//! Interactive sessions' tokens: when a hook of a Claude started by hand
//! in the container arrives (`hook_event`, not marked headless), the
//! daemon reads what was appended to the transcript the hook names and
//! journals its new assistant messages as `interactive` turns, which
//! `turns` and `usage` show as reported figures (the file is the
//! container's). What the session spent is its requests the model gateway
//! metered; no budget reads a transcript.
//!
//! Decisions: the file is the untrusted container's, so the path must be
//! inside the agent's own state (`/var/lib/hive`, lexically, no `..`,
//! [`crate::hive::transcript::inside_state`]) and is opened one component
//! at a time from the agent's state directory with `O_NOFOLLOW` (a symlink
//! anywhere on the way fails the open), a regular file only; each read is
//! bounded ([`MAX_READ`]) and starts where the last one ended (a cursor in
//! SQLite, moved only from where it was read, so racing hooks count a line
//! once). A harness turn's hooks come marked headless (its Claude runs with
//! `HIVE_HEADLESS_TURN=1`, which `hive-agent hook` forwards) and are not
//! read: `report_turn` counts those turns. Rejected: matching session ids
//! against the turn journal, which `report_turn` fills only after the
//! turn's last hooks.

use std::fs::File;
use std::os::unix::fs::FileExt;
use std::path::Path;

use nix::fcntl::OFlag;
use nix::sys::stat::Mode;

use super::{Hive, HiveError, confined};
use crate::hive::transcript::{self, Counted, MAX_READ};
use crate::store::{agents, transcripts, turns};
use crate::wire::ident::Ident;
use crate::wire::turns::{TurnOutcome, TurnReport};

/// What one hook's look at its transcript came to.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum TranscriptRead {
    /// The path is not the agent's to name; nothing was opened.
    Ignored(String),
    /// The file could not be opened or read (missing, a symlink on the
    /// way, not a regular file); nothing was counted.
    Unreadable(String),
    /// Read; this many new messages counted (0: nothing new).
    Counted(u32),
    /// Another hook's read of the same lines won; nothing counted here.
    Raced,
}

/// Once per agent and this many seconds, an ignored path is logged.
const LOG_EVERY_SECS: i64 = 60;

impl Hive {
    /// Count the new assistant messages of the transcript `path` (as the
    /// container names it) of `agent`'s session `session`, journaled as
    /// `interactive` turns (one per model).
    pub async fn count_transcript(
        &self,
        agent: &Ident,
        path: &str,
        session: Option<String>,
    ) -> Result<TranscriptRead, HiveError> {
        let parts = match transcript::inside_state(path) {
            Ok(parts) => parts,
            Err(why) => {
                self.log_ignored(agent, path, why);
                return Ok(TranscriptRead::Ignored(why.to_owned()));
            }
        };
        let rel = parts.join("/");
        let (n, r) = (agent.clone(), rel.clone());
        let from = self
            .store()
            .read(move |c| transcripts::get(c, &n, &r))
            .await?;
        let dir = self.config().agent_state_dir(agent);
        let cursor = from.clone().unwrap_or_default();
        let read = tokio::task::spawn_blocking(move || read_from(&dir, &parts, &cursor))
            .await
            .map_err(|e| HiveError::Internal(format!("transcript read task: {e}")))?;
        let (to, counted) = match read {
            Ok(done) => done,
            Err(why) => {
                tracing::debug!(agent = %agent, path, "transcript not read: {why}");
                return Ok(TranscriptRead::Unreadable(why));
            }
        };
        let now_ms = self.now().saturating_mul(1000);
        let reports: Vec<TurnReport> = counted
            .by_model
            .iter()
            .map(|(model, spend)| TurnReport {
                started_at_ms: now_ms,
                ended_at_ms: now_ms,
                message_ids: Vec::new(),
                session_id: session.clone(),
                model: model.clone(),
                outcome: TurnOutcome::Interactive,
                error: None,
                tools: Vec::new(),
                usage: Some(spend.usage),
                cost_micro_usd: None,
                num_turns: Some(spend.messages),
                duration_ms: None,
                duration_api_ms: None,
            })
            .collect();
        let (n, kept) = (agent.clone(), reports.clone());
        let now = self.now();
        let moved = self
            .transact(move |c| {
                let tx = crate::store::immediate(c)?;
                if agents::get(&tx, &n)?.is_none() {
                    return Err(HiveError::UnknownAgent(n));
                }
                let moved = transcripts::advance(
                    &tx,
                    &n,
                    &rel,
                    session.as_deref(),
                    from.as_ref(),
                    &to,
                    now,
                )?;
                if moved {
                    for report in &kept {
                        turns::insert(&tx, &n, report)?;
                    }
                }
                tx.commit()?;
                Ok(moved)
            })
            .await?;
        if !moved {
            return Ok(TranscriptRead::Raced);
        }
        if reports.is_empty() {
            return Ok(TranscriptRead::Counted(0));
        }
        tracing::debug!(agent = %agent, path, messages = counted.messages(), "transcript counted");
        self.usage().counted(agent, &reports);
        Ok(TranscriptRead::Counted(counted.messages()))
    }

    /// One line per agent per [`LOG_EVERY_SECS`]: a hook named a path
    /// outside its state.
    fn log_ignored(&self, agent: &Ident, path: &str, why: &str) {
        let now = self.now();
        // This hive's own record (bounded), not the process's: two hives
        // in one process (tests) do not silence each other.
        let mut logged = self
            .inner
            .transcript_logged
            .lock()
            .unwrap_or_else(|e| e.into_inner());
        if logged
            .get(agent)
            .is_some_and(|at| now.saturating_sub(*at) < LOG_EVERY_SECS)
        {
            return;
        }
        if logged.len() >= 1024 {
            logged.clear();
        }
        logged.insert(agent.clone(), now);
        let shown: String = path.chars().take(300).collect();
        tracing::warn!(
            agent = %agent,
            "hook transcript_path {shown:?} {why}; ignored (only the agent's /var/lib/hive is read)"
        );
    }
}

/// Open `parts` under `dir` without following a symlink anywhere (each
/// component `O_NOFOLLOW`, from the previous one's descriptor; the last a
/// regular file), then read and count what is new since `cursor`: the next
/// cursor and the count. A file shorter than the cursor (rewritten) is
/// read from its start again.
fn read_from(
    dir: &Path,
    parts: &[String],
    cursor: &transcripts::Cursor,
) -> Result<(transcripts::Cursor, Counted), String> {
    let file = open_beneath(dir, parts)?;
    let meta = file.metadata().map_err(|e| format!("fstat: {e}"))?;
    if !meta.file_type().is_file() {
        return Err("not a regular file".into());
    }
    let size = meta.len();
    let mut cursor = cursor.clone();
    if size < cursor.offset {
        cursor.offset = 0;
        cursor.skipping = false;
    }
    let want = usize::try_from(size - cursor.offset)
        .unwrap_or(MAX_READ)
        .min(MAX_READ);
    let mut buf = vec![0; want];
    let mut got = 0;
    while got < want {
        match file.read_at(&mut buf[got..], cursor.offset + got as u64) {
            Ok(0) => break,
            Ok(n) => got += n,
            Err(e) if e.kind() == std::io::ErrorKind::Interrupted => {}
            Err(e) => return Err(format!("read: {e}")),
        }
    }
    buf.truncate(got);
    let counted = transcript::count(&buf, cursor.skipping, &cursor.recent);
    let next = transcripts::Cursor {
        offset: cursor.offset + counted.consumed as u64,
        skipping: counted.skipping,
        recent: counted.recent.clone(),
    };
    Ok((next, counted))
}

fn open_beneath(dir: &Path, parts: &[String]) -> Result<File, String> {
    let top = confined::open_dir(dir).map_err(|e| format!("the agent's state directory: {e}"))?;
    let Some((last, middle)) = parts.split_last() else {
        return Err("no file named".into());
    };
    let at = confined::beneath(top, middle, None)
        .map_err(|(part, e)| format!("{part}: {e} (a symlink is not followed)"))?;
    let fd = confined::file_at(&at, last.as_str(), OFlag::O_RDONLY, Mode::empty())
        .map_err(|e| format!("{last}: {e} (a symlink is not followed)"))?;
    Ok(File::from(fd))
}

#[cfg(test)]
#[path = "transcripts_tests.rs"]
mod tests;
