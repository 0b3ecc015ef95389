//! The turn journal: one row per turn an agent's harness reported, the
//! report kept whole (as JSON) beside the columns `usage` sums. Bounded per
//! agent ([`MAX_TURNS_PER_AGENT`], oldest first out).

use rusqlite::{Connection, params};

use super::StoreError;
use super::agents::ident;
use crate::wire::ident::Ident;
use crate::wire::model_log::MeteredUsage;
use crate::wire::turns::{TurnReport, TurnRow, TurnUsage, UsageBy, UsageRow};

/// How many turns are kept per agent.
pub const MAX_TURNS_PER_AGENT: i64 = 10_000;

/// Keep `report` as `agent`'s newest turn, add it to its day's sums, and
/// let the oldest go past [`MAX_TURNS_PER_AGENT`]; answers its id. Each
/// step is an index lookup: the count of kept turns is a row of its own
/// (counting, or stepping past the newest 10,000, cost a walk of them per
/// report: 250 s to report a million turns into a full journal).
pub fn insert(conn: &Connection, agent: &Ident, report: &TurnReport) -> Result<i64, StoreError> {
    let usage = report.usage.unwrap_or_default();
    let json = serde_json::to_string(report).map_err(|e| StoreError::Corrupt(e.to_string()))?;
    let sums = [
        sql_int(usage.input_tokens),
        sql_int(usage.output_tokens),
        sql_int(usage.cache_read_input_tokens),
        sql_int(usage.cache_creation_input_tokens),
        sql_int(report.cost_micro_usd.unwrap_or(0)),
    ];
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
        sums[0],
        sums[1],
        sums[2],
        sums[3],
        sums[4],
        json,
    ])?;
    let id = conn.last_insert_rowid();
    conn.prepare_cached(
        "INSERT INTO turn_days VALUES (?1, ?2, ?3, 1, ?4, ?5, ?6, ?7, ?8)
         ON CONFLICT (day, agent, model) DO UPDATE SET turns = turns + 1,
             input_tokens = input_tokens + ?4, output_tokens = output_tokens + ?5,
             cache_read_tokens = cache_read_tokens + ?6,
             cache_creation_tokens = cache_creation_tokens + ?7,
             cost_micro_usd = cost_micro_usd + ?8",
    )?
    .execute(params![
        agent.as_str(),
        report.ended_at_ms.div_euclid(DAY_MS),
        report.model.as_deref().unwrap_or(NO_MODEL),
        sums[0],
        sums[1],
        sums[2],
        sums[3],
        sums[4],
    ])?;
    let kept: i64 = conn
        .prepare_cached(
            "INSERT INTO turn_counts VALUES (?1, 1)
             ON CONFLICT (agent) DO UPDATE SET kept = kept + 1 RETURNING kept",
        )?
        .query_row(params![agent.as_str()], |r| r.get(0))?;
    if kept > MAX_TURNS_PER_AGENT {
        let gone = conn
            .prepare_cached(
                "DELETE FROM turns WHERE id IN (
                     SELECT id FROM turns WHERE agent = ?1 ORDER BY id LIMIT ?2)",
            )?
            .execute(params![agent.as_str(), kept - MAX_TURNS_PER_AGENT])?;
        conn.prepare_cached("UPDATE turn_counts SET kept = kept - ?2 WHERE agent = ?1")?
            .execute(params![agent.as_str(), gone as i64])?;
    }
    Ok(id)
}

/// A UTC day in milliseconds: `turn_days`' unit.
const DAY_MS: i64 = 86_400_000;

/// `turn_days`' model for a turn that named none (and `usage`'s key for it).
const NO_MODEL: &str = "-";

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
            metered: None,
        })
    })
    .collect()
}

/// The sums of the turns that ended at `since_ms` or later, grouped `by`
/// agent, model or UTC day (subtree sums are the service's, from the agent
/// rows). Whole days come from `turn_days` (a row per agent, day and model:
/// 3,000 rows for 100 agents over 30 days, where the turns were a million);
/// only the part of the window before its first whole day reads turns.
/// Sums count every turn reported, also one the retention has since let
/// go, unless that part of a day is all there is of it in the window.
pub fn usage(conn: &Connection, since_ms: i64, by: UsageBy) -> Result<Vec<UsageRow>, StoreError> {
    let (day_key, turn_key) = match by {
        UsageBy::Agent | UsageBy::Subtree => ("agent", "agent"),
        UsageBy::Model => ("model", "COALESCE(model, '-')"),
        UsageBy::Day => (
            "date(day * 86400, 'unixepoch')",
            "date(ended_at_ms / 1000, 'unixepoch')",
        ),
    };
    // The first whole day in the window, and where the turns' part ends.
    let first_day = since_ms.div_euclid(DAY_MS) + i64::from(since_ms.rem_euclid(DAY_MS) != 0);
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT k, SUM(n), SUM(i), SUM(o), SUM(cr), SUM(cc), SUM(usd) FROM (
             SELECT {day_key} AS k, turns AS n, input_tokens AS i, output_tokens AS o,
                 cache_read_tokens AS cr, cache_creation_tokens AS cc, cost_micro_usd AS usd
             FROM turn_days WHERE day >= ?2
             UNION ALL
             SELECT {turn_key}, 1, input_tokens, output_tokens, cache_read_tokens,
                 cache_creation_tokens, cost_micro_usd
             FROM turns WHERE ended_at_ms >= ?1 AND ended_at_ms < ?3
         ) GROUP BY k ORDER BY k"
    ))?;
    let rows = stmt.query_map(
        params![since_ms, first_day, first_day.saturating_mul(DAY_MS)],
        |r| {
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
                metered: MeteredUsage::default(),
            })
        },
    )?;
    Ok(rows.collect::<Result<_, _>>()?)
}

#[cfg(test)]
#[path = "turns_tests.rs"]
mod tests;
