//! Per-agent grants: capabilities and tool groups, set by the operator.
//!
//! Tool groups start as the defaults ([`ToolGroup::AGENT_DEFAULT`]) until
//! the operator changes them for that agent; the first change copies the
//! defaults into rows and applies itself to them, so granting `lifecycle`
//! adds to the defaults instead of replacing them. `tool_groups_set` marks
//! an explicit set, which may be empty. Rejected: a JSON file like the
//! seed's `capabilities.json`, which would need its own locking and
//! crash-safe rewrites that SQLite already gives.

use rusqlite::{Connection, OptionalExtension, params};

use super::{StoreError, immediate};
use crate::wire::agenda::{Capability, EgressGrant, ToolGroup};
use crate::wire::egress::EgressPattern;

const CAPABILITY: &str = "capability";
const TOOL_GROUP: &str = "tool_group";

fn values(conn: &Connection, agent: &str, kind: &str) -> Result<Vec<String>, StoreError> {
    let mut stmt = conn
        .prepare_cached("SELECT value FROM grants WHERE agent = ?1 AND kind = ?2 ORDER BY value")?;
    let rows = stmt.query_map(params![agent, kind], |r| r.get(0))?;
    Ok(rows.collect::<Result<_, _>>()?)
}

/// An agent's capabilities, in their declaration order.
pub fn capabilities(conn: &Connection, agent: &str) -> Result<Vec<Capability>, StoreError> {
    let mut out = values(conn, agent, CAPABILITY)?
        .into_iter()
        .map(|v| {
            Capability::parse(&v).ok_or_else(|| StoreError::Corrupt(format!("capability {v:?}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    out.sort();
    Ok(out)
}

/// An agent's tool groups: the explicit set, or the defaults.
pub fn tool_groups(conn: &Connection, agent: &str) -> Result<Vec<ToolGroup>, StoreError> {
    if !explicit(conn, agent)? {
        return Ok(ToolGroup::AGENT_DEFAULT.to_vec());
    }
    let mut out = values(conn, agent, TOOL_GROUP)?
        .into_iter()
        .map(|v| {
            ToolGroup::parse(&v).ok_or_else(|| StoreError::Corrupt(format!("tool group {v:?}")))
        })
        .collect::<Result<Vec<_>, _>>()?;
    out.sort();
    Ok(out)
}

fn explicit(conn: &Connection, agent: &str) -> Result<bool, StoreError> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM tool_groups_set WHERE agent = ?1",
        [agent],
        |r| r.get(0),
    )?;
    Ok(n > 0)
}

fn set(
    conn: &Connection,
    agent: &str,
    kind: &str,
    value: &str,
    on: bool,
) -> Result<bool, StoreError> {
    let n = if on {
        conn.execute(
            "INSERT OR IGNORE INTO grants (agent, kind, value) VALUES (?1, ?2, ?3)",
            params![agent, kind, value],
        )?
    } else {
        conn.execute(
            "DELETE FROM grants WHERE agent = ?1 AND kind = ?2 AND value = ?3",
            params![agent, kind, value],
        )?
    };
    Ok(n == 1)
}

/// Grant (`on`) or revoke a capability. True if that changed anything.
pub fn set_capability(
    conn: &Connection,
    agent: &str,
    capability: Capability,
    on: bool,
) -> Result<bool, StoreError> {
    set(conn, agent, CAPABILITY, capability.as_str(), on)
}

/// Grant (`on`) or revoke a tool group. True if that changed anything.
pub fn set_tool_group(
    conn: &mut Connection,
    agent: &str,
    group: ToolGroup,
    on: bool,
) -> Result<bool, StoreError> {
    let tx = immediate(conn)?;
    if !explicit(&tx, agent)? {
        for g in ToolGroup::AGENT_DEFAULT {
            set(&tx, agent, TOOL_GROUP, g.as_str(), true)?;
        }
        tx.execute("INSERT INTO tool_groups_set (agent) VALUES (?1)", [agent])?;
    }
    let changed = set(&tx, agent, TOOL_GROUP, group.as_str(), on)?;
    tx.commit()?;
    Ok(changed)
}

/// An agent's egress patterns in force at `now` (expired ones are not
/// returned; they stay until revoked or granted again), sorted.
pub fn egress(conn: &Connection, agent: &str, now: i64) -> Result<Vec<EgressGrant>, StoreError> {
    let mut stmt = conn.prepare_cached(
        "SELECT pattern, expires_at FROM egress_grants
         WHERE agent = ?1 AND (expires_at IS NULL OR expires_at > ?2) ORDER BY pattern",
    )?;
    let rows = stmt.query_map(params![agent, now], |r| {
        Ok((r.get::<_, String>(0)?, r.get::<_, Option<i64>>(1)?))
    })?;
    rows.map(|row| {
        let (pattern, expires_at) = row?;
        let pattern = EgressPattern::new(&pattern)
            .map_err(|_| StoreError::Corrupt(format!("egress pattern {pattern:?}")))?;
        Ok(EgressGrant {
            pattern,
            expires_at,
        })
    })
    .collect()
}

/// Grant `pattern` to `agent` until `expires_at` (never: `None`),
/// replacing an earlier grant of it. True if that changed anything.
pub fn grant_egress(
    conn: &Connection,
    agent: &str,
    grant: &EgressGrant,
    approval_id: Option<i64>,
    now: i64,
) -> Result<bool, StoreError> {
    let same: Option<Option<i64>> = conn
        .query_row(
            "SELECT expires_at FROM egress_grants WHERE agent = ?1 AND pattern = ?2",
            params![agent, grant.pattern.as_str()],
            |r| r.get(0),
        )
        .optional()?;
    if same == Some(grant.expires_at) && grant.expires_at.is_none_or(|t| t > now) {
        return Ok(false);
    }
    conn.execute(
        "INSERT INTO egress_grants (agent, pattern, granted_at, expires_at, approval_id)
         VALUES (?1, ?2, ?3, ?4, ?5)
         ON CONFLICT (agent, pattern) DO UPDATE SET granted_at = ?3, expires_at = ?4,
           approval_id = ?5",
        params![
            agent,
            grant.pattern.as_str(),
            now,
            grant.expires_at,
            approval_id
        ],
    )?;
    Ok(true)
}

/// The expiry of `agent`'s grant of `pattern`: `None` when it has none,
/// `Some(None)` when it lasts until revoked (an expired row counts).
pub fn egress_expiry(
    conn: &Connection,
    agent: &str,
    pattern: &EgressPattern,
) -> Result<Option<Option<i64>>, StoreError> {
    Ok(conn
        .query_row(
            "SELECT expires_at FROM egress_grants WHERE agent = ?1 AND pattern = ?2",
            params![agent, pattern.as_str()],
            |r| r.get(0),
        )
        .optional()?)
}

/// Revoke `pattern` from `agent`. True if it was granted (expired or not).
pub fn revoke_egress(
    conn: &Connection,
    agent: &str,
    pattern: &EgressPattern,
) -> Result<bool, StoreError> {
    let n = conn.execute(
        "DELETE FROM egress_grants WHERE agent = ?1 AND pattern = ?2",
        params![agent, pattern.as_str()],
    )?;
    Ok(n == 1)
}

/// Whether approval `id` granted egress (an interrupted approval's check).
pub fn egress_from_approval(conn: &Connection, id: i64) -> Result<bool, StoreError> {
    super::approvals::stored_by(conn, "egress_grants", id)
}

/// Drop every grant of an agent (it was destroyed: a later agent of the
/// same name starts from the defaults).
pub fn forget(conn: &Connection, agent: &str) -> Result<(), StoreError> {
    conn.execute("DELETE FROM grants WHERE agent = ?1", [agent])?;
    conn.execute("DELETE FROM egress_grants WHERE agent = ?1", [agent])?;
    conn.execute("DELETE FROM tool_groups_set WHERE agent = ?1", [agent])?;
    Ok(())
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
