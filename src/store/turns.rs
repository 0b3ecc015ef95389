//! The turn journal: one row per turn an agent's harness reported, the
//! report kept whole (as JSON) beside the columns `usage` sums. Bounded per
//! agent ([`MAX_TURNS_PER_AGENT`], oldest first out).

use rusqlite::{Connection, params};

use super::StoreError;
use super::agents::ident;
use crate::wire::ident::Ident;
use crate::wire::turns::{TurnReport, TurnRow, TurnUsage, UsageBy, UsageRow};

/// How many turns are kept per agent.
pub const MAX_TURNS_PER_AGENT: i64 = 10_000;

/// Keep `report` as `agent`'s newest turn; answers its id.
pub fn insert(conn: &Connection, agent: &Ident, report: &TurnReport) -> Result<i64, StoreError> {
    let usage = report.usage.unwrap_or_default();
    let json = serde_json::to_string(report).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    conn.prepare_cached(
        "INSERT INTO turns (agent, started_at_ms, ended_at_ms, outcome, model, input_tokens,
             output_tokens, cache_read_tokens, cache_creation_tokens, cost_micro_usd, report)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
    )?
    .execute(params![
        agent.as_str(),
        report.started_at_ms,
        report.ended_at_ms,
        report.outcome.as_str(),
        report.model,
        sql_int(usage.input_tokens),
        sql_int(usage.output_tokens),
        sql_int(usage.cache_read_input_tokens),
        sql_int(usage.cache_creation_input_tokens),
        sql_int(report.cost_micro_usd.unwrap_or(0)),
        json,
    ])?;
    let id = conn.last_insert_rowid();
    conn.prepare_cached(
        "DELETE FROM turns WHERE agent = ?1 AND id <= (
             SELECT id FROM turns WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
    )?
    .execute(params![agent.as_str(), MAX_TURNS_PER_AGENT])?;
    Ok(id)
}

fn sql_int(n: u64) -> i64 {
    i64::try_from(n).unwrap_or(i64::MAX)
}

/// `agent`'s newest `limit` turns, newest first.
pub fn recent(conn: &Connection, agent: &Ident, limit: u32) -> Result<Vec<TurnRow>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT id, agent, report FROM turns WHERE agent = ?1 ORDER BY id DESC LIMIT ?2",
    )?;
    let rows = stmt.query_map(params![agent.as_str(), limit], |r| {
        Ok((
            r.get::<_, i64>(0)?,
            r.get::<_, String>(1)?,
            r.get::<_, String>(2)?,
        ))
    })?;
    rows.map(|row| {
        let (id, agent, json) = row?;
        let report = serde_json::from_str(&json)
            .map_err(|e| StoreError::Corrupt(format!("turn {id}: {e}")))?;
        Ok(TurnRow {
            id,
            agent: ident(agent)?,
            report,
        })
    })
    .collect()
}

/// The sums of every turn that ended at or after `since_ms`, grouped `by`
/// agent, model or UTC day (by subtree is the service's: it needs the
/// topology). Sorted by key.
pub fn usage(conn: &Connection, since_ms: i64, by: UsageBy) -> Result<Vec<UsageRow>, StoreError> {
    let key = match by {
        UsageBy::Agent | UsageBy::Subtree => "agent",
        UsageBy::Model => "COALESCE(model, '-')",
        UsageBy::Day => "date(ended_at_ms / 1000, 'unixepoch')",
    };
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {key} AS k, COUNT(*), SUM(input_tokens), SUM(output_tokens),
             SUM(cache_read_tokens), SUM(cache_creation_tokens), SUM(cost_micro_usd)
         FROM turns WHERE ended_at_ms >= ?1 GROUP BY k ORDER BY k"
    ))?;
    let rows = stmt.query_map([since_ms], |r| {
        let n = |i: usize| r.get::<_, i64>(i).map(|v| u64::try_from(v).unwrap_or(0));
        Ok(UsageRow {
            key: r.get(0)?,
            turns: n(1)?,
            usage: TurnUsage {
                input_tokens: n(2)?,
                output_tokens: n(3)?,
                cache_read_input_tokens: n(4)?,
                cache_creation_input_tokens: n(5)?,
            },
            cost_micro_usd: n(6)?,
        })
    })?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
#[path = "turns_tests.rs"]
mod tests;
