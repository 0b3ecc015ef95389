//! The broker's message table: every message accepted is a row before it is
//! acknowledged, so nothing acknowledged is lost across a crash.
//!
//! A row is `pending` until its recipient's `ack_turn` makes it `handled`
//! ([`settle`]). Which pending rows are in flight (handed to a `recv`, not
//! yet acked) is the service's memory (`service/messaging/queue_state.rs`); the table
//! keeps it only as `popped_at`, written with the writer's next commit
//! rather than waited for ([`mark_popped`]): a `recv` costs no durable
//! write of its own, and no index page (the column is in no index). At
//! start the rows with `popped_at` are in flight again ([`queued`]), so a
//! harness that outlived a daemon crash acks or requeues them as before.
//! Requeueing ([`requeue_ids`]) clears `popped_at` and marks the row
//! `redelivered`. Handled rows are kept for an audit window, then
//! [`vacuum`]ed. Rows for the operator stay `pending`: nobody `recv`s
//! them, the operator's inbox lists them.
//!
//! The history by recipient (`recent`, a purge) is `message_index`, kept
//! behind the table rather than with each insert: [`index_tail`] indexes
//! the rows past its mark once a second, and readers take the rows past
//! the mark by id. An index maintained with every insert put one leaf
//! page per recipient into every commit, most of the WAL a message cost.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::hive::Recipient;
use crate::wire::agent::InboxRow;
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

/// A pending row of some agent's inbox, as the service keeps it in memory.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueuedRow {
    pub id: i64,
    pub recipient: String,
    /// The body's length in bytes.
    pub len: u64,
    pub redelivered: bool,
    /// Handed to a `recv` and not acked when the daemon last stopped.
    pub popped: bool,
}

const QUEUED: &str = "SELECT id, recipient, octet_length(body), redelivered, popped_at IS NOT NULL
     FROM messages WHERE state = 'pending' AND recipient <> 'operator'";

fn queued_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<QueuedRow> {
    Ok(QueuedRow {
        id: r.get(0)?,
        recipient: r.get(1)?,
        len: u64::try_from(r.get::<_, i64>(2)?).unwrap_or(0),
        redelivered: r.get(3)?,
        popped: r.get(4)?,
    })
}

/// Every agent's pending rows, oldest first (the operator's are not
/// queued: nobody `recv`s them).
pub fn queued(conn: &Connection) -> Result<Vec<QueuedRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("{QUEUED} ORDER BY id"))?;
    let rows = stmt.query_map([], queued_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// `agent`'s pending rows, oldest first.
pub fn queued_of(conn: &Connection, agent: &Ident) -> Result<Vec<QueuedRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "{QUEUED} AND recipient = CAST(?1 AS TEXT) ORDER BY id"
    ))?;
    let rows = stmt.query_map([agent.as_str()], queued_row)?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// A pending row's content, read when it is handed out.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Stored {
    pub id: i64,
    pub from: String,
    pub body: String,
    pub in_reply_to: Option<i64>,
}

/// The content of each pending row of `ids` still in the table, in the
/// order of `ids` (a row purged meanwhile is left out).
pub fn bodies(conn: &Connection, ids: &[i64]) -> Result<Vec<Stored>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT sender, body, in_reply_to FROM messages WHERE id = ?1 AND state = 'pending'",
    )?;
    let mut out = Vec::with_capacity(ids.len());
    for &id in ids {
        let row = stmt.query_row([id], |r| {
            Ok(Stored {
                id,
                from: r.get(0)?,
                body: r.get(1)?,
                in_reply_to: r.get(2)?,
            })
        });
        match row {
            Ok(row) => out.push(row),
            Err(rusqlite::Error::QueryReturnedNoRows) => {}
            Err(e) => return Err(e.into()),
        }
    }
    Ok(out)
}

/// `ids` as a JSON array, for `json_each`: one statement over any number
/// of rows (atomic by itself, one prepared plan).
fn id_list(ids: &[i64]) -> String {
    let mut list = String::with_capacity(2 + ids.len() * 8);
    list.push('[');
    for (n, id) in ids.iter().enumerate() {
        if n > 0 {
            list.push(',');
        }
        list.push_str(&id.to_string());
    }
    list.push(']');
    list
}

/// Record that these pending rows were handed to a `recv` at `at`.
pub fn mark_popped(conn: &Connection, ids: &[i64], at: i64) -> Result<(), StoreError> {
    let mut stmt = conn.prepare_cached(
        "UPDATE messages SET popped_at = ?2
         WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'pending'",
    )?;
    stmt.execute(params![id_list(ids), at])?;
    Ok(())
}

/// These pending rows are handled (their turn was acked); how many. One
/// statement either way; a turn of one message (the common case) by its
/// key alone: the `json_each` form costs twice the CPU of the keyed one.
pub fn settle(conn: &Connection, ids: &[i64], now: i64) -> Result<usize, StoreError> {
    if let [id] = ids {
        let mut stmt = conn.prepare_cached(
            "UPDATE messages SET state = 'handled', handled_at = ?2
             WHERE id = ?1 AND state = 'pending'",
        )?;
        return Ok(stmt.execute(params![id, now])?);
    }
    let mut stmt = conn.prepare_cached(
        "UPDATE messages SET state = 'handled', handled_at = ?2
         WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'pending'",
    )?;
    Ok(stmt.execute(params![id_list(ids), now])?)
}

/// These pending rows go back to waiting, marked redelivered; how many.
pub fn requeue_ids(conn: &Connection, ids: &[i64]) -> Result<usize, StoreError> {
    let mut stmt = conn.prepare_cached(
        "UPDATE messages SET redelivered = 1, popped_at = NULL
         WHERE id IN (SELECT value FROM json_each(?1)) AND state = 'pending'",
    )?;
    Ok(stmt.execute([id_list(ids)])?)
}

/// How many messages wait (not handed to a `recv`; one handed out a
/// moment ago may count until its mark is written), by recipient (those
/// with none left out).
pub fn pending_by_recipient(
    conn: &Connection,
) -> Result<std::collections::HashMap<String, u64>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT recipient, COUNT(*) FROM messages WHERE state = 'pending' AND popped_at IS NULL
         GROUP BY recipient",
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
/// were left out for the byte budget. The rows past the index's mark are
/// read by id (a second of traffic at most, see [`index_tail`]), the rest
/// through `message_index`; both in one read transaction, so a chore
/// moving the mark between them cannot hide or double a row.
pub fn recent(
    conn: &Connection,
    recipient: &Recipient,
    limit: u64,
    max_bytes: usize,
) -> Result<(Vec<InboxRow>, bool), StoreError> {
    // Inside the writer's batch (an in-memory store's reads) the batch's
    // transaction is the snapshot already.
    let snapshot = if conn.is_autocommit() {
        Some(conn.unchecked_transaction()?)
    } else {
        None
    };
    let mut tail = conn.prepare_cached(
        "SELECT id, sender, body, at, in_reply_to FROM messages
         WHERE id > (SELECT upto FROM message_index_mark) AND recipient = ?1
         ORDER BY id DESC LIMIT ?2",
    )?;
    let mut indexed = conn.prepare_cached(
        "SELECT m.id, m.sender, m.body, m.at, m.in_reply_to
         FROM message_index i JOIN messages m ON m.id = i.id
         WHERE i.recipient = ?1 AND i.id <= (SELECT upto FROM message_index_mark)
         ORDER BY i.id DESC LIMIT ?2",
    )?;
    let row = inbox_row;
    let to = recipient.as_str();
    let sql_limit = i64::try_from(limit).unwrap_or(i64::MAX);
    let rows = tail
        .query_map(params![to, sql_limit], row)?
        .chain(indexed.query_map(params![to, sql_limit], row)?)
        .take(usize::try_from(limit).unwrap_or(usize::MAX));
    let found = within_bytes(rows, max_bytes, |r| r.body.len());
    drop(snapshot);
    found
}

/// An [`InboxRow`] from a row selecting `id, sender, body, at,
/// in_reply_to`, in that order.
fn inbox_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<InboxRow> {
    Ok(InboxRow {
        id: r.get(0)?,
        from: r.get(1)?,
        body: r.get(2)?,
        at: r.get(3)?,
        in_reply_to: r.get(4)?,
    })
}

/// The message `id` to `recipient`, whole, in any state; `None` when
/// there is none (never sent to it, or vacuumed).
pub fn one(
    conn: &Connection,
    recipient: &Recipient,
    id: i64,
) -> Result<Option<InboxRow>, StoreError> {
    let mut one = conn.prepare_cached(
        "SELECT id, sender, body, at, in_reply_to FROM messages WHERE id = ?1 AND recipient = ?2",
    )?;
    let mut rows = one.query_map(params![id, recipient.as_str()], inbox_row)?;
    Ok(rows.next().transpose()?)
}

/// Index by recipient the rows past `message_index_mark` and move the mark
/// to the newest row; how many were indexed. The writer runs it at most
/// once a second inside a batch of its own jobs (`writer::Chore`), so an
/// insert costs no index page of its own: the history index is written
/// once per recipient per second, not once per recipient per commit.
pub fn index_tail(conn: &Connection) -> Result<usize, StoreError> {
    let n = conn
        .prepare_cached(
            "INSERT OR IGNORE INTO message_index
             SELECT recipient, id FROM messages WHERE id > (SELECT upto FROM message_index_mark)
             ORDER BY recipient, id",
        )?
        .execute([])?;
    if n > 0 {
        conn.prepare_cached(
            "UPDATE message_index_mark SET upto = (SELECT MAX(id) FROM messages) WHERE one = 1",
        )?
        .execute([])?;
    }
    Ok(n)
}

/// Delete every message to `recipient` and its index rows; how many
/// messages.
pub fn delete_to(conn: &Connection, recipient: &str) -> Result<usize, StoreError> {
    let indexed = conn.execute(
        "DELETE FROM messages WHERE id IN (SELECT id FROM message_index WHERE recipient = ?1)",
        [recipient],
    )?;
    let tail = conn.execute(
        "DELETE FROM messages
         WHERE id > (SELECT upto FROM message_index_mark) AND recipient = ?1",
        [recipient],
    )?;
    conn.execute(
        "DELETE FROM message_index WHERE recipient = ?1",
        [recipient],
    )?;
    Ok(indexed + tail)
}

/// Delete handled messages acknowledged before `before`, and their index
/// rows; how many messages.
pub fn vacuum(conn: &Connection, before: i64) -> Result<usize, StoreError> {
    conn.execute(
        "DELETE FROM message_index WHERE (recipient, id) IN
         (SELECT recipient, id FROM messages WHERE state = 'handled' AND handled_at < ?1)",
        [before],
    )?;
    Ok(conn.execute(
        "DELETE FROM messages WHERE state = 'handled' AND handled_at < ?1",
        [before],
    )?)
}

#[cfg(test)]
#[path = "messages_tests.rs"]
mod tests;
