//! The answers kept for repeated requests (issue 47, "nothing done
//! twice"): an agent's request that carried an idempotency key is answered
//! once; its answer is kept here under `(agent, key)`, and a repeat of the
//! key is answered from the row without acting again.
//!
//! Decisions:
//! - **Per agent.** The key is looked up with the agent the request came
//!   from (its socket), so one agent's key never answers another's, and a
//!   key an agent forges can only find its own answers.
//! - **Bounded per agent by count**, in the write that adds a row: the
//!   newest [`KEEP`] rows of the agent (over the index `(agent, id)`); and
//!   **by age when read**: a row older than [`MAX_AGE_MS`] is no answer. A
//!   repeat comes from a cut turn resumed within minutes (at most
//!   `max_resumes` attempts); a day and a few hundred calls are far past
//!   any turn. Rejected: a hive-wide bound (one busy agent would push out a
//!   quiet one's answers); deleting old rows in every write too (it reads
//!   every row of the agent, each write; with it a keyed send cost 2.5x a
//!   plain one's wall time, `examples/bench_keyed_send.rs`); and a sweep on
//!   a timer (nothing to gain: the rows are bounded per agent already).
//! - **The answer is opaque here**: the JSON of the wire's `Response`, as
//!   the door serialized it; the store neither reads nor checks it.
//! - [`remember`] is written in the caller's transaction, so a caller
//!   that can makes the act and its row one commit (the broker's `send`).

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::wire::ident::Ident;

/// The most rows kept per agent.
pub const KEEP: u32 = 500;
/// The oldest row kept, in ms.
pub const MAX_AGE_MS: i64 = 24 * 60 * 60 * 1000;

/// The answer kept for `agent`'s `key`, if any (and not past
/// [`MAX_AGE_MS`] at `now_ms`).
pub fn recall(
    conn: &Connection,
    agent: &Ident,
    key: &str,
    now_ms: i64,
) -> Result<Option<String>, StoreError> {
    Ok(conn
        .prepare_cached("SELECT answer FROM replies WHERE agent = ?1 AND key = ?2 AND at_ms >= ?3")?
        .query_row(
            params![agent.as_str(), key, now_ms.saturating_sub(MAX_AGE_MS)],
            |r| r.get(0),
        )
        .optional()?)
}

/// Keep `answer` for `agent`'s `key` (a key kept already is kept as it
/// was: the first answer stands), then drop the agent's rows past
/// [`KEEP`]. Run it in one transaction.
pub fn remember(
    conn: &Connection,
    agent: &Ident,
    key: &str,
    answer: &str,
    now_ms: i64,
) -> Result<(), StoreError> {
    conn.prepare_cached(
        "INSERT INTO replies (agent, key, answer, at_ms) VALUES (?1, ?2, ?3, ?4)
         ON CONFLICT (agent, key) DO NOTHING",
    )?
    .execute(params![agent.as_str(), key, answer, now_ms])?;
    conn.prepare_cached(
        "DELETE FROM replies WHERE agent = ?1 AND id <= (
             SELECT id FROM replies WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
    )?
    .execute(params![agent.as_str(), KEEP])?;
    Ok(())
}

/// How many answers are kept for `agent` (tests, the bounds).
pub fn count(conn: &Connection, agent: &Ident) -> Result<u64, StoreError> {
    let n: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM replies WHERE agent = ?1")?
        .query_row(params![agent.as_str()], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

#[cfg(test)]
#[path = "replies_tests.rs"]
mod tests;
