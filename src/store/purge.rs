//! `destroy --purge`: everything the hive keeps of one agent, deleted in
//! the caller's transaction, so a later agent of the same name (another
//! config, maybe another owner) starts with nothing of the old one.
//!
//! What goes (the README's "What destroy keeps" table says the same):
//! messages addressed to it in every state, the questions it asked or was
//! asked, its reminders, its schedules and its place as a target of
//! others', its hook events, its recorded crashes, its cross-hive sends
//! not yet relayed, its turn journal (with its sums), its transcript
//! cursors, its egress audit (`egress_log`), its metered model requests
//! (`model_log`) and the answers kept for its repeated requests
//! (`replies`). What stays: messages it sent that now sit in other
//! inboxes (they are their recipients' mail) and the approval history
//! (the operator's record; pending approvals were cancelled already).
//! A plain `destroy` calls none of this: a re-spawn of the same agent finds
//! its mail waiting.

use rusqlite::{Connection, params};

use super::StoreError;

/// Rows deleted per kind, for the daemon's log.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Purged {
    pub messages: usize,
    pub questions: usize,
    pub reminders: usize,
    pub schedules: usize,
    pub hook_events: usize,
    pub outbox: usize,
    pub turns: usize,
    pub egress_log: usize,
    pub model_log: usize,
}

/// Delete everything of agent `name` listed in the module docs.
pub fn agent(c: &Connection, name: &str) -> Result<Purged, StoreError> {
    let del = |sql: &str| c.execute(sql, params![name]);
    let messages = super::messages::delete_to(c, name)?;
    let questions = del("DELETE FROM questions WHERE asker = ?1 OR target = ?1")?;
    let reminders = del("DELETE FROM reminders WHERE owner = ?1")?;
    del("DELETE FROM schedule_targets WHERE target = ?1 \
         OR schedule_id IN (SELECT id FROM schedules WHERE owner = ?1)")?;
    let schedules = del("DELETE FROM schedules WHERE owner = ?1")?;
    let hook_events = del("DELETE FROM hook_events WHERE agent = ?1")?;
    del("DELETE FROM crashes WHERE agent = ?1")?;
    let outbox = del("DELETE FROM swarm_outbox WHERE sender = ?1")?;
    let turns = del("DELETE FROM turns WHERE agent = ?1")?;
    del("DELETE FROM turn_days WHERE agent = ?1")?;
    del("DELETE FROM turn_counts WHERE agent = ?1")?;
    del("DELETE FROM transcript_cursors WHERE agent = ?1")?;
    del("DELETE FROM replies WHERE agent = ?1")?;
    let egress_log = super::egress_log::forget(c, name)?;
    let model_log = super::model_log::forget(c, name)?;
    Ok(Purged {
        model_log,
        turns,
        messages,
        questions,
        reminders,
        schedules,
        hook_events,
        outbox,
        egress_log,
    })
}
