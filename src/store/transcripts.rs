//! Transcript cursors: how far the daemon has read each interactive
//! session's transcript (`service::transcripts`), so each hook reads only
//! what was appended since. Bounded per agent ([`MAX_CURSORS_PER_AGENT`],
//! the least recently read out; a transcript whose cursor went is read
//! from its start again if a hook names it, its remembered ids gone).

use std::collections::VecDeque;

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::wire::ident::Ident;

/// How many transcripts' cursors are kept per agent.
pub const MAX_CURSORS_PER_AGENT: i64 = 1000;

/// Where a transcript's next read starts.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Cursor {
    pub offset: u64,
    /// The last read ended inside an over-long line.
    pub skipping: bool,
    /// The message ids counted lately, oldest first.
    pub recent: VecDeque<String>,
}

/// The cursor of `agent`'s transcript at `path` (relative to its state
/// directory); `None` if it was never read.
pub fn get(conn: &Connection, agent: &Ident, path: &str) -> Result<Option<Cursor>, StoreError> {
    let row = conn
        .prepare_cached(
            "SELECT offset, skipping, recent_ids FROM transcript_cursors
             WHERE agent = ?1 AND path = ?2",
        )?
        .query_row(params![agent.as_str(), path], |r| {
            Ok((
                r.get::<_, i64>(0)?,
                r.get::<_, bool>(1)?,
                r.get::<_, String>(2)?,
            ))
        })
        .optional()?;
    row.map(|(offset, skipping, json)| {
        let recent = serde_json::from_str(&json)
            .map_err(|e| StoreError::Corrupt(format!("transcript cursor {path}: {e}")))?;
        Ok(Cursor {
            offset: u64::try_from(offset).unwrap_or(0),
            skipping,
            recent,
        })
    })
    .transpose()
}

/// Move `agent`'s cursor at `path` from `from` (as read by [`get`]; `None`
/// for a first read) to `to`, if nobody moved it meanwhile: `false` (and
/// nothing written) when another read got there first, so two hooks racing
/// over the same lines count them once. Lets the least recently read
/// cursors go past [`MAX_CURSORS_PER_AGENT`].
pub fn advance(
    conn: &Connection,
    agent: &Ident,
    path: &str,
    session_id: Option<&str>,
    from: Option<&Cursor>,
    to: &Cursor,
    now: i64,
) -> Result<bool, StoreError> {
    let json = serde_json::to_string(&to.recent).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let offset = i64::try_from(to.offset).unwrap_or(i64::MAX);
    let agent = agent.as_str();
    // ?1..?7: the cursor as it is to be; ?8..?10: as it was read.
    let new: [&dyn rusqlite::ToSql; 7] = [
        &agent,
        &path,
        &session_id,
        &offset,
        &to.skipping,
        &json,
        &now,
    ];
    let moved = match from {
        None => conn
            .prepare_cached(
                "INSERT INTO transcript_cursors VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)
                 ON CONFLICT (agent, path) DO NOTHING",
            )?
            .execute(&new[..])?,
        Some(old) => {
            let old_offset = i64::try_from(old.offset).unwrap_or(i64::MAX);
            let old_json = serde_json::to_string(&old.recent)
                .map_err(|e| StoreError::Corrupt(e.to_string()))?;
            let mut values = new.to_vec();
            values.extend([
                &old_offset as &dyn rusqlite::ToSql,
                &old.skipping,
                &old_json,
            ]);
            conn.prepare_cached(
                "UPDATE transcript_cursors SET offset = ?4, skipping = ?5, recent_ids = ?6,
                     read_at = ?7, session_id = COALESCE(?3, session_id)
                 WHERE agent = ?1 AND path = ?2 AND offset = ?8 AND skipping = ?9
                     AND recent_ids = ?10",
            )?
            .execute(&values[..])?
        }
    };
    if moved == 0 {
        return Ok(false);
    }
    if from.is_none() {
        conn.prepare_cached(
            "DELETE FROM transcript_cursors WHERE agent = ?1 AND path IN (
                 SELECT path FROM transcript_cursors WHERE agent = ?1
                 ORDER BY read_at DESC, path LIMIT -1 OFFSET ?2)",
        )?
        .execute(params![agent, MAX_CURSORS_PER_AGENT])?;
    }
    Ok(true)
}

#[cfg(test)]
#[path = "transcripts_tests.rs"]
mod tests;
