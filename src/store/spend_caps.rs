//! The spend caps the operator set (`hivectl budget set`, an approved
//! `request_budget`): one per scope and unit, kept until unset, so they
//! survive restarts. The config's defaults are not stored; the rules
//! (`hive::spend`) put the two together. Spend itself is the turn
//! journal's (`store::turns`).

use rusqlite::{Connection, params};

use super::StoreError;
use super::agents::ident;
use crate::wire::ident::Ident;
use crate::wire::spend::{SpendCap, SpendScope};

/// The stored key of a scope: `''` for the hive, else the agent's name.
/// Only the hive and subtrees are set by the operator.
fn key(scope: &SpendScope) -> &str {
    match scope {
        SpendScope::Hive => "",
        SpendScope::Subtree(n) | SpendScope::Agent(n) => n.as_str(),
    }
}

/// Every cap the operator set, hive first, then by agent and unit.
pub fn all(conn: &Connection) -> Result<Vec<(SpendScope, SpendCap)>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT scope, amount FROM spend_caps ORDER BY scope, unit")?;
    let rows = stmt.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
    rows.map(|row| {
        let (scope, amount) = row?;
        let scope = if scope.is_empty() {
            SpendScope::Hive
        } else {
            SpendScope::Subtree(ident(scope)?)
        };
        let cap = amount
            .parse()
            .map_err(|e: crate::wire::spend::BadSpendCap| StoreError::Corrupt(e.to_string()))?;
        Ok((scope, cap))
    })
    .collect()
}

/// Set `cap` on `scope`, replacing the cap of its unit there. True if that
/// changed anything.
pub fn set(
    conn: &Connection,
    scope: &SpendScope,
    cap: &SpendCap,
    approval_id: Option<i64>,
    now: i64,
) -> Result<bool, StoreError> {
    let n = conn.execute(
        "INSERT INTO spend_caps (scope, unit, amount, set_at, approval_id)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (scope, unit) DO UPDATE SET amount = ?3, set_at = ?4, approval_id = ?5
           WHERE amount IS NOT ?3 OR approval_id IS NOT ?5",
        params![
            key(scope),
            cap.unit.as_str(),
            cap.to_string(),
            now,
            approval_id
        ],
    )?;
    Ok(n > 0)
}

/// Remove every cap the operator set on `scope`; how many.
pub fn unset(conn: &Connection, scope: &SpendScope) -> Result<usize, StoreError> {
    Ok(conn.execute("DELETE FROM spend_caps WHERE scope = ?1", [key(scope)])?)
}

/// Drop the caps on a destroyed agent's subtree: a later agent of the same
/// name starts from the defaults.
pub fn forget(conn: &Connection, agent: &Ident) -> Result<(), StoreError> {
    unset(conn, &SpendScope::Subtree(agent.clone())).map(drop)
}

/// Whether approval `id` set a cap (an interrupted approval's check).
pub fn from_approval(conn: &Connection, id: i64) -> Result<bool, StoreError> {
    super::approvals::stored_by(conn, "spend_caps", id)
}

#[cfg(test)]
#[path = "spend_caps_tests.rs"]
mod tests;
