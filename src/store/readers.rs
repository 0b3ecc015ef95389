//! Readers: a fixed pool of threads, each with its own read-only connection
//! (WAL lets them read beside the writer). A waiting call is a queued job
//! and a oneshot, not a thread.

use std::path::Path;
use std::sync::mpsc::{Receiver, Sender};
use std::sync::{Arc, Mutex, PoisonError};

use rusqlite::{Connection, OpenFlags};

use super::StoreError;

/// Reader threads: SQLite reads are short; two keep one busy reader from
/// stalling the rest on this 2-core class of host.
pub const READERS: usize = 2;

/// A read queued for the pool.
pub(super) type ReadJob = Box<dyn FnOnce(&Connection) + Send>;

/// Open [`READERS`] read-only connections to `path` and start their threads.
pub(super) fn spawn(path: &Path) -> Result<Sender<ReadJob>, StoreError> {
    let (tx, rx) = std::sync::mpsc::channel::<ReadJob>();
    let rx = Arc::new(Mutex::new(rx));
    for i in 0..READERS {
        let conn = Connection::open_with_flags(
            path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.pragma_update(None, "query_only", "ON")?;
        conn.set_prepared_statement_cache_capacity(super::STATEMENT_CACHE);
        let rx = Arc::clone(&rx);
        std::thread::Builder::new()
            .name(format!("store-reader-{i}"))
            .spawn(move || serve(&conn, &rx))
            .map_err(|source| StoreError::Open {
                path: path.to_path_buf(),
                source,
            })?;
    }
    Ok(tx)
}

fn serve(conn: &Connection, rx: &Mutex<Receiver<ReadJob>>) {
    loop {
        let job = {
            let rx = rx.lock().unwrap_or_else(PoisonError::into_inner);
            rx.recv()
        };
        match job {
            Ok(job) => job(conn),
            Err(_) => return,
        }
    }
}
