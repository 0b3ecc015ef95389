//! The egress audit (issue 44): what each agent dialled through the hive's
//! proxy, one row per connection (`service::egress_audit` records them),
//! bounded per agent.
//!
//! Decisions:
//! - **Bounded per agent, not per hive**: each write keeps the newest
//!   `keep` rows of every agent it wrote for and deletes that agent's
//!   older ones, in the same transaction. An agent's flood displaces only
//!   its own rows; another agent's stay however loud the flood. Rejected:
//!   one bound for the hive (the journal's problem again: one unit's rate
//!   limit for every agent) and a time window (a flood fills any window).
//! - **Refusals are counted, not listed** ([`Verdict::merges`]): a record of
//!   a merging verdict is added to the agent's row of the same verdict and
//!   target whose first connection came in the same minute of the clock,
//!   if there is one. A 429 flood of thousands a second costs its agent
//!   one row a minute, whatever it interleaves, so it cannot rotate the
//!   agent's own earlier rows (the evidence of what it did before the
//!   flood) out in seconds. A counted row moves to the newest place with
//!   each connection it takes (its id renewed), so a flood's row still
//!   being counted is never the first its own bound deletes; its `at_ms`
//!   stays its first connection's.
//! - Rows are read back by agent, newest `limit`, oldest first, over the
//!   index `(agent, id)`; ids grow with each write, so the order is the
//!   order the connections ended in (a counted row's, its latest).

use std::collections::BTreeSet;

use rusqlite::{Connection, params};

use super::StoreError;
use crate::wire::egress_audit::{EgressLogRow, EgressRecord, MERGE_WINDOW_MS, Verdict};
use crate::wire::ident::Ident;

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Write `records` (in order), each of a merging verdict counted into its
/// agent's row of the same verdict, target and minute if there is one,
/// then keep the newest
/// `keep` rows of each agent written for. Run it in one transaction (the
/// writer's job): a reader sees all of it or none.
pub fn write(conn: &Connection, records: &[EgressRecord], keep: u32) -> Result<(), StoreError> {
    let mut agents = BTreeSet::new();
    for r in records {
        agents.insert(r.agent.as_str());
        if r.verdict.merges() && merge(conn, r)? {
            continue;
        }
        conn.prepare_cached(
            "INSERT INTO egress_log (agent, at_ms, verdict, count, target, address, reason,
                 up, down, ms)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
        )?
        .execute(params![
            r.agent.as_str(),
            r.at_ms,
            r.verdict.as_str(),
            int(r.count),
            r.target,
            r.address,
            r.reason,
            int(r.up),
            int(r.down),
            int(r.ms),
        ])?;
    }
    let mut trim = conn.prepare_cached(
        "DELETE FROM egress_log WHERE agent = ?1 AND id <= (
             SELECT id FROM egress_log WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
    )?;
    for agent in agents {
        trim.execute(params![agent, keep])?;
    }
    Ok(())
}

/// Add `r` to its agent's row of the same verdict, target and minute, if
/// there is one ([`EgressRecord::absorbs`]); whether it did. Found by the
/// partial index `egress_log_merging` (refusals only).
fn merge(conn: &Connection, r: &EgressRecord) -> Result<bool, StoreError> {
    let from = r.at_ms.div_euclid(MERGE_WINDOW_MS) * MERGE_WINDOW_MS;
    let merged = conn
        .prepare_cached(
            "UPDATE egress_log SET count = count + ?5, up = up + ?6, down = down + ?7,
                 ms = MAX(ms, ?8), id = (SELECT MAX(id) FROM egress_log) + 1
             WHERE id = (SELECT id FROM egress_log
                 WHERE agent = ?1 AND verdict = ?2 AND target IS ?3
                     AND at_ms >= ?4 AND at_ms < ?4 + ?9 AND verdict <> 'allowed'
                 ORDER BY id DESC LIMIT 1)",
        )?
        .execute(params![
            r.agent.as_str(),
            r.verdict.as_str(),
            r.target,
            from,
            int(r.count),
            int(r.up),
            int(r.down),
            int(r.ms),
            MERGE_WINDOW_MS,
        ])?;
    Ok(merged == 1)
}

/// `agent`'s newest `limit` rows, oldest first.
pub fn recent(
    conn: &Connection,
    agent: &Ident,
    limit: u32,
) -> Result<Vec<EgressLogRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, at_ms, verdict, count, target, address, reason, up, down, ms
         FROM egress_log WHERE agent = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![agent.as_str(), limit], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, i64>(1)?,
            r.get::<_, String>(2)?,
            r.get::<_, i64>(3)?,
            r.get::<_, Option<String>>(4)?,
            r.get::<_, Option<String>>(5)?,
            r.get::<_, Option<String>>(6)?,
            (
                r.get::<_, i64>(7)?,
                r.get::<_, i64>(8)?,
                r.get::<_, i64>(9)?,
            ),
        ))
    })?;
    let mut out = Vec::new();
    for row in rows {
        let (id, at_ms, verdict, n, target, address, reason, (up, down, ms)) = row?;
        let verdict = Verdict::parse(&verdict)
            .ok_or_else(|| StoreError::Corrupt(format!("egress_log {id}: verdict {verdict:?}")))?;
        out.push(EgressLogRow {
            id,
            at_ms,
            verdict,
            count: count(n),
            target,
            address,
            reason,
            up: count(up),
            down: count(down),
            ms: count(ms),
        });
    }
    out.reverse();
    Ok(out)
}

/// How many rows `agent` has (tests, the purge's count).
pub fn rows_of(conn: &Connection, agent: &str) -> Result<u64, StoreError> {
    let n: i64 = conn
        .prepare_cached("SELECT COUNT(*) FROM egress_log WHERE agent = ?1")?
        .query_row([agent], |r| r.get(0))?;
    Ok(count(n))
}

/// Delete every row of `agent` (a purge); how many went.
pub fn forget(conn: &Connection, agent: &str) -> Result<usize, StoreError> {
    Ok(conn.execute("DELETE FROM egress_log WHERE agent = ?1", [agent])?)
}

#[cfg(test)]
#[path = "egress_log_tests.rs"]
mod tests;
