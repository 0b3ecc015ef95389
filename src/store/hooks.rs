//! Claude Code hook events: the newest [`KEPT_PER_AGENT`] raw payloads per
//! agent, and the session state they set on the agent's row.

use rusqlite::{Connection, OptionalExtension, params};

use super::StoreError;
use crate::hive::hooks::Attention;
use crate::wire::host::SessionState;
use crate::wire::ident::Ident;

/// How many hook events are kept per agent; older ones are deleted as new
/// ones arrive.
pub const KEPT_PER_AGENT: i64 = 200;

/// The row's three session columns as one value.
pub(crate) fn attention(
    (state, message, since): (Option<String>, Option<String>, Option<i64>),
) -> Result<Option<Attention>, StoreError> {
    match (state, since) {
        (Some(state), Some(since)) => {
            let state = SessionState::parse(&state)
                .ok_or_else(|| StoreError::Corrupt(format!("unknown session state {state:?}")))?;
            Ok(Some(Attention {
                state,
                message,
                since,
            }))
        }
        _ => Ok(None),
    }
}

/// The agent's current session state; `Ok(None)` when it has none, `Err`
/// on a store fault. `None` outer when the agent is not managed.
pub fn session(conn: &Connection, agent: &Ident) -> Result<Option<Option<Attention>>, StoreError> {
    let row: Option<(Option<String>, Option<String>, Option<i64>)> = conn
        .query_row(
            "SELECT session_state, session_message, session_since FROM agents WHERE name = ?1",
            [agent.as_str()],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )
        .optional()?;
    row.map(attention).transpose()
}

/// Append one event (trimming the agent's oldest beyond the bound) and,
/// when `next` is given, set the agent's session state.
pub fn record(
    conn: &Connection,
    agent: &Ident,
    at: i64,
    event: &str,
    raw: &str,
    next: Option<&Attention>,
) -> Result<(), StoreError> {
    conn.execute(
        "INSERT INTO hook_events (agent, at, event, raw) VALUES (?1, ?2, ?3, ?4)",
        params![agent.as_str(), at, event, raw],
    )?;
    conn.execute(
        "DELETE FROM hook_events WHERE agent = ?1 AND id <= (
             SELECT id FROM hook_events WHERE agent = ?1 ORDER BY id DESC LIMIT 1 OFFSET ?2)",
        params![agent.as_str(), KEPT_PER_AGENT],
    )?;
    if let Some(a) = next {
        conn.execute(
            "UPDATE agents SET session_state = ?2, session_message = ?3, session_since = ?4
             WHERE name = ?1",
            params![agent.as_str(), a.state.as_str(), a.message, a.since],
        )?;
    }
    Ok(())
}

/// Forget the agent's session state: its container went down, and with it
/// the session the state described (a "needs you" of a session that no
/// longer runs would wait for nobody). Whether a state was cleared.
pub fn clear_session(conn: &Connection, agent: &Ident) -> Result<bool, StoreError> {
    let changed = conn.execute(
        "UPDATE agents SET session_state = NULL, session_message = NULL, session_since = NULL
         WHERE name = ?1 AND session_state IS NOT NULL",
        [agent.as_str()],
    )?;
    Ok(changed > 0)
}

/// The agent's kept events, oldest first: `(at, event, raw)`.
pub fn events(conn: &Connection, agent: &Ident) -> Result<Vec<(i64, String, String)>, StoreError> {
    let mut stmt =
        conn.prepare_cached("SELECT at, event, raw FROM hook_events WHERE agent = ?1 ORDER BY id")?;
    let rows = stmt.query_map([agent.as_str()], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
    Ok(rows.collect::<Result<_, _>>()?)
}
