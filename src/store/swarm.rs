//! The swarm's rows: the outbox of cross-hive messages, the per-pair
//! sequence numbers, and the idempotent insert of a message from another
//! hive.
//!
//! - **Outbox**: a cross-hive `send` commits one `swarm_outbox` row (in the
//!   caller's write transaction, so it is as durable as a local send) with
//!   the next `seq` for its destination hive. The relay publishes unsent
//!   rows oldest first and marks each sent only after the bus acknowledged
//!   it; sent rows are kept for the retention window, then vacuumed.
//! - **Inbound**: a message from hive `S` with sequence `n` is inserted only
//!   when `n` is one past the last inserted from `S` — the check, the insert
//!   and the bump happen in the caller's one transaction — so a second copy
//!   (`n` ≤ last) is recognised and dropped, and a message that arrives
//!   before its predecessor (`n` > last + 1) waits for it. Its swarm-wide id
//!   `<S>.<n>` is kept in `messages.swarm_id`, unique.
//!
//! Rejected alternative: de-duplicating on the swarm-wide id alone (a
//! unique index, `INSERT OR IGNORE`). It drops doubles but lets a
//! redelivered message land after its successor, breaking order per pair.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use super::messages;
use crate::hive::Recipient;
use crate::wire::ident::Ident;

/// One outbox row: a cross-hive message committed here, maybe not yet on
/// the bus.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct OutboxRow {
    pub id: i64,
    pub dest_hive: Ident,
    pub seq: i64,
    pub from: String,
    pub to: String,
    pub body: String,
    pub at: i64,
}

/// What became of a message from another hive.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Inbound {
    /// Stored as this message id.
    Inserted(i64),
    /// Already stored (a redelivery, or a second publish of the same row).
    Duplicate,
    /// Its predecessor has not arrived: `expected` is the seq that must
    /// come first. Nothing was stored.
    Gap { expected: i64 },
}

/// A message from another hive, ready to insert.
#[derive(Debug, Clone, Copy)]
pub struct Arriving<'a> {
    pub source: &'a Ident,
    pub seq: i64,
    /// The swarm-wide id (`crate::hive::address::swarm_id`).
    pub swarm_id: &'a str,
    /// As the inbox shows it: `agent@source`.
    pub from: &'a str,
    pub to: &'a Recipient,
    pub body: &'a str,
    pub at: i64,
}

/// Queue a message for `dest_hive` inside the caller's write transaction;
/// its sequence number for that hive.
pub fn enqueue(
    conn: &Connection,
    dest_hive: &Ident,
    from: &str,
    to: &str,
    body: &str,
    at: i64,
) -> Result<i64, StoreError> {
    let seq: i64 = conn
        .prepare_cached(
            "INSERT INTO swarm_out_seq (dest_hive, last_seq) VALUES (?1, 1)
             ON CONFLICT (dest_hive) DO UPDATE SET last_seq = last_seq + 1
             RETURNING last_seq",
        )?
        .query_row([dest_hive.as_str()], |r| r.get(0))?;
    conn.prepare_cached(
        "INSERT INTO swarm_outbox (dest_hive, seq, sender, recipient, body, at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(params![dest_hive.as_str(), seq, from, to, body, at])?;
    Ok(seq)
}

/// Up to `limit` unsent rows, oldest first.
pub fn unsent(conn: &Connection, limit: u32) -> Result<Vec<OutboxRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, dest_hive, seq, sender, recipient, body, at FROM swarm_outbox
         WHERE sent_at IS NULL ORDER BY id LIMIT ?1",
    )?;
    let rows = stmt.query_map([limit], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, i64>(2)?,
            r.get::<_, String>(3)?,
            r.get::<_, String>(4)?,
            r.get::<_, String>(5)?,
            r.get::<_, i64>(6)?,
        ))
    })?;
    rows.map(|row| {
        let (id, dest, seq, from, to, body, at) = row?;
        let dest_hive = Ident::new(dest)
            .map_err(|e| StoreError::Corrupt(format!("swarm_outbox row {id}: {e}")))?;
        Ok(OutboxRow {
            id,
            dest_hive,
            seq,
            from,
            to,
            body,
            at,
        })
    })
    .collect()
}

/// The bus acknowledged row `id`.
pub fn mark_sent(conn: &Connection, id: i64, now: i64) -> Result<(), StoreError> {
    conn.prepare_cached("UPDATE swarm_outbox SET sent_at = ?2 WHERE id = ?1")?
        .execute(params![id, now])?;
    Ok(())
}

/// How many rows wait for the bus.
pub fn unsent_count(conn: &Connection) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM swarm_outbox WHERE sent_at IS NULL",
        [],
        |r| r.get(0),
    )?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Delete rows the bus acknowledged before `before`; how many.
pub fn vacuum_sent(conn: &Connection, before: i64) -> Result<usize, StoreError> {
    Ok(conn.execute(
        "DELETE FROM swarm_outbox WHERE sent_at IS NOT NULL AND sent_at < ?1",
        [before],
    )?)
}

/// Insert `m` inside the caller's write transaction, if it is the next one
/// from its source hive.
pub fn accept(conn: &Connection, m: &Arriving<'_>) -> Result<Inbound, StoreError> {
    let last = expected_seq(conn, m.source)? - 1;
    if m.seq <= last {
        return Ok(Inbound::Duplicate);
    }
    if m.seq > last + 1 {
        return Ok(Inbound::Gap { expected: last + 1 });
    }
    let id = messages::insert(conn, m.from, m.to, m.body, None, m.at)?;
    conn.prepare_cached("UPDATE messages SET swarm_id = ?2 WHERE id = ?1")?
        .execute(params![id, m.swarm_id])?;
    conn.prepare_cached(
        "INSERT INTO swarm_in_seq (source_hive, last_seq) VALUES (?1, ?2)
         ON CONFLICT (source_hive) DO UPDATE SET last_seq = ?2",
    )?
    .execute(params![m.source.as_str(), m.seq])?;
    Ok(Inbound::Inserted(id))
}

/// The sequence number the next message stored from hive `source` has.
pub fn expected_seq(conn: &Connection, source: &Ident) -> Result<i64, StoreError> {
    let last: i64 = conn
        .prepare_cached("SELECT last_seq FROM swarm_in_seq WHERE source_hive = ?1")?
        .query_row([source.as_str()], |r| r.get(0))
        .optional()?
        .unwrap_or(0);
    Ok(last + 1)
}

#[cfg(test)]
#[path = "swarm_tests.rs"]
mod tests;
