//! The hive's durable state: one SQLite file (embedded, WAL) in the state
//! directory.
//!
//! Decisions:
//! - **One connection behind a mutex, used only on blocking threads.**
//!   rusqlite's `Connection` is `Send` but not `Sync`, and SQLite serializes
//!   writers anyway; [`Store::run`] moves each unit of work onto tokio's
//!   blocking pool so no query ever stalls the reactor. Rejected: a
//!   connection pool, which buys concurrent readers we do not need at the
//!   price of `SQLITE_BUSY` handling on every write.
//! - **Write transactions are `IMMEDIATE`** ([`immediate`]): a deferred
//!   transaction that upgrades from read to write fails with `SQLITE_BUSY`
//!   without consulting the busy timeout.
//! - **WAL with `synchronous=FULL`**: a commit is on disk when it returns, so
//!   a message `send` acknowledged is never lost to a power cut. NORMAL would
//!   be faster and is still safe against a process crash; the broker
//!   benchmark prints the cost.
//! - **Numbered migrations** kept in `PRAGMA user_version` (`migrations.rs`).
//! - The file is created `0600`: it holds every message of the hive.

pub mod agents;
pub mod approvals;
pub mod grants;
pub mod messages;
mod migrations;
pub mod questions;
pub mod reminders;
pub mod schedules;
pub mod swarm;

use std::fs::OpenOptions;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, Transaction, TransactionBehavior};

/// Why a store operation failed.
#[derive(Debug, thiserror::Error)]
pub enum StoreError {
    /// The database file or its directory could not be created or opened.
    #[error("cannot open the database at {path}")]
    Open {
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// SQLite refused a statement. The daemon's data is intact; the operator
    /// should read the log.
    #[error("database error")]
    Sqlite(#[from] rusqlite::Error),
    /// A row holds a value this build does not understand (written by a newer
    /// build, or edited by hand).
    #[error("database row is not understood: {0}")]
    Corrupt(String),
    /// The database was written by a newer hive-c0re.
    #[error(
        "the database is at schema version {found}, newer than this build's {known}; upgrade hive-c0re"
    )]
    TooNew { found: i64, known: i64 },
    /// The blocking task running the query panicked or was cancelled.
    #[error("database task did not finish")]
    Task,
}

/// A handle to the database; cheap to clone.
#[derive(Debug, Clone)]
pub struct Store {
    conn: Arc<Mutex<Connection>>,
}

impl Store {
    /// Open (creating it `0600` if needed) and migrate the database at `path`.
    pub fn open(path: &Path) -> Result<Self, StoreError> {
        let open_err = |source| StoreError::Open {
            path: path.to_path_buf(),
            source,
        };
        if let Some(dir) = path.parent() {
            std::fs::create_dir_all(dir).map_err(open_err)?;
        }
        OpenOptions::new()
            .create(true)
            .append(true)
            .mode(0o600)
            .open(path)
            .map_err(open_err)?;
        let conn = Connection::open(path)?;
        conn.pragma_update(None, "journal_mode", "WAL")?;
        conn.pragma_update(None, "synchronous", "FULL")?;
        Self::init(conn)
    }

    /// A private in-memory database, for tests.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        Self::init(Connection::open_in_memory()?)
    }

    fn init(mut conn: Connection) -> Result<Self, StoreError> {
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations::apply(&mut conn)?;
        Ok(Self {
            conn: Arc::new(Mutex::new(conn)),
        })
    }

    /// Run `f` with the connection on a blocking thread.
    pub async fn run<R, F>(&self, f: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        self.run_as(f).await
    }

    /// [`Store::run`] answering in the caller's error type `E`, so a service
    /// call returns its rule refusals and store failures in one `Result`
    /// (no `Result<Result<_, Refusal>, StoreError>`).
    pub async fn run_as<R, E, F>(&self, f: F) -> Result<R, E>
    where
        R: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, E> + Send + 'static,
    {
        let store = self.clone();
        tokio::task::spawn_blocking(move || {
            let mut conn = store.conn.lock().unwrap_or_else(PoisonError::into_inner);
            f(&mut conn)
        })
        .await
        .map_err(|_| E::from(StoreError::Task))?
    }

    /// Run `f` with the connection on this thread (startup and tests).
    pub fn blocking<R>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut conn = self.conn.lock().unwrap_or_else(PoisonError::into_inner);
        f(&mut conn)
    }
}

/// Begin a write transaction that takes the write lock up front.
pub fn immediate(conn: &mut Connection) -> Result<Transaction<'_>, StoreError> {
    Ok(conn.transaction_with_behavior(TransactionBehavior::Immediate)?)
}
