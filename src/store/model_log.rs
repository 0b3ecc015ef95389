//! The model gateway's meter (issue 46): every request an agent made to
//! the model, one row each as the gateway read the upstream's answer
//! (`service::model_log` records them), bounded per agent.
//!
//! Decisions:
//! - **Bounded per agent, not per hive**, as the egress audit is
//!   (`store::egress_log`): each write keeps the newest `keep` rows of the
//!   agent written for, in the same transaction, so one agent's requests
//!   never push another's out.
//! - **A row per request, never merged**: each is a figure that adds to
//!   spend (step 2 of issue 46 sums them for usage and budgets).
//! - Rows are read back by agent, newest `limit`, oldest first, over the
//!   index `(agent, id)`.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::wire::ident::Ident;
use crate::wire::model_log::{MeterRow, ModelLogRow, Tokens};

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Write `rows` of `agent` (in order), then keep its newest `keep`. Run it
/// in one transaction (the writer's job).
pub fn write(
    conn: &Connection,
    agent: &Ident,
    rows: &[MeterRow],
    keep: u32,
) -> Result<(), StoreError> {
    let mut insert = conn.prepare_cached(
        "INSERT INTO model_log (agent, at_ms, route, model, status, input, output,
             cache_write, cache_read, cost_micro_usd, ms, request_id, error)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)",
    )?;
    for r in rows {
        insert.execute(params![
            agent.as_str(),
            r.at_ms,
            r.route,
            r.model,
            r.status,
            int(r.tokens.input),
            int(r.tokens.output),
            int(r.tokens.cache_write),
            int(r.tokens.cache_read),
            r.cost_micro_usd.map(int),
            int(r.ms),
            r.request_id,
            r.error,
        ])?;
    }
    conn.prepare_cached(
        "DELETE FROM model_log WHERE agent = ?1 AND id <= (
             SELECT id FROM model_log WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
    )?
    .execute(params![agent.as_str(), keep])?;
    Ok(())
}

/// `agent`'s newest `limit` rows, oldest first.
pub fn recent(
    conn: &Connection,
    agent: &Ident,
    limit: u32,
) -> Result<Vec<ModelLogRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT at_ms, route, model, status, input, output, cache_write, cache_read,
             cost_micro_usd, ms, request_id, error
         FROM model_log WHERE agent = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![agent.as_str(), limit], |r| {
        Ok(MeterRow {
            at_ms: r.get(0)?,
            route: r.get(1)?,
            model: r.get(2)?,
            status: r.get(3)?,
            tokens: Tokens {
                input: count(r.get(4)?),
                output: count(r.get(5)?),
                cache_write: count(r.get(6)?),
                cache_read: count(r.get(7)?),
            },
            cost_micro_usd: r.get::<_, Option<i64>>(8)?.map(count),
            ms: count(r.get(9)?),
            request_id: r.get(10)?,
            error: r.get(11)?,
        })
    })?;
    let mut out = Vec::new();
    for row in rows {
        out.push(ModelLogRow {
            agent: agent.clone(),
            request: row?,
        });
    }
    out.reverse();
    Ok(out)
}

/// Delete every row of `agent` (a purge); how many went.
pub fn forget(conn: &Connection, agent: &str) -> Result<usize, StoreError> {
    Ok(conn.execute("DELETE FROM model_log WHERE agent = ?1", [agent])?)
}

#[cfg(test)]
#[path = "model_log_tests.rs"]
mod tests;
