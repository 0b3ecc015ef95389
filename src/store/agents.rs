//! The agent registry: who is managed, where each sits in the topology, and
//! the per-agent facts the roster shows.

use std::collections::BTreeMap;

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::StoreError;
use crate::hive::topology::Tree;
use crate::wire::ident::Ident;

pub use crate::hive::roster::AgentRecord;

const COLUMNS: &str = "name, parent, created_at, status_text, status_set_at, deployed_sha, \
                       needs_update, needs_login, active_model, session_state, session_message, \
                       session_since, COALESCE(paused, 0)";

pub(crate) fn ident(value: String) -> Result<Ident, StoreError> {
    Ident::new(value).map_err(|e| StoreError::Corrupt(e.to_string()))
}

fn from_row(row: &Row<'_>) -> rusqlite::Result<(String, Option<String>, AgentRecordRest)> {
    Ok((
        row.get(0)?,
        row.get(1)?,
        AgentRecordRest {
            created_at: row.get(2)?,
            status_text: row.get(3)?,
            status_set_at: row.get(4)?,
            deployed_sha: row.get(5)?,
            needs_update: row.get(6)?,
            needs_login: row.get(7)?,
            active_model: row.get(8)?,
            session: (row.get(9)?, row.get(10)?, row.get(11)?),
            paused: row.get(12)?,
        },
    ))
}

struct AgentRecordRest {
    created_at: i64,
    status_text: Option<String>,
    status_set_at: Option<i64>,
    deployed_sha: Option<String>,
    needs_update: bool,
    needs_login: bool,
    active_model: Option<String>,
    session: (Option<String>, Option<String>, Option<i64>),
    paused: bool,
}

fn build(
    (name, parent, rest): (String, Option<String>, AgentRecordRest),
) -> Result<AgentRecord, StoreError> {
    Ok(AgentRecord {
        name: ident(name)?,
        parent: parent.map(ident).transpose()?,
        created_at: rest.created_at,
        status_text: rest.status_text,
        status_set_at: rest.status_set_at,
        deployed_sha: rest.deployed_sha,
        needs_update: rest.needs_update,
        needs_login: rest.needs_login,
        active_model: rest.active_model,
        session: super::hooks::attention(rest.session)?,
        paused: rest.paused,
    })
}

/// Every managed agent, by name.
pub fn all(conn: &Connection) -> Result<Vec<AgentRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM agents ORDER BY name"))?;
    let rows = stmt.query_map([], from_row)?;
    rows.map(|r| build(r?)).collect()
}

/// How many agents are managed (the manager included).
pub fn count(conn: &Connection) -> Result<usize, StoreError> {
    let n: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM agents")?
        .query_row([], |r| r.get(0))?;
    Ok(usize::try_from(n).unwrap_or(usize::MAX))
}

/// One agent, if managed.
pub fn get(conn: &Connection, name: &Ident) -> Result<Option<AgentRecord>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!("SELECT {COLUMNS} FROM agents WHERE name = ?1"))?;
    stmt.query_row([name.as_str()], from_row)
        .optional()?
        .map(build)
        .transpose()
}

/// The topology: every agent's parent. Read on every `send` (to resolve
/// `<parent>`/`<children>` and check the recipient), so it reads the two
/// columns it needs, not whole records (which made it the broker's hottest
/// path).
pub fn parents(conn: &Connection) -> Result<BTreeMap<Ident, Option<Ident>>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT name, parent FROM agents")?;
    let rows = stmt.query_map([], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, Option<String>>(1)?))
    })?;
    rows.map(|r| {
        let (name, parent) = r?;
        Ok((ident(name)?, parent.map(ident).transpose()?))
    })
    .collect()
}

/// The registry answering the broker's questions of the tree
/// ([`Tree`]) one indexed lookup at a time, inside the caller's
/// transaction: a send reads the row it needs, not every agent.
#[derive(Debug, Clone, Copy)]
pub struct Registry<'c>(pub &'c Connection);

impl Tree for Registry<'_> {
    type Error = StoreError;

    fn contains(&self, name: &Ident) -> Result<bool, StoreError> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT 1 FROM agents WHERE name = ?1")?;
        Ok(stmt.exists([name.as_str()])?)
    }

    fn parent_of(&self, name: &Ident) -> Result<Option<Ident>, StoreError> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT parent FROM agents WHERE name = ?1")?;
        let parent: Option<Option<String>> =
            stmt.query_row([name.as_str()], |r| r.get(0)).optional()?;
        parent.flatten().map(ident).transpose()
    }

    fn children(&self, name: &Ident) -> Result<Vec<Ident>, StoreError> {
        let mut stmt = self
            .0
            .prepare_cached("SELECT name FROM agents WHERE parent = ?1 ORDER BY name")?;
        let rows = stmt.query_map([name.as_str()], |r| r.get::<_, String>(0))?;
        rows.map(|r| ident(r?)).collect()
    }
}

/// Register an agent. Returns false if it already was.
pub fn insert(
    conn: &Connection,
    name: &Ident,
    parent: Option<&Ident>,
    at: i64,
) -> Result<bool, StoreError> {
    let n = conn.execute(
        "INSERT OR IGNORE INTO agents (name, parent, created_at, paused) VALUES (?1, ?2, ?3, 0)",
        params![name.as_str(), parent.map(Ident::as_str), at],
    )?;
    Ok(n == 1)
}

/// Forget an agent. Its children move to its parent.
pub fn remove(conn: &Connection, name: &Ident) -> Result<bool, StoreError> {
    conn.execute(
        "UPDATE agents SET parent = (SELECT parent FROM agents WHERE name = ?1) WHERE parent = ?1",
        [name.as_str()],
    )?;
    conn.execute("DELETE FROM hook_events WHERE agent = ?1", [name.as_str()])?;
    end(conn, name)?;
    Ok(conn.execute("DELETE FROM agents WHERE name = ?1", [name.as_str()])? == 1)
}

/// A lifecycle operation in progress on an agent, recorded before its
/// container is touched.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Intent {
    Spawn,
    Destroy,
    /// A destroy that also deletes the agent's state.
    Purge,
}

impl Intent {
    /// The operation's name, as the log says it.
    pub fn verb(self) -> &'static str {
        match self {
            Intent::Spawn => "spawn",
            Intent::Destroy => "destroy",
            Intent::Purge => "destroy --purge",
        }
    }

    fn as_str(self) -> &'static str {
        match self {
            Intent::Spawn => "spawn",
            Intent::Destroy => "destroy",
            Intent::Purge => "purge",
        }
    }
}

/// Record that `intent` has begun on `name`. A destroy replaces a spawn; a
/// purge is never narrowed back to a plain destroy.
pub fn begin(conn: &Connection, name: &Ident, intent: Intent, at: i64) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO lifecycle_intents (agent, op, at) VALUES (?1, ?2, ?3)
         ON CONFLICT (agent) DO UPDATE SET at = ?3,
             op = CASE WHEN op = 'purge' AND ?2 = 'destroy' THEN op ELSE ?2 END",
        params![name.as_str(), intent.as_str(), at],
    )?;
    Ok(())
}

/// `name`'s operation is done (however it went).
pub fn end(conn: &Connection, name: &Ident) -> Result<(), StoreError> {
    conn.execute(
        "DELETE FROM lifecycle_intents WHERE agent = ?1",
        [name.as_str()],
    )?;
    Ok(())
}

/// The operation in progress on `name`, if any.
pub fn unfinished_of(conn: &Connection, name: &Ident) -> Result<Option<Intent>, StoreError> {
    Ok(unfinished_where(conn, Some(name))?.pop().map(|(_, i)| i))
}

/// The operations a stopped daemon left unfinished, by agent.
pub fn unfinished(conn: &Connection) -> Result<Vec<(Ident, Intent)>, StoreError> {
    unfinished_where(conn, None)
}

fn unfinished_where(
    conn: &Connection,
    name: Option<&Ident>,
) -> Result<Vec<(Ident, Intent)>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT agent, op FROM lifecycle_intents WHERE ?1 IS NULL OR agent = ?1 ORDER BY agent",
    )?;
    let rows = stmt.query_map([name.map(Ident::as_str)], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
    })?;
    rows.map(|r| {
        let (name, op) = r?;
        let intent = match op.as_str() {
            "spawn" => Intent::Spawn,
            "destroy" => Intent::Destroy,
            "purge" => Intent::Purge,
            other => return Err(StoreError::Corrupt(format!("lifecycle intent {other:?}"))),
        };
        Ok((ident(name)?, intent))
    })
    .collect()
}

/// Set an agent's parent (`None` = root).
pub fn set_parent(
    conn: &Connection,
    child: &Ident,
    parent: Option<&Ident>,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE agents SET parent = ?2 WHERE name = ?1",
        params![child.as_str(), parent.map(Ident::as_str)],
    )?;
    Ok(())
}

/// Record the config commit an agent now runs (the applied repo's `main`).
pub fn set_deployed(conn: &Connection, name: &Ident, sha: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE agents SET deployed_sha = ?2 WHERE name = ?1",
        params![name.as_str(), sha],
    )?;
    Ok(())
}

/// Set or clear an agent's `needs_update`; whether it changed (`false`
/// for an unknown agent, or when it already was so).
pub fn set_needs_update(conn: &Connection, name: &Ident, on: bool) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE agents SET needs_update = ?2 WHERE name = ?1 AND needs_update != ?2",
        params![name.as_str(), on],
    )?;
    Ok(changed > 0)
}

/// Pause (`true`) or resume an agent's turns; whether it changed (`false`
/// for an unknown agent, or when it already was so).
pub fn set_paused(conn: &Connection, name: &Ident, on: bool) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE agents SET paused = ?2 WHERE name = ?1 AND paused IS NOT ?2",
        params![name.as_str(), on],
    )?;
    Ok(changed > 0)
}

/// Agents registered before the pause moved into the store (migration
/// 16), whose flag is still to be taken from their old marker file.
pub fn pause_undecided(conn: &Connection) -> Result<Vec<Ident>, StoreError> {
    let mut stmt = conn.prepare_cached("SELECT name FROM agents WHERE paused IS NULL")?;
    let names = stmt.query_map([], |r| r.get::<_, String>(0))?;
    names.map(|n| ident(n?)).collect()
}

/// Set (or, with `None`, clear) an agent's free-text status.
pub fn set_status(
    conn: &Connection,
    name: &Ident,
    text: Option<&str>,
    at: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE agents SET status_text = ?2, status_set_at = CASE WHEN ?2 IS NULL THEN NULL ELSE ?3 END
         WHERE name = ?1",
        params![name.as_str(), text, at],
    )?;
    Ok(())
}

/// Record what an agent's harness reports of its Claude session (an
/// absent value is left as it was); the `needs_login` it had before, or
/// `None` when no such agent is managed.
pub fn set_session(
    conn: &Connection,
    name: &Ident,
    needs_login: Option<bool>,
    active_model: Option<&str>,
) -> Result<Option<bool>, StoreError> {
    let before: Option<bool> = conn
        .query_row(
            "SELECT needs_login FROM agents WHERE name = ?1",
            [name.as_str()],
            |r| r.get(0),
        )
        .optional()?;
    conn.execute(
        "UPDATE agents SET needs_login = COALESCE(?2, needs_login),
                           active_model = COALESCE(?3, active_model)
         WHERE name = ?1",
        params![name.as_str(), needs_login, active_model],
    )?;
    Ok(before)
}

/// Record that an agent's container died without an operator stop.
pub fn record_crash(
    conn: &Connection,
    name: &Ident,
    at: i64,
    result: &str,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO crashes (agent, at, result) VALUES (?1, ?2, ?3)",
        params![name.as_str(), at, result],
    )?;
    Ok(())
}

/// Crash records of an agent, oldest first: `(at, result)`.
pub fn crashes(conn: &Connection, name: &Ident) -> Result<Vec<(i64, String)>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT at, result FROM crashes WHERE agent = ?1 ORDER BY id")?;
    let rows = stmt.query_map([name.as_str()], |r| Ok((r.get(0)?, r.get(1)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
#[path = "agents_tests.rs"]
mod tests;
