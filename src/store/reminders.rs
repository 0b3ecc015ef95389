//! Reminders: one row per `remind`, delivered at most once. The delivery
//! and `sent_at` are written in one transaction (`service::timer`), so a
//! reminder due while the daemon was down is delivered at the next start,
//! and never twice.

use std::collections::HashMap;

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::StoreError;
use crate::wire::agenda::ReminderStats;

/// One reminder as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct ReminderRow {
    pub id: i64,
    pub owner: String,
    pub message: String,
    pub due_at: i64,
    pub created_at: i64,
    pub sent_at: Option<i64>,
    pub cancelled_at: Option<i64>,
}

const COLUMNS: &str = "id, owner, message, due_at, created_at, sent_at, cancelled_at";
const PENDING: &str = "sent_at IS NULL AND cancelled_at IS NULL";

fn from_row(r: &Row<'_>) -> rusqlite::Result<ReminderRow> {
    Ok(ReminderRow {
        id: r.get(0)?,
        owner: r.get(1)?,
        message: r.get(2)?,
        due_at: r.get(3)?,
        created_at: r.get(4)?,
        sent_at: r.get(5)?,
        cancelled_at: r.get(6)?,
    })
}

fn query(
    conn: &Connection,
    filter: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<ReminderRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM reminders WHERE {filter} ORDER BY due_at, id"
    ))?;
    let rows = stmt.query_map(params, from_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Store a pending reminder; its id.
pub fn insert(
    conn: &Connection,
    owner: &str,
    message: &str,
    due_at: i64,
    at: i64,
) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO reminders (owner, message, due_at, created_at) VALUES (?1, ?2, ?3, ?4)",
        params![owner, message, due_at, at],
    )?;
    Ok(conn.last_insert_rowid())
}

pub fn get(conn: &Connection, id: i64) -> Result<Option<ReminderRow>, StoreError> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM reminders WHERE id = ?1"))?;
    Ok(stmt.query_row([id], from_row).optional()?)
}

/// Pending reminders due at `now`, earliest first.
pub fn due(conn: &Connection, now: i64) -> Result<Vec<ReminderRow>, StoreError> {
    query(conn, &format!("{PENDING} AND due_at <= ?1"), [now])
}

/// Mark a pending reminder delivered. False if it no longer was pending.
pub fn mark_sent(conn: &Connection, id: i64, at: i64) -> Result<bool, StoreError> {
    let n = conn.execute(
        &format!("UPDATE reminders SET sent_at = ?2 WHERE id = ?1 AND {PENDING}"),
        params![id, at],
    )?;
    Ok(n == 1)
}

/// Cancel a pending reminder. False if it no longer was pending.
pub fn cancel(conn: &Connection, id: i64, at: i64) -> Result<bool, StoreError> {
    let n = conn.execute(
        &format!("UPDATE reminders SET cancelled_at = ?2 WHERE id = ?1 AND {PENDING}"),
        params![id, at],
    )?;
    Ok(n == 1)
}

/// Cancel every pending reminder of `owner`; how many.
pub fn cancel_pending_of(conn: &Connection, owner: &str, at: i64) -> Result<usize, StoreError> {
    Ok(conn.execute(
        &format!("UPDATE reminders SET cancelled_at = ?2 WHERE owner = ?1 AND {PENDING}"),
        params![owner, at],
    )?)
}

/// Pending reminders of one owner (`None` = everybody's).
pub fn pending_of(conn: &Connection, owner: Option<&str>) -> Result<Vec<ReminderRow>, StoreError> {
    match owner {
        Some(o) => query(conn, &format!("{PENDING} AND owner = ?1"), [o]),
        None => query(conn, PENDING, []),
    }
}

/// How many reminders of one owner (`None` = everybody's) are pending.
pub fn count_pending(conn: &Connection, owner: Option<&str>) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row(
        &format!("SELECT COUNT(*) FROM reminders WHERE {PENDING} AND (?1 IS NULL OR owner = ?1)"),
        [owner],
        |r| r.get(0),
    )?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Pending counts by owner (owners with none are absent).
pub fn pending_counts(conn: &Connection) -> Result<HashMap<String, u64>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT owner, COUNT(*) FROM reminders WHERE {PENDING} GROUP BY owner"
    ))?;
    let rows = stmt.query_map([], |r| {
        Ok((
            r.get::<_, String>(0)?,
            u64::try_from(r.get::<_, i64>(1)?).unwrap_or(0),
        ))
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// Counts of reminders created at or after `cutoff` (`None` = all time):
/// scheduled (every one), delivered, pending (neither delivered nor
/// cancelled).
pub fn rollup(
    conn: &Connection,
    owner: Option<&str>,
    cutoff: Option<i64>,
) -> Result<ReminderStats, StoreError> {
    let (scheduled, delivered, pending): (i64, i64, i64) = conn.query_row(
        &format!(
            "SELECT COUNT(*),
                    COUNT(sent_at),
                    COALESCE(SUM(CASE WHEN {PENDING} THEN 1 ELSE 0 END), 0)
             FROM reminders
             WHERE (?1 IS NULL OR owner = ?1) AND (?2 IS NULL OR created_at >= ?2)"
        ),
        params![owner, cutoff],
        |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
    )?;
    let n = |v: i64| u64::try_from(v).unwrap_or(0);
    Ok(ReminderStats {
        scheduled: n(scheduled),
        delivered: n(delivered),
        pending: n(pending),
    })
}

#[cfg(test)]
#[path = "reminders_tests.rs"]
mod tests;
