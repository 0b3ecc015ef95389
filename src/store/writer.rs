//! The one writer: a thread owning the write connection that drains its queue
//! into one `IMMEDIATE` transaction per batch (group commit).
//!
//! Each job runs inside its own `SAVEPOINT`: a job that fails (or panics) is
//! rolled back to its savepoint and answered with its error, and the other
//! jobs of the batch still commit. Every caller is answered only after the
//! batch's `COMMIT` returned (`synchronous=FULL`: on disk), so an
//! acknowledged write is as durable as with one transaction per call; the
//! fsync is shared.

use std::panic::{AssertUnwindSafe, catch_unwind};
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::mpsc::{Receiver, Sender, TryRecvError};
use std::sync::{Arc, Mutex, PoisonError};
use std::time::{Duration, Instant};

use rusqlite::Connection;

use super::StoreError;
use super::savepoint::{self, JOB};

/// The most jobs one transaction takes: a bound on how long the write lock is
/// held and how much a failed commit takes down with it.
pub const MAX_BATCH: usize = 512;

/// How long a batch gathers once its first job is in, while writes come
/// from several callers at once (the last batch carried more than one):
/// callers answered by the last commit send their next writes within
/// about this long, and they share this commit instead of needing one of
/// their own. A lone write (the last batch carried one job) commits at
/// once. Measured on the broker's ring (issue 31, `bench_ring` beside the
/// build without it): CPU per message 0.84–0.94× at 100 agents over four
/// runs (about twice the jobs per commit, 35), 0.94–0.96× at 1,000 in the
/// two runs in rotating order (75–125 jobs a commit either way);
/// messages per second within the run-to-run noise (0.92–1.17×). 50 µs
/// saved less; 200 µs and 400 µs cost messages per second at 100 agents
/// (a message's round waits on two commits). The kernel's timer slack adds
/// up to 50 µs to the sleep.
pub const GATHER: Duration = Duration::from_micros(100);

/// How long a batch whose first job just came gathers, after a batch of
/// `last` jobs: `gather` while several callers write at once, else not at
/// all.
fn gathering(last: usize, gather: Duration) -> Option<Duration> {
    (last > 1 && !gather.is_zero()).then_some(gather)
}

/// How a job's answer learns the fate of the batch's commit.
pub(super) type Commit<'a> = Result<(), &'a rusqlite::Error>;
/// What a job leaves once it ran: whether it succeeded (its savepoint is
/// released, else rolled back) and how to answer its caller after the commit.
pub(super) type Ran = (bool, Box<dyn FnOnce(Commit<'_>) + Send>);
/// A unit of work queued for the writer.
pub(super) struct Job {
    run: Box<dyn FnOnce(&mut Connection) -> Ran + Send>,
    /// Whether the writer wraps it in a savepoint of its own (see
    /// [`Job::guarded`]).
    guarded: bool,
}

/// Wrap `f` as a job answering on `reply`: `f`'s own error as it is, a
/// failed commit as a store error, a panic as [`StoreError::Task`]. A
/// failure rolls back only `f`'s writes (its savepoint).
pub(super) fn job<R, E, F>(f: F, reply: tokio::sync::oneshot::Sender<Result<R, E>>) -> Job
where
    R: Send + 'static,
    E: From<StoreError> + Send + 'static,
    F: FnOnce(&mut Connection) -> Result<R, E> + Send + 'static,
{
    Job {
        run: answered(f, reply),
        guarded: true,
    }
}

impl Job {
    /// Unguarded, for an `f` that cannot fail part-way: its writes are one
    /// statement (SQLite undoes a failed statement itself) or all inside
    /// its own [`super::immediate`] transaction. The writer opens no
    /// savepoint for it: two statements fewer per job, and no page copied
    /// to the sub-journal for it.
    pub(super) fn guarded(self, guarded: bool) -> Self {
        Self { guarded, ..self }
    }
}

fn answered<R, E, F>(
    f: F,
    reply: tokio::sync::oneshot::Sender<Result<R, E>>,
) -> Box<dyn FnOnce(&mut Connection) -> Ran + Send>
where
    R: Send + 'static,
    E: From<StoreError> + Send + 'static,
    F: FnOnce(&mut Connection) -> Result<R, E> + Send + 'static,
{
    Box::new(move |conn| {
        let result = catch_unwind(AssertUnwindSafe(|| f(conn)))
            .unwrap_or_else(|_| Err(E::from(StoreError::Task)));
        let ok = result.is_ok();
        let answer = move |commit: Commit<'_>| {
            let result = match (result, commit) {
                (Ok(_), Err(e)) => Err(E::from(StoreError::from(copy_error(e)))),
                (result, _) => result,
            };
            // The caller may have gone (its request was cancelled); the
            // write stands either way.
            let _ = reply.send(result);
        };
        (ok, Box::new(answer))
    })
}

/// How many batches the writer ran and how many jobs they carried (so
/// jobs / batches is what one commit, one fsync, carries on average).
#[derive(Debug, Default)]
pub(super) struct Counters {
    batches: AtomicU64,
    jobs: AtomicU64,
}

/// A reading of the writer's [`Counters`].
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct WriteStats {
    /// Transactions run (one fsync each when they write).
    pub batches: u64,
    /// Write jobs run in them.
    pub jobs: u64,
}

impl Counters {
    pub(super) fn read(&self) -> WriteStats {
        WriteStats {
            batches: self.batches.load(Ordering::Relaxed),
            jobs: self.jobs.load(Ordering::Relaxed),
        }
    }
}

/// Work of the store's own that the writer folds into a batch of callers'
/// jobs at most once per `every` (while jobs come; none while it is idle),
/// so it shares their commit: e.g. indexing the message table's tail
/// (`messages::index_tail`). It runs last in its batch, in a savepoint of
/// its own; a failure is logged and tried again at the next due batch.
#[derive(Debug, Clone, Copy)]
pub(super) struct Chore {
    pub name: &'static str,
    pub every: Duration,
    pub run: fn(&Connection) -> Result<(), StoreError>,
}

impl Chore {
    fn job(self) -> Job {
        Job {
            run: Box::new(move |conn| {
                let result = (self.run)(conn);
                if let Err(err) = &result {
                    tracing::error!("the store's {} failed: {err}", self.name);
                }
                (result.is_ok(), Box::new(|_| {}))
            }),
            guarded: true,
        }
    }
}

/// Start the writer thread over `conn`, batches gathering for `gather`
/// ([`GATHER`]; zero: never); jobs arrive on the returned sender. The
/// thread ends when every sender is dropped.
pub(super) fn spawn(
    conn: Arc<Mutex<Connection>>,
    counters: Arc<Counters>,
    chores: Vec<Chore>,
    gather: Duration,
) -> std::io::Result<Sender<Job>> {
    let (tx, rx) = std::sync::mpsc::channel::<Job>();
    std::thread::Builder::new()
        .name("store-writer".into())
        .spawn(move || run(&conn, &rx, &counters, &chores, gather))?;
    Ok(tx)
}

fn run(
    conn: &Mutex<Connection>,
    rx: &Receiver<Job>,
    counters: &Counters,
    chores: &[Chore],
    gather: Duration,
) {
    let mut due: Vec<Instant> = chores.iter().map(|c| Instant::now() + c.every).collect();
    let mut last = 0;
    while let Ok(first) = rx.recv() {
        let mut batch = vec![first];
        if let Some(gather) = gathering(last, gather) {
            // A sleep, not a wait on the queue: senders wake nobody meanwhile.
            std::thread::sleep(gather);
        }
        while batch.len() < MAX_BATCH {
            match rx.try_recv() {
                Ok(job) => batch.push(job),
                Err(TryRecvError::Empty | TryRecvError::Disconnected) => break,
            }
        }
        last = batch.len();
        counters.batches.fetch_add(1, Ordering::Relaxed);
        counters
            .jobs
            .fetch_add(batch.len() as u64, Ordering::Relaxed);
        let now = Instant::now();
        for (chore, due) in chores.iter().zip(&mut due) {
            if now >= *due {
                *due = now + chore.every;
                batch.push(chore.job());
            }
        }
        let mut conn = conn.lock().unwrap_or_else(PoisonError::into_inner);
        commit_batch(&mut conn, batch);
    }
}

/// Run `batch` in one transaction, each job in its own savepoint, then
/// answer every job with the commit's outcome.
pub(super) fn commit_batch(conn: &mut Connection, batch: Vec<Job>) {
    if let Err(e) = savepoint::step(conn, "BEGIN IMMEDIATE") {
        // Nothing ran: dropping the jobs answers every caller
        // [`StoreError::Task`]; the cause is in the log.
        tracing::error!(jobs = batch.len(), "cannot begin a write transaction: {e}");
        return;
    }
    let answers: Vec<Answer> = batch
        .into_iter()
        .map(|job| in_savepoint(conn, job))
        .collect();
    match savepoint::step(conn, "COMMIT") {
        Ok(()) => answers.into_iter().for_each(|a| a(Ok(()))),
        Err(e) => {
            tracing::error!(jobs = answers.len(), "write batch did not commit: {e}");
            let _ = conn.execute_batch("ROLLBACK");
            answers.into_iter().for_each(|a| a(Err(&e)));
        }
    }
}

type Answer = Box<dyn FnOnce(Commit<'_>) + Send>;

fn in_savepoint(conn: &mut Connection, job: Job) -> Answer {
    if !job.guarded {
        return (job.run)(conn).1;
    }
    if let Err(e) = savepoint::step(conn, JOB.open) {
        // Not run: dropped, its caller is answered [`StoreError::Task`].
        tracing::error!("cannot open a savepoint: {e}");
        return Box::new(|_| {});
    }
    let (ok, answer) = (job.run)(conn);
    let undone = if ok {
        Ok(())
    } else {
        savepoint::step(conn, JOB.rollback)
    };
    if let Err(e) = undone.and_then(|()| savepoint::step(conn, JOB.release)) {
        tracing::error!("cannot end a savepoint: {e}");
    }
    answer
}

/// `rusqlite::Error` is not `Clone`; every caller of a failed batch gets the
/// same SQLite code and message.
fn copy_error(e: &rusqlite::Error) -> rusqlite::Error {
    match e {
        rusqlite::Error::SqliteFailure(code, msg) => {
            rusqlite::Error::SqliteFailure(*code, msg.clone())
        }
        other => rusqlite::Error::SqliteFailure(
            rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_ERROR),
            Some(other.to_string()),
        ),
    }
}

#[cfg(test)]
#[path = "writer_tests.rs"]
mod tests;
