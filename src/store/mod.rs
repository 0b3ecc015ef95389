//! The hive's durable state: one SQLite file (embedded, WAL) in the state
//! directory.
//!
//! Decisions:
//! - **One writer with group commit** (`writer.rs`): every write is a job
//!   queued to one thread owning the write connection, which drains its
//!   queue into one `IMMEDIATE` transaction (one fsync for the batch), each
//!   job in its own savepoint so one caller's failure rolls back only its
//!   own writes, and answers each caller after the `COMMIT`. SQLite
//!   serializes writers anyway; batching is what makes the fsync shared.
//!   Rejected: a connection per writer (`SQLITE_BUSY` on every write, one
//!   fsync each). While several callers write at once (the last batch
//!   carried more than one job), a batch gathers for `writer::GATHER`
//!   (100 µs) after its first job, so the writes of the callers the last
//!   commit just answered join it (about twice the jobs per fsync on the
//!   broker's ring of 100 agents). A lone write commits at once; an answer
//!   still waits for its batch's `COMMIT`, as before.
//! - **Reads on their own connections** (`readers.rs`): a fixed pool of
//!   reader threads with read-only connections; WAL lets them read beside
//!   the writer. A waiting call is a queued job and a oneshot, never a
//!   thread of its own. An in-memory store (tests) has one connection, so
//!   its reads queue to the writer.
//! - **Write transactions are `IMMEDIATE`** ([`immediate`]): a deferred
//!   transaction that upgrades from read to write fails with `SQLITE_BUSY`
//!   without consulting the busy timeout. Inside the writer's batch
//!   [`immediate`] is a savepoint.
//! - **WAL with `synchronous=FULL`**: a commit is on disk when it returns, so
//!   a message `send` acknowledged is never lost to a power cut. NORMAL would
//!   be faster and is still safe against a process crash; the broker
//!   benchmark prints the cost.
//! - **What an answer means** (the broker's contract, unchanged by the
//!   in-memory queues): a `send` (any delivery) answers once its row is
//!   committed, an `ack_turn` once its rows are `handled`, both on disk. A
//!   `recv` writes nothing it waits for: which rows are in flight is the
//!   service's memory, and their `popped_at` mark rides the next commit
//!   (`messages.rs`). A daemon killed before that commit hands those
//!   messages out again after its restart, not marked redelivered; none is
//!   lost, and none whose ack was answered comes back.
//! - **Numbered migrations** kept in `PRAGMA user_version` (`migrations.rs`).
//! - The file is created `0600`: it holds every message of the hive.

pub mod agents;
pub mod approvals;
pub mod egress_log;
pub mod grants;
pub mod hooks;
pub mod lock;
pub mod messages;
mod migrations;
pub mod model_log;
pub mod purge;
pub mod questions;
mod readers;
pub mod reminders;
pub mod replies;
mod savepoint;
pub mod schedules;
pub mod spend_caps;
pub mod swarm;
pub mod transcripts;
pub mod turns;
mod writer;

use std::fs::OpenOptions;
use std::ops::Deref;
use std::os::unix::fs::OpenOptionsExt;
use std::path::{Path, PathBuf};
use std::sync::mpsc::Sender;
use std::sync::{Arc, Mutex, PoisonError};
use std::time::Duration;

use rusqlite::{Connection, Transaction, TransactionBehavior};

pub use savepoint::Savepoint;

pub use writer::{MAX_BATCH, WriteStats};

/// Prepared statements kept per connection. Every query of the store is
/// `prepare_cached`; rusqlite's default of 16 is fewer than the write
/// connection's statements, so the broker's were evicted and parsed again.
const STATEMENT_CACHE: usize = 128;

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
    inner: Arc<Shared>,
}

struct Shared {
    /// The write connection: the writer thread's, and [`Store::blocking`]'s
    /// at start-up and in tests.
    conn: Arc<Mutex<Connection>>,
    writes: Sender<writer::Job>,
    counters: Arc<writer::Counters>,
    /// Absent for an in-memory store: its reads queue to the writer.
    reads: Option<Sender<readers::ReadJob>>,
}

impl std::fmt::Debug for Shared {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Store")
            .field("readers", &self.reads.is_some())
            .finish_non_exhaustive()
    }
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
        let conn = Self::migrate(conn)?;
        let reads = readers::spawn(path)?;
        Self::start(conn, Some(reads), writer::GATHER).map_err(open_err)
    }

    /// A private in-memory database, for tests.
    pub fn open_in_memory() -> Result<Self, StoreError> {
        let conn = Self::migrate(Connection::open_in_memory()?)?;
        // No disk, no fsync to share: batches do not gather.
        Self::start(conn, None, Duration::ZERO).map_err(|source| StoreError::Open {
            path: PathBuf::from(":memory:"),
            source,
        })
    }

    fn migrate(mut conn: Connection) -> Result<Connection, StoreError> {
        conn.set_prepared_statement_cache_capacity(STATEMENT_CACHE);
        conn.pragma_update(None, "foreign_keys", "ON")?;
        migrations::apply(&mut conn)?;
        Ok(conn)
    }

    fn start(
        conn: Connection,
        reads: Option<Sender<readers::ReadJob>>,
        gather: Duration,
    ) -> std::io::Result<Self> {
        let conn = Arc::new(Mutex::new(conn));
        let counters = Arc::new(writer::Counters::default());
        let index = writer::Chore {
            name: "message index",
            every: Duration::from_secs(1),
            run: |c| messages::index_tail(c).map(drop),
        };
        let writes = writer::spawn(
            Arc::clone(&conn),
            Arc::clone(&counters),
            vec![index],
            gather,
        )?;
        Ok(Self {
            inner: Arc::new(Shared {
                conn,
                writes,
                counters,
                reads,
            }),
        })
    }

    /// Run the write `f` in the writer's next batch; answered once that
    /// batch is committed (on disk). If `f` fails, only its own writes are
    /// rolled back.
    pub async fn run<R, F>(&self, f: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, StoreError> + Send + 'static,
    {
        self.run_as(f).await
    }

    /// Queue the write `f` for the writer's next batch without waiting for
    /// it: for what may ride the next commit rather than be waited for (a
    /// failure is logged). Keeps order with every later [`Store::run`]. As
    /// [`Store::run_atomic`], `f` must not fail part-way.
    pub fn queue<F>(&self, f: F)
    where
        F: FnOnce(&mut Connection) -> Result<(), StoreError> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        let logged = move |c: &mut Connection| {
            let result = f(c);
            if let Err(err) = &result {
                tracing::error!("a queued write failed: {err}");
            }
            result
        };
        drop(answer);
        if self
            .inner
            .writes
            .send(writer::job(logged, reply).guarded(false))
            .is_err()
        {
            tracing::error!("a queued write was dropped: the writer has stopped");
        }
    }

    /// [`Store::run_as`] for an `f` that cannot fail part-way: its writes
    /// are one statement, or all inside its own [`immediate`] transaction.
    /// The writer opens no savepoint of its own for it (the broker's hot
    /// path: a send, an ack). An `f` that wrote, then failed outside such a
    /// transaction, would have its writes committed: keep it to that shape.
    pub async fn run_atomic<R, E, F>(&self, f: F) -> Result<R, E>
    where
        R: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, E> + Send + 'static,
    {
        self.submit(f, false).await
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
        self.submit(f, true).await
    }

    async fn submit<R, E, F>(&self, f: F, guarded: bool) -> Result<R, E>
    where
        R: Send + 'static,
        E: From<StoreError> + Send + 'static,
        F: FnOnce(&mut Connection) -> Result<R, E> + Send + 'static,
    {
        let (reply, answer) = tokio::sync::oneshot::channel();
        self.inner
            .writes
            .send(writer::job(f, reply).guarded(guarded))
            .map_err(|_| E::from(StoreError::Task))?;
        answer.await.map_err(|_| E::from(StoreError::Task))?
    }

    /// Run the read-only `f` on a reader connection (it sees every write
    /// answered before it was queued). Writing through it fails: the reader
    /// connections are `query_only`.
    pub async fn read<R, F>(&self, f: F) -> Result<R, StoreError>
    where
        R: Send + 'static,
        F: FnOnce(&Connection) -> Result<R, StoreError> + Send + 'static,
    {
        let Some(reads) = &self.inner.reads else {
            return self.run(move |c| f(c)).await;
        };
        let (reply, answer) = tokio::sync::oneshot::channel();
        let job: readers::ReadJob = Box::new(move |conn| {
            let result = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| f(conn)))
                .unwrap_or(Err(StoreError::Task));
            let _ = reply.send(result);
        });
        reads.send(job).map_err(|_| StoreError::Task)?;
        answer.await.map_err(|_| StoreError::Task)?
    }

    /// The writer's batches and jobs so far (benchmarks: jobs per commit).
    pub fn write_stats(&self) -> WriteStats {
        self.inner.counters.read()
    }

    /// Run `f` with the write connection on this thread (startup and
    /// tests), outside the writer's batches.
    pub fn blocking<R>(
        &self,
        f: impl FnOnce(&mut Connection) -> Result<R, StoreError>,
    ) -> Result<R, StoreError> {
        let mut conn = self
            .inner
            .conn
            .lock()
            .unwrap_or_else(PoisonError::into_inner);
        f(&mut conn)
    }
}

/// A write transaction from [`immediate`]: a transaction of its own on a
/// connection outside one, a savepoint inside the writer's batch. Reads
/// through it as a [`Connection`]; [`Tx::commit`] keeps its writes, dropping
/// it rolls them back.
#[derive(Debug)]
pub enum Tx<'c> {
    Top(Transaction<'c>),
    Nested(Savepoint<'c>),
}

impl Tx<'_> {
    /// Keep the writes (commit, or release the savepoint into the batch).
    pub fn commit(self) -> Result<(), StoreError> {
        match self {
            Self::Top(tx) => tx.commit()?,
            Self::Nested(sp) => sp.release()?,
        }
        Ok(())
    }
}

impl Deref for Tx<'_> {
    type Target = Connection;
    fn deref(&self) -> &Connection {
        match self {
            Self::Top(tx) => tx,
            Self::Nested(sp) => sp,
        }
    }
}

/// Begin a write transaction that takes the write lock up front (inside the
/// writer's batch, which holds it already: a savepoint).
pub fn immediate(conn: &mut Connection) -> Result<Tx<'_>, StoreError> {
    if conn.is_autocommit() {
        Ok(Tx::Top(conn.transaction_with_behavior(
            TransactionBehavior::Immediate,
        )?))
    } else {
        Ok(Tx::Nested(Savepoint::open(conn, savepoint::NESTED)?))
    }
}
