//! Savepoints and the batch's transaction run as cached statements.
//!
//! The writer opens a savepoint per job and most jobs open one more inside
//! it ([`super::immediate`]). rusqlite's `Savepoint` and `execute_batch`
//! parse their SQL text on every use; on the broker's path that parsing was
//! a visible share of the writer's time, so these statements are prepared
//! once per connection (`prepare_cached`) and only stepped afterwards.

use std::ops::Deref;

use rusqlite::Connection;

/// One savepoint name and the three statements over it.
#[derive(Debug, Clone, Copy)]
pub(super) struct Name {
    pub(super) open: &'static str,
    pub(super) release: &'static str,
    pub(super) rollback: &'static str,
}

/// The writer's per-job savepoint.
pub(super) const JOB: Name = Name {
    open: "SAVEPOINT job",
    release: "RELEASE job",
    rollback: "ROLLBACK TO job",
};

/// A transaction nested in a job ([`super::immediate`] inside the batch).
/// Nested ones share the name: `RELEASE`/`ROLLBACK TO` act on the newest
/// savepoint of that name, which is the innermost guard still open.
pub(super) const NESTED: Name = Name {
    open: "SAVEPOINT nested",
    release: "RELEASE nested",
    rollback: "ROLLBACK TO nested",
};

/// Run `sql` (no parameters, no rows) from the connection's statement cache.
pub(super) fn step(conn: &Connection, sql: &str) -> rusqlite::Result<()> {
    conn.prepare_cached(sql)?.execute([]).map(drop)
}

/// An open savepoint: [`Savepoint::release`] keeps its writes; dropping it
/// unreleased rolls them back.
#[derive(Debug)]
pub struct Savepoint<'c> {
    conn: &'c Connection,
    name: Name,
    open: bool,
}

impl<'c> Savepoint<'c> {
    pub(super) fn open(conn: &'c Connection, name: Name) -> rusqlite::Result<Self> {
        step(conn, name.open)?;
        Ok(Self {
            conn,
            name,
            open: true,
        })
    }

    /// Keep the writes (into the enclosing transaction).
    pub fn release(mut self) -> rusqlite::Result<()> {
        self.open = false;
        step(self.conn, self.name.release)
    }
}

impl Drop for Savepoint<'_> {
    fn drop(&mut self) {
        if !self.open {
            return;
        }
        let undone =
            step(self.conn, self.name.rollback).and_then(|()| step(self.conn, self.name.release));
        if let Err(e) = undone {
            tracing::error!("cannot roll back a savepoint ({}): {e}", self.name.open);
        }
    }
}

impl Deref for Savepoint<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        self.conn
    }
}

#[cfg(test)]
#[path = "savepoint_tests.rs"]
mod tests;
