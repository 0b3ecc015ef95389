//! Questions: one row per `ask`, closed exactly once — by an answer, by the
//! TTL watchdog, or withdrawn by its asker. Closing is a conditional update
//! (`answered_at IS NULL`), so two racing answers cannot both win.

use rusqlite::{Connection, OptionalExtension, Row, params};

use super::StoreError;

/// One question as stored.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QuestionRow {
    pub id: i64,
    pub asker: String,
    /// An agent's name; `None` = the operator.
    pub target: Option<String>,
    pub question: String,
    pub options: Vec<String>,
    pub multi: bool,
    pub asked_at: i64,
    pub expires_at: Option<i64>,
    pub answer: Option<String>,
    pub answerer: Option<String>,
    pub answered_at: Option<i64>,
}

/// A new question's fields.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewQuestion {
    pub asker: String,
    pub target: Option<String>,
    pub question: String,
    pub options: Vec<String>,
    pub multi: bool,
    pub expires_at: Option<i64>,
}

const COLUMNS: &str = "id, asker, target, question, options, multi, asked_at, expires_at, \
                       answer, answerer, answered_at";

fn from_row(r: &Row<'_>) -> rusqlite::Result<(QuestionRow, String)> {
    Ok((
        QuestionRow {
            id: r.get(0)?,
            asker: r.get(1)?,
            target: r.get(2)?,
            question: r.get(3)?,
            options: Vec::new(),
            multi: r.get(5)?,
            asked_at: r.get(6)?,
            expires_at: r.get(7)?,
            answer: r.get(8)?,
            answerer: r.get(9)?,
            answered_at: r.get(10)?,
        },
        r.get(4)?,
    ))
}

fn build((mut row, options): (QuestionRow, String)) -> Result<QuestionRow, StoreError> {
    row.options = serde_json::from_str(&options)
        .map_err(|e| StoreError::Corrupt(format!("question {} options: {e}", row.id)))?;
    Ok(row)
}

fn query(
    conn: &Connection,
    filter: &str,
    params: impl rusqlite::Params,
) -> Result<Vec<QuestionRow>, StoreError> {
    let mut stmt = conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM questions WHERE {filter} ORDER BY id"
    ))?;
    let rows = stmt.query_map(params, from_row)?;
    rows.map(|r| build(r?)).collect()
}

/// Store an open question; its id.
pub fn insert(conn: &Connection, new: &NewQuestion, at: i64) -> Result<i64, StoreError> {
    let options = serde_json::to_string(&new.options)
        .map_err(|e| StoreError::Corrupt(format!("question options: {e}")))?;
    conn.execute(
        "INSERT INTO questions (asker, target, question, options, multi, asked_at, expires_at)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            new.asker,
            new.target,
            new.question,
            options,
            new.multi,
            at,
            new.expires_at
        ],
    )?;
    Ok(conn.last_insert_rowid())
}

/// One question.
pub fn get(conn: &Connection, id: i64) -> Result<Option<QuestionRow>, StoreError> {
    let mut stmt =
        conn.prepare_cached(&format!("SELECT {COLUMNS} FROM questions WHERE id = ?1"))?;
    stmt.query_row([id], from_row)
        .optional()?
        .map(build)
        .transpose()
}

/// Close an open question. False if it was already closed.
pub fn close(
    conn: &Connection,
    id: i64,
    answer: &str,
    answerer: &str,
    at: i64,
) -> Result<bool, StoreError> {
    let n = conn.execute(
        "UPDATE questions SET answer = ?2, answerer = ?3, answered_at = ?4
         WHERE id = ?1 AND answered_at IS NULL",
        params![id, answer, answerer, at],
    )?;
    Ok(n == 1)
}

/// Every open question, oldest first.
pub fn open(conn: &Connection) -> Result<Vec<QuestionRow>, StoreError> {
    query(conn, "answered_at IS NULL", [])
}

/// Open questions an agent asked or was asked.
pub fn open_of(conn: &Connection, agent: &str) -> Result<Vec<QuestionRow>, StoreError> {
    query(
        conn,
        "answered_at IS NULL AND (asker = ?1 OR target = ?1)",
        [agent],
    )
}

/// How many open questions `asker` has asked.
pub fn count_open_of(conn: &Connection, asker: &str) -> Result<u64, StoreError> {
    let n: i64 = conn.query_row(
        "SELECT COUNT(*) FROM questions WHERE answered_at IS NULL AND asker = ?1",
        [asker],
        |r| r.get(0),
    )?;
    Ok(u64::try_from(n).unwrap_or(0))
}

/// Open questions whose TTL ran out at `now`.
pub fn expired(conn: &Connection, now: i64) -> Result<Vec<QuestionRow>, StoreError> {
    query(
        conn,
        "answered_at IS NULL AND expires_at IS NOT NULL AND expires_at <= ?1",
        [now],
    )
}

#[cfg(test)]
#[path = "questions_tests.rs"]
mod tests;
