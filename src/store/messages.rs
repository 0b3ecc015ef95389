//! The broker's message table: every message accepted is a row before it is
//! acknowledged, so nothing acknowledged is lost across a crash.

use rusqlite::{Connection, params};

use super::StoreError;
use crate::wire::ident::Ident;

/// The operator's name as a recipient or sender.
pub const OPERATOR: &str = "operator";

/// Who a stored message is for.
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub enum Recipient {
    Agent(Ident),
    /// The human operator's inbox (never `recv`'d by an agent).
    Operator,
}

impl Recipient {
    pub fn as_str(&self) -> &str {
        match self {
            Self::Agent(name) => name.as_str(),
            Self::Operator => OPERATOR,
        }
    }
}

/// Store a pending message; its id.
pub fn insert(
    conn: &Connection,
    from: &str,
    to: &Recipient,
    body: &str,
    in_reply_to: Option<i64>,
    at: i64,
) -> Result<i64, StoreError> {
    conn.execute(
        "INSERT INTO messages (sender, recipient, body, in_reply_to, at) VALUES (?1, ?2, ?3, ?4, ?5)",
        params![from, to.as_str(), body, in_reply_to, at],
    )?;
    Ok(conn.last_insert_rowid())
}
