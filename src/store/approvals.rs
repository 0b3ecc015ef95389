//! The approval queue. Rows are never deleted: the table is the audit trail.
//! The rules of who may move a row live in [`crate::hive::approvals`]; the
//! service applies them with this module's reads and writes.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::{StoreError, agents::ident, immediate};
use crate::wire::host::{Approval, ApprovalKind, ApprovalStatus};
use crate::wire::ident::Ident;

/// How many resolved rows `list` returns after the pending ones.
pub const RECENT_RESOLVED: u32 = 50;

pub use crate::hive::approvals::NewApproval;

const COLUMNS: &str = "id, agent, kind, commit_ref, fetched_sha, requested_at, status, \
                       resolved_at, note, description, claimed";

/// One row and whether an approve has claimed it, read in one pass: a
/// database error ends the query (the outer result); a row whose kind,
/// status or agent name this build does not know is corrupt (the inner one).
fn read(r: &Row<'_>) -> rusqlite::Result<Result<(Approval, bool), StoreError>> {
    let id: i64 = r.get(0)?;
    let (agent, kind, status): (String, String, String) = (r.get(1)?, r.get(2)?, r.get(6)?);
    let checked = ApprovalKind::parse(&kind)
        .ok_or_else(|| StoreError::Corrupt(format!("approval {id} has kind {kind:?}")))
        .and_then(|kind| {
            let status = ApprovalStatus::parse(&status).ok_or_else(|| {
                StoreError::Corrupt(format!("approval {id} has status {status:?}"))
            })?;
            Ok((kind, status, ident(agent)?))
        });
    let (kind, status, agent) = match checked {
        Ok(checked) => checked,
        Err(corrupt) => return Ok(Err(corrupt)),
    };
    let approval = Approval {
        id,
        agent,
        kind,
        commit_ref: r.get(3)?,
        fetched_sha: r.get(4)?,
        requested_at: r.get(5)?,
        status,
        resolved_at: r.get(7)?,
        note: r.get(8)?,
        description: r.get(9)?,
    };
    Ok(Ok((approval, r.get(10)?)))
}

/// One row and whether an approve has claimed it.
pub fn get_with_claim(conn: &Connection, id: i64) -> Result<Option<(Approval, bool)>, StoreError> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM approvals WHERE id = ?1"))?;
    stmt.query_row([id], read).optional()?.transpose()
}

/// One row.
pub fn get(conn: &Connection, id: i64) -> Result<Option<Approval>, StoreError> {
    Ok(get_with_claim(conn, id)?.map(|(a, _)| a))
}

/// Add a pending row.
pub fn insert(conn: &Connection, new: &NewApproval, at: i64) -> Result<Approval, StoreError> {
    conn.execute(
        "INSERT INTO approvals (agent, kind, commit_ref, requested_at, description)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![
            new.agent.as_str(),
            new.kind.as_str(),
            new.commit_ref,
            at,
            new.description
        ],
    )?;
    let id = conn.last_insert_rowid();
    get(conn, id)?.ok_or_else(|| StoreError::Corrupt(format!("approval {id} vanished")))
}

/// Every pending row, then the most recent resolved ones; by id.
pub fn list(conn: &Connection) -> Result<Vec<Approval>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM approvals WHERE status = 'pending'
         UNION ALL
         SELECT * FROM (SELECT {COLUMNS} FROM approvals WHERE status != 'pending'
                        ORDER BY id DESC LIMIT ?1)
         ORDER BY id"
    ))?;
    let rows = stmt.query_map([RECENT_RESOLVED], read)?;
    rows.map(|r| Ok(r??.0)).collect()
}

/// Pending rows only.
pub fn pending(conn: &Connection) -> Result<Vec<Approval>, StoreError> {
    Ok(list(conn)?
        .into_iter()
        .filter(|a| a.status == ApprovalStatus::Pending)
        .collect())
}

/// The pending rows `agent` asked for (who asked: the kind says,
/// [`crate::hive::approvals::requester`]); `manager` is the hive's. Rows
/// about the agent are read by the index on `status`, then kept if the
/// agent asked them; the manager's are every pending row of its kinds.
pub fn pending_requested_by(
    conn: &Connection,
    agent: &Ident,
    manager: &Ident,
) -> Result<Vec<Approval>, StoreError> {
    use crate::hive::approvals::{Requester, requester};
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM approvals WHERE status = 'pending' AND (agent = ?1 OR ?2)"
    ))?;
    let rows = stmt.query_map(params![agent.as_str(), agent == manager], read)?;
    let mut out = Vec::new();
    for r in rows {
        let row = r??.0;
        if requester(row.kind, &row.agent, manager) == Requester::Agent(agent.clone()) {
            out.push(row);
        }
    }
    Ok(out)
}

/// How many rows are pending.
pub fn pending_count(conn: &Connection) -> Result<u64, StoreError> {
    let n: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM approvals WHERE status = 'pending'")?
        .query_row([], |r| r.get(0))?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Mark a pending row as claimed by an approve running its action.
pub fn claim(conn: &Connection, id: i64) -> Result<(), StoreError> {
    conn.execute("UPDATE approvals SET claimed = 1 WHERE id = ?1", [id])?;
    Ok(())
}

/// Record the commit a proposal was fetched as (`proposal/<id>`).
pub fn set_fetched(conn: &Connection, id: i64, sha: &str) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE approvals SET fetched_sha = ?2 WHERE id = ?1",
        params![id, sha],
    )?;
    Ok(())
}

/// Let go of a pending row the hive held (claimed) while it fetched and
/// validated its proposal: decisions may now be taken on it.
pub fn unclaim(conn: &Connection, id: i64) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE approvals SET claimed = 0 WHERE id = ?1 AND status = 'pending'",
        [id],
    )?;
    Ok(())
}

/// End pending row `id` with `status` (and `note`, kept when `None`).
pub fn end(
    conn: &Connection,
    id: i64,
    status: ApprovalStatus,
    note: Option<&str>,
    at: i64,
) -> Result<(), StoreError> {
    conn.execute(
        "UPDATE approvals SET status = ?2, note = COALESCE(?3, note), resolved_at = ?4, claimed = 0
         WHERE id = ?1 AND status = 'pending'",
        params![id, status.as_str(), note, at],
    )?;
    Ok(())
}

/// End every pending row `select` picks with `status` and `note`, in one
/// write transaction, calling `ended` on each in that transaction (the
/// service records the manager's event there); the rows as they ended.
fn end_all(
    conn: &mut Connection,
    select: &str,
    params: impl rusqlite::Params,
    status: ApprovalStatus,
    note: &str,
    at: i64,
    mut ended: impl FnMut(&Connection, &Approval) -> Result<(), StoreError>,
) -> Result<Vec<Approval>, StoreError> {
    let tx = immediate(conn)?;
    let ids: Vec<i64> = {
        let mut stmt = tx.prepare_cached(select)?;
        let rows = stmt.query_map(params, |r| r.get(0))?;
        rows.collect::<Result<_, _>>()?
    };
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        end(&tx, id, status, Some(note), at)?;
        if let Some(row) = get(&tx, id)? {
            ended(&tx, &row)?;
            out.push(row);
        }
    }
    tx.commit()?;
    Ok(out)
}

/// Cancel every pending row of `agent` (it was destroyed), calling `ended`
/// on each inside the transaction.
pub fn cancel_pending_of(
    conn: &mut Connection,
    agent: &Ident,
    note: &str,
    at: i64,
    ended: impl FnMut(&Connection, &Approval) -> Result<(), StoreError>,
) -> Result<Vec<Approval>, StoreError> {
    let select = "SELECT id FROM approvals WHERE agent = ?1 AND status = 'pending' AND claimed = 0";
    end_all(
        conn,
        select,
        [agent.as_str()],
        ApprovalStatus::Cancelled,
        note,
        at,
        ended,
    )
}

/// Rows claimed by a daemon that died while running their action (the
/// service finds out what happened and ends each).
pub fn interrupted(conn: &Connection) -> Result<Vec<Approval>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id FROM approvals WHERE status = 'pending' AND claimed = 1 ORDER BY id",
    )?;
    let ids: Vec<i64> = stmt
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    let mut out = Vec::with_capacity(ids.len());
    for id in ids {
        out.extend(get(conn, id)?);
    }
    Ok(out)
}

/// Whether approval `id` stored a row in `table` (one with an
/// `approval_id` column: `egress_grants`, `spend_caps`): an interrupted
/// approval's action took effect.
pub(crate) fn stored_by(
    conn: &Connection,
    table: &'static str,
    id: i64,
) -> Result<bool, StoreError> {
    let n: i64 = conn.query_row(
        &format!("SELECT COUNT(*) FROM {table} WHERE approval_id = ?1"),
        [id],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
