//! Scheduled prompts and their targets.
//!
//! A due time fires exactly once: the service's fire inserts every target's
//! message and advances `next_fire_at` ([`record_fire`], [`set_next_fire`],
//! [`end`]) in one write transaction, after re-checking inside it
//! ([`fire_head`]) that the schedule is still due. A crash before the commit
//! leaves the schedule due (it fires at the next start); after it, the
//! messages and the new due time are both durable.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{StoreError, Tx, immediate};
use crate::wire::agenda::{WireSchedule, WireScheduleSource, WireScheduleTarget};

/// A new schedule's fields (targets already validated by the caller).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewSchedule {
    pub owner: String,
    pub body: String,
    pub interval_seconds: Option<u64>,
    pub first_fire_at: i64,
    pub source_approval_id: Option<i64>,
    pub description: Option<String>,
    pub targets: Vec<String>,
}

pub use crate::hive::agenda::ScheduleEdit;

/// The outcome of a change to a schedule.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Change {
    Done,
    NotFound,
    /// The schedule is cancelled or finished.
    Ended,
    /// A named target is not an active target of the schedule.
    NotATarget(String),
    /// The change would leave no active target (nothing was changed).
    NoTargetsLeft,
}

struct Head {
    id: i64,
    owner: String,
    body: String,
    interval_seconds: Option<i64>,
    next_fire_at: i64,
    created_at: i64,
    source_approval_id: Option<i64>,
    cancelled_at: Option<i64>,
    description: Option<String>,
}

const COLUMNS: &str = "id, owner, body, interval_seconds, next_fire_at, created_at, \
                       source_approval_id, cancelled_at, description";

fn head(r: &Row<'_>) -> rusqlite::Result<Head> {
    Ok(Head {
        id: r.get(0)?,
        owner: r.get(1)?,
        body: r.get(2)?,
        interval_seconds: r.get(3)?,
        next_fire_at: r.get(4)?,
        created_at: r.get(5)?,
        source_approval_id: r.get(6)?,
        cancelled_at: r.get(7)?,
        description: r.get(8)?,
    })
}

fn get_head(conn: &Connection, id: i64) -> Result<Option<Head>, StoreError> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM schedules WHERE id = ?1"))?;
    Ok(stmt.query_row([id], head).optional()?)
}

fn targets(conn: &Connection, id: i64) -> Result<Vec<WireScheduleTarget>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT target, cancelled_at, last_fired_at, last_result FROM schedule_targets
         WHERE schedule_id = ?1 ORDER BY target",
    )?;
    let rows = stmt.query_map([id], |r| {
        Ok(WireScheduleTarget {
            target: r.get(0)?,
            cancelled_at_unix: r.get(1)?,
            last_fired_at_unix: r.get(2)?,
            last_result: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The targets of schedule `id` that are not cancelled.
pub fn active_targets(conn: &Connection, id: i64) -> Result<Vec<String>, StoreError> {
    Ok(targets(conn, id)?
        .into_iter()
        .filter(|t| t.cancelled_at_unix.is_none())
        .map(|t| t.target)
        .collect())
}

fn wire(conn: &Connection, h: Head) -> Result<WireSchedule, StoreError> {
    Ok(WireSchedule {
        targets: targets(conn, h.id)?,
        id: h.id,
        owner: h.owner,
        body: h.body,
        interval_seconds: h.interval_seconds.and_then(|s| u64::try_from(s).ok()),
        next_fire_at_unix: h.next_fire_at,
        created_at_unix: h.created_at,
        source: match h.source_approval_id {
            Some(id) => WireScheduleSource::Approval { id },
            None => WireScheduleSource::Operator,
        },
        cancelled_at_unix: h.cancelled_at,
        description: h.description,
    })
}

fn interval(v: Option<u64>) -> Option<i64> {
    v.map(|s| i64::try_from(s).unwrap_or(i64::MAX))
}

/// Store a schedule and its targets; its id.
pub fn insert(conn: &mut Connection, new: &NewSchedule, at: i64) -> Result<i64, StoreError> {
    let tx = immediate(conn)?;
    tx.execute(
        "INSERT INTO schedules (owner, body, interval_seconds, next_fire_at, created_at,
                                source_approval_id, description)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            new.owner,
            new.body,
            interval(new.interval_seconds),
            new.first_fire_at,
            at,
            new.source_approval_id,
            new.description
        ],
    )?;
    let id = tx.last_insert_rowid();
    for target in &new.targets {
        tx.execute(
            "INSERT OR IGNORE INTO schedule_targets (schedule_id, target) VALUES (?1, ?2)",
            params![id, target],
        )?;
    }
    tx.commit()?;
    Ok(id)
}

/// One schedule.
pub fn get(conn: &Connection, id: i64) -> Result<Option<WireSchedule>, StoreError> {
    get_head(conn, id)?.map(|h| wire(conn, h)).transpose()
}

/// Every schedule, by id.
pub fn list(conn: &Connection) -> Result<Vec<WireSchedule>, StoreError> {
    let heads: Vec<Head> = {
        let mut stmt =
            conn.prepare_cached(&format!("SELECT {COLUMNS} FROM schedules ORDER BY id"))?;
        let rows = stmt.query_map([], head)?;
        rows.collect::<Result<_, _>>()?
    };
    heads.into_iter().map(|h| wire(conn, h)).collect()
}

/// Ids of live schedules due at `now`.
pub fn due(conn: &Connection, now: i64) -> Result<Vec<i64>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM schedules WHERE cancelled_at IS NULL AND next_fire_at <= ?1 ORDER BY next_fire_at, id",
    )?;
    let rows = stmt.query_map([now], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// The parts of schedule `id` a fire reads: its body, its interval and
/// due time, and whether it ended; `None` when there is no such schedule.
pub fn fire_head(conn: &Connection, id: i64) -> Result<Option<FireHead>, StoreError> {
    Ok(get_head(conn, id)?.map(|h| FireHead {
        body: h.body,
        interval_seconds: h.interval_seconds.and_then(|s| u64::try_from(s).ok()),
        next_fire_at: h.next_fire_at,
        ended: h.cancelled_at.is_some(),
    }))
}

/// What [`fire_head`] reads.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct FireHead {
    pub body: String,
    pub interval_seconds: Option<u64>,
    pub next_fire_at: i64,
    pub ended: bool,
}

/// Record the result of firing at one target.
pub fn record_fire(
    conn: &Connection,
    id: i64,
    target: &str,
    now: i64,
    result: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE schedule_targets SET last_fired_at = ?3, last_result = ?4
         WHERE schedule_id = ?1 AND target = ?2",
        params![id, target, now, result],
    )?;
    Ok(())
}

/// Move the due time of schedule `id`.
pub fn set_next_fire(conn: &Connection, id: i64, next: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE schedules SET next_fire_at = ?2 WHERE id = ?1",
        params![id, next],
    )?;
    Ok(())
}

/// End schedule `id` and its targets (a one-shot that fired, or a cancel).
pub fn end(tx: &Tx<'_>, id: i64, now: i64) -> Result<(), StoreError> {
    tx.execute(
        "UPDATE schedules SET cancelled_at = ?2 WHERE id = ?1 AND cancelled_at IS NULL",
        params![id, now],
    )?;
    tx.execute(
        "UPDATE schedule_targets SET cancelled_at = ?2 WHERE schedule_id = ?1 AND cancelled_at IS NULL",
        params![id, now],
    )?;
    Ok(())
}

fn live(tx: &Tx<'_>, id: i64) -> Result<Option<Change>, StoreError> {
    Ok(match get_head(tx, id)? {
        None => Some(Change::NotFound),
        Some(h) if h.cancelled_at.is_some() => Some(Change::Ended),
        Some(_) => None,
    })
}

fn cancel_targets(
    tx: &Tx<'_>,
    id: i64,
    names: &[String],
    now: i64,
) -> Result<Option<Change>, StoreError> {
    let active = active_targets(tx, id)?;
    if let Some(missing) = names.iter().find(|n| !active.contains(n)) {
        return Ok(Some(Change::NotATarget(missing.clone())));
    }
    for name in names {
        tx.execute(
            "UPDATE schedule_targets SET cancelled_at = ?3 WHERE schedule_id = ?1 AND target = ?2",
            params![id, name, now],
        )?;
    }
    Ok(None)
}

/// Cancel a schedule (`targets: None`) or some of its targets; cancelling
/// the last active target cancels the schedule.
pub fn cancel(
    conn: &mut Connection,
    id: i64,
    targets: Option<&[String]>,
    now: i64,
) -> Result<Change, StoreError> {
    let tx = immediate(conn)?;
    if let Some(refused) = live(&tx, id)? {
        return Ok(refused);
    }
    if let Some(names) = targets
        && let Some(refused) = cancel_targets(&tx, id, names, now)?
    {
        return Ok(refused);
    }
    if targets.is_none() || active_targets(&tx, id)?.is_empty() {
        end(&tx, id, now)?;
    }
    tx.commit()?;
    Ok(Change::Done)
}

/// Apply an edit (targets to add already validated by the caller).
pub fn edit(
    conn: &mut Connection,
    id: i64,
    edit: &ScheduleEdit,
    now: i64,
) -> Result<Change, StoreError> {
    let tx = immediate(conn)?;
    if let Some(refused) = live(&tx, id)? {
        return Ok(refused);
    }
    if let Some(body) = &edit.body {
        tx.execute(
            "UPDATE schedules SET body = ?2 WHERE id = ?1",
            params![id, body],
        )?;
    }
    if let Some(description) = &edit.description {
        tx.execute(
            "UPDATE schedules SET description = ?2 WHERE id = ?1",
            params![id, description],
        )?;
    }
    if let Some(every) = edit.interval_seconds {
        tx.execute(
            "UPDATE schedules SET interval_seconds = ?2 WHERE id = ?1",
            params![id, interval(every)],
        )?;
    }
    if let Some(at) = edit.next_fire_at_unix {
        tx.execute(
            "UPDATE schedules SET next_fire_at = ?2 WHERE id = ?1",
            params![id, at],
        )?;
    }
    for name in edit.targets_add.iter().flatten() {
        tx.execute(
            "INSERT INTO schedule_targets (schedule_id, target) VALUES (?1, ?2)
             ON CONFLICT (schedule_id, target) DO UPDATE SET cancelled_at = NULL",
            params![id, name],
        )?;
    }
    if let Some(names) = &edit.targets_remove
        && let Some(refused) = cancel_targets(&tx, id, names, now)?
    {
        return Ok(refused);
    }
    if active_targets(&tx, id)?.is_empty() {
        return Ok(Change::NoTargetsLeft);
    }
    tx.commit()?;
    Ok(Change::Done)
}

/// The schedule an approval stored, if any (`source_approval_id`).
pub fn from_approval(conn: &Connection, approval: i64) -> Result<Option<i64>, StoreError> {
    use rusqlite::OptionalExtension;
    Ok(conn
        .query_row(
            "SELECT id FROM schedules WHERE source_approval_id = ?1",
            [approval],
            |r| r.get(0),
        )
        .optional()?)
}

#[cfg(test)]
#[path = "schedules_tests.rs"]
mod tests;
