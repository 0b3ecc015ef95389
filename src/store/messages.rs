//! The broker's message table: every message accepted is a row before it is
//! acknowledged, so nothing acknowledged is lost across a crash.
//!
//! A row moves `pending` → `inflight` (popped by `recv`, in the same write
//! transaction that selected it, so two concurrent pops cannot both take
//! it) → `handled` (`ack_turn`). `requeue_inflight` moves `inflight` back
//! to `pending` and marks it `redelivered`. Handled rows are kept for an
//! audit window, then [`vacuum`]ed. Rows for the operator stay `pending`:
//! nobody `recv`s them, the operator's inbox lists them.

use rusqlite::{Connection, params};

use super::{StoreError, immediate};
use crate::hive::Recipient;
use crate::hive::broker::InboxLoad;
use crate::wire::agent::{DeliveredMessage, InboxRow};
use crate::wire::ident::Ident;

/// Store a pending message; its id.
pub fn insert(
    conn: &Connection,
    from: &str,
    to: &Recipient,
    body: &str,
    in_reply_to: Option<i64>,
    at: i64,
) -> Result<i64, StoreError> {
    let mut stmt = conn.prepare_cached(
        "INSERT INTO messages (sender, recipient, body, in_reply_to, at) VALUES (?1, ?2, ?3, ?4, ?5)",
    )?;
    stmt.execute(params![from, to.as_str(), body, in_reply_to, at])?;
    Ok(conn.last_insert_rowid())
}

/// The pending rows of `?1`, oldest first. Neither a bound `LIMIT ?` nor
/// `recipient = ?1` against the partial index: either makes SQLite re-plan
/// the statement whenever the bound value changes (a parse on the broker's
/// hottest path); the `CAST` keeps the index and ordered scan, and stepping
/// stops after `max` rows.
const POP: &str = "SELECT id, sender, body, redelivered, in_reply_to FROM messages
     WHERE recipient = CAST(?1 AS TEXT) AND state = 'pending' ORDER BY id";

/// Take up to `max` pending messages of `agent`, oldest first, whose bodies
/// fit in `max_bytes` (the first always goes), and mark them in flight —
/// one write transaction, so no row is handed out twice.
pub fn pop(
    conn: &mut Connection,
    agent: &Ident,
    max: u32,
    max_bytes: usize,
    now: i64,
) -> Result<Vec<DeliveredMessage>, StoreError> {
    let tx = immediate(conn)?;
    let popped = {
        let mut select = tx.prepare_cached(POP)?;
        let rows = select.query_map([agent.as_str()], |r| {
            Ok(DeliveredMessage {
                id: r.get(0)?,
                from: r.get(1)?,
                body: r.get(2)?,
                redelivered: r.get(3)?,
                in_reply_to: r.get(4)?,
            })
        })?;
        let rows = rows.take(usize::try_from(max).unwrap_or(usize::MAX));
        let popped = within_bytes(rows, max_bytes, |m| m.body.len())?.0;
        let mut mark = tx.prepare_cached(
            "UPDATE messages SET state = 'inflight', popped_at = ?2 WHERE id = ?1",
        )?;
        for m in &popped {
            mark.execute(params![m.id, now])?;
        }
        popped
    };
    tx.commit()?;
    Ok(popped)
}

/// Every in-flight message of `agent` becomes handled; how many.
pub fn ack(conn: &Connection, agent: &Ident, now: i64) -> Result<usize, StoreError> {
    let mut stmt = conn.prepare_cached(
        "UPDATE messages SET state = 'handled', handled_at = ?2
         WHERE recipient = ?1 AND state = 'inflight'",
    )?;
    Ok(stmt.execute(params![agent.as_str(), now])?)
}

/// Every in-flight message of `agent` goes back to pending, marked
/// redelivered; how many.
pub fn requeue(conn: &Connection, agent: &Ident) -> Result<usize, StoreError> {
    let mut stmt = conn.prepare_cached(
        "UPDATE messages SET state = 'pending', redelivered = 1, popped_at = NULL
         WHERE recipient = ?1 AND state = 'inflight'",
    )?;
    Ok(stmt.execute([agent.as_str()])?)
}

/// Put these in-flight messages of `agent` back to pending, marked
/// redelivered (their answer could not be written); how many.
pub fn requeue_ids(conn: &mut Connection, agent: &Ident, ids: &[i64]) -> Result<usize, StoreError> {
    let tx = immediate(conn)?;
    let mut n = 0;
    {
        let mut stmt = tx.prepare_cached(
            "UPDATE messages SET state = 'pending', redelivered = 1, popped_at = NULL
             WHERE id = ?1 AND recipient = ?2 AND state = 'inflight'",
        )?;
        for id in ids {
            n += stmt.execute(params![id, agent.as_str()])?;
        }
    }
    tx.commit()?;
    Ok(n)
}

/// How full `recipient`'s inbox is: pending messages and their body bytes
/// (`octet_length` reads the stored length, not the bodies).
pub fn inbox_load(conn: &Connection, recipient: &Recipient) -> Result<InboxLoad, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT COUNT(*), COALESCE(SUM(octet_length(body)), 0) FROM messages
         WHERE recipient = ?1 AND state = 'pending'",
    )?;
    let (messages, bytes): (i64, i64) =
        stmt.query_row([recipient.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(InboxLoad {
        messages: u64::try_from(messages).unwrap_or(0),
        bytes: u64::try_from(bytes).unwrap_or(0),
    })
}

/// How many messages wait for `recipient`.
pub fn pending_count(conn: &Connection, recipient: &Recipient) -> Result<u64, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT COUNT(*) FROM messages WHERE recipient = ?1 AND state = 'pending'",
    )?;
    let n: i64 = stmt.query_row([recipient.as_str()], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// How many messages wait, by recipient (those with none left out).
pub fn pending_by_recipient(
    conn: &Connection,
) -> Result<std::collections::HashMap<String, u64>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT recipient, COUNT(*) FROM messages WHERE state = 'pending' GROUP BY recipient",
    )?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, i64>(1)?)))?;
    rows.map(|r| {
        let (recipient, n) = r?;
        Ok((recipient, u64::try_from(n).unwrap_or(0)))
    })
    .collect()
}

/// Rows from `rows` while their sizes fit in `max_bytes` (the first always
/// goes, so a reader always makes progress); whether some were left.
fn within_bytes<T>(
    rows: impl Iterator<Item = rusqlite::Result<T>>,
    max_bytes: usize,
    size: impl Fn(&T) -> usize,
) -> Result<(Vec<T>, bool), StoreError> {
    let (mut out, mut used) = (Vec::new(), 0usize);
    for row in rows {
        let row = row?;
        used = used.saturating_add(size(&row));
        if used > max_bytes && !out.is_empty() {
            return Ok((out, true));
        }
        out.push(row);
    }
    Ok((out, false))
}

/// The newest `limit` messages to `recipient` in any state, newest first,
/// whose bodies fit in `max_bytes` (the first always goes); whether rows
/// were left out for the byte budget.
pub fn recent(
    conn: &Connection,
    recipient: &Recipient,
    limit: u64,
    max_bytes: usize,
) -> Result<(Vec<InboxRow>, bool), StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, sender, body, at, in_reply_to FROM messages
         WHERE recipient = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = stmt.query_map(params![recipient.as_str(), limit], |r| {
        Ok(InboxRow {
            id: r.get(0)?,
            from: r.get(1)?,
            body: r.get(2)?,
            at: r.get(3)?,
            in_reply_to: r.get(4)?,
        })
    })?;
    within_bytes(rows, max_bytes, |r| r.body.len())
}

/// Delete handled messages acknowledged before `before`; how many.
pub fn vacuum(conn: &Connection, before: i64) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "DELETE FROM messages WHERE state = 'handled' AND handled_at < ?1",
        [before],
    )?)
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
