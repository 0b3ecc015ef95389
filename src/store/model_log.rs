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
//!   spend.
//! - **Spend outlives the rows** (issue 46, step 2): the same transaction
//!   adds each row to `model_hours` (per agent, UTC hour and model), which
//!   is never pruned with the rows; [`spend`] reads whole hours there.
//!   Rejected: per day, as the turn journal's sums are (`store::turns`) —
//!   a rolling window's start (`5usd/5h`) would fall inside a day whose
//!   rows may be gone; per minute, 60 times the rows for no budget that
//!   needs it.
//! - Rows are read back by agent, newest `limit`, oldest first, over the
//!   index `(agent, id)`; by time over `(at_ms)`.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::wire::ident::Ident;
use crate::wire::model_log::{MeterRow, MeteredUsage, ModelLogRow, Tokens};
use crate::wire::turns::UsageBy;

/// An hour in milliseconds: `model_hours`' unit.
const HOUR_MS: i64 = 3_600_000;

/// `model_hours`' model for a request that named none.
const NO_MODEL: &str = "-";

fn int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

fn count(n: i64) -> u64 {
    u64::try_from(n).unwrap_or(0)
}

/// Write `rows` of `agent` (in order), add each to its hour's sums, then
/// keep the agent's newest `keep` rows. Run it in one transaction (the
/// writer's job): a row is never kept without its sums, nor summed twice.
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
        add_to_hour(conn, agent, r)?;
    }
    conn.prepare_cached(
        "DELETE FROM model_log WHERE agent = ?1 AND id <= (
             SELECT id FROM model_log WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
    )?
    .execute(params![agent.as_str(), keep])?;
    Ok(())
}

/// Add `r` to its agent's, hour's and model's sums.
fn add_to_hour(conn: &Connection, agent: &Ident, r: &MeterRow) -> Result<(), StoreError> {
    let t = &r.tokens;
    let unpriced = i64::from(r.cost_micro_usd.is_none() && t.total() > 0);
    conn.prepare_cached(
        "INSERT INTO model_hours VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8, ?9)
         ON CONFLICT (hour, agent, model) DO UPDATE SET requests = requests + 1,
             input = input + ?4, output = output + ?5, cache_write = cache_write + ?6,
             cache_read = cache_read + ?7, cost_micro_usd = cost_micro_usd + ?8,
             unpriced = unpriced + ?9",
    )?
    .execute(params![
        agent.as_str(),
        r.at_ms.div_euclid(HOUR_MS),
        r.model.as_deref().unwrap_or(NO_MODEL),
        int(t.input),
        int(t.output),
        int(t.cache_write),
        int(t.cache_read),
        int(r.cost_micro_usd.unwrap_or(0)),
        unpriced,
    ])?;
    Ok(())
}

/// What the requests made at `since_ms` or later add up to, grouped `by`
/// agent, model or UTC day (subtree sums are the service's, from the agent
/// rows), sorted by key. Whole hours come from `model_hours`; the hour the
/// window starts in is its sums less the rows of that hour before
/// `since_ms` — exact while those rows are kept, and once the bound has
/// let some go, more than was spent (never less: a budget errs towards
/// holding) by at most what they counted.
pub fn spend(
    conn: &Connection,
    since_ms: i64,
    by: UsageBy,
) -> Result<Vec<(String, MeteredUsage)>, StoreError> {
    let (hour_key, row_key) = match by {
        UsageBy::Agent | UsageBy::Subtree => ("agent", "agent"),
        UsageBy::Model => ("model", "COALESCE(model, '-')"),
        UsageBy::Day => (
            "date(hour * 3600, 'unixepoch')",
            "date(at_ms / 1000, 'unixepoch')",
        ),
    };
    let first_hour = since_ms.div_euclid(HOUR_MS);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT k, SUM(n), SUM(i), SUM(o), SUM(cw), SUM(cr), SUM(usd), SUM(u) FROM (
             SELECT {hour_key} AS k, requests AS n, input AS i, output AS o,
                 cache_write AS cw, cache_read AS cr, cost_micro_usd AS usd, unpriced AS u
             FROM model_hours WHERE hour >= ?1
             UNION ALL
             SELECT {row_key}, -1, -input, -output, -cache_write, -cache_read,
                 -COALESCE(cost_micro_usd, 0),
                 -(cost_micro_usd IS NULL AND input + output + cache_write + cache_read > 0)
             FROM model_log WHERE at_ms >= ?2 AND at_ms < ?3
         ) GROUP BY k ORDER BY k"
    ))?;
    let rows = stmt.query_map(
        params![first_hour, first_hour.saturating_mul(HOUR_MS), since_ms],
        |r| {
            let n = |i: usize| r.get::<_, i64>(i).map(count);
            Ok((
                r.get::<_, String>(0)?,
                MeteredUsage {
                    requests: n(1)?,
                    tokens: Tokens {
                        input: n(2)?,
                        output: n(3)?,
                        cache_write: n(4)?,
                        cache_read: n(5)?,
                    },
                    cost_micro_usd: n(6)?,
                    unpriced: n(7)?,
                },
            ))
        },
    )?;
    let rows: Vec<(String, MeteredUsage)> = rows.collect::<Result<_, _>>()?;
    Ok(rows.into_iter().filter(|(_, m)| m.requests > 0).collect())
}

/// `agent`'s requests made from `from_ms` to `to_ms` (both included) that
/// are still kept: what a turn of those times may be said to have metered.
pub fn between(
    conn: &Connection,
    agent: &Ident,
    from_ms: i64,
    to_ms: i64,
) -> Result<MeteredUsage, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT COUNT(*), COALESCE(SUM(input), 0), COALESCE(SUM(output), 0),
             COALESCE(SUM(cache_write), 0), COALESCE(SUM(cache_read), 0),
             COALESCE(SUM(cost_micro_usd), 0),
             COALESCE(SUM(cost_micro_usd IS NULL AND input + output + cache_write + cache_read > 0), 0)
         FROM model_log WHERE at_ms >= ?2 AND at_ms <= ?3 AND agent = ?1",
    )?;
    Ok(
        stmt.query_row(params![agent.as_str(), from_ms, to_ms], |r| {
            let n = |i: usize| r.get::<_, i64>(i).map(count);
            Ok(MeteredUsage {
                requests: n(0)?,
                tokens: Tokens {
                    input: n(1)?,
                    output: n(2)?,
                    cache_write: n(3)?,
                    cache_read: n(4)?,
                },
                cost_micro_usd: n(5)?,
                unpriced: n(6)?,
            })
        })?,
    )
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

/// Delete every row of `agent` and its sums (a purge); how many rows went.
pub fn forget(conn: &Connection, agent: &str) -> Result<usize, StoreError> {
    conn.execute("DELETE FROM model_hours WHERE agent = ?1", [agent])?;
    Ok(conn.execute("DELETE FROM model_log WHERE agent = ?1", [agent])?)
}

#[cfg(test)]
#[path = "model_log_tests.rs"]
mod tests;
