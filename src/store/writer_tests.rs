use super::*;
use crate::hive::Recipient;
use crate::store::{Store, messages};
use crate::testing::id;
use tokio::sync::oneshot;

type Reply = oneshot::Receiver<Result<i64, StoreError>>;

fn insert_job(body: &'static str, then_fail: bool) -> (Job, Reply) {
    let (tx, rx) = oneshot::channel();
    let f = move |c: &mut Connection| {
        let id = messages::insert(c, "x", &Recipient::Agent(id("bob")), body, None, 1)?;
        if then_fail {
            return Err(StoreError::Corrupt(format!("{body} refused after writing")));
        }
        Ok(id)
    };
    (job(f, tx), rx)
}

fn bodies(store: &Store) -> Vec<String> {
    let rows = store
        .blocking(|c| messages::recent(c, &Recipient::Agent(id("bob")), 10, usize::MAX))
        .unwrap();
    let mut bodies: Vec<_> = rows.0.into_iter().map(|r| r.body).collect();
    bodies.sort();
    bodies
}

/// Run `jobs` as one batch on the store's write connection.
fn batch(store: &Store, jobs: Vec<Job>) {
    store
        .blocking(|conn| {
            commit_batch(conn, jobs);
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_failing_job_rolls_back_only_its_own_writes_and_the_batch_commits() {
    let store = Store::open_in_memory().unwrap();
    let (a, mut ra) = insert_job("a", false);
    let (b, mut rb) = insert_job("b", true);
    let (c, mut rc) = insert_job("c", false);
    batch(&store, vec![a, b, c]);
    assert!(ra.try_recv().unwrap().is_ok());
    let refused = rb.try_recv().unwrap().unwrap_err();
    assert!(refused.to_string().contains("b refused"), "{refused}");
    assert!(rc.try_recv().unwrap().is_ok());
    assert_eq!(bodies(&store), ["a", "c"]);
}

#[test]
fn a_panicking_job_is_answered_and_the_others_commit() {
    let store = Store::open_in_memory().unwrap();
    let (a, mut ra) = insert_job("a", false);
    let (tx, mut rp) = oneshot::channel::<Result<i64, StoreError>>();
    let panics = job(
        |c: &mut Connection| {
            messages::insert(c, "x", &Recipient::Agent(id("bob")), "p", None, 1)?;
            panic!("a bug in one caller");
        },
        tx,
    );
    let (c, mut rc) = insert_job("c", false);
    batch(&store, vec![a, panics, c]);
    assert!(ra.try_recv().unwrap().is_ok());
    assert!(matches!(rp.try_recv().unwrap(), Err(StoreError::Task)));
    assert!(rc.try_recv().unwrap().is_ok());
    assert_eq!(bodies(&store), ["a", "c"]);
}

#[test]
fn a_job_using_its_own_transaction_runs_as_a_savepoint_inside_the_batch() {
    let store = Store::open_in_memory().unwrap();
    let (tx, mut r) = oneshot::channel::<Result<usize, StoreError>>();
    let popper = job(
        |c: &mut Connection| {
            let tx = crate::store::immediate(c)?;
            messages::insert(&tx, "x", &Recipient::Agent(id("bob")), "one", None, 1)?;
            tx.commit()?;
            Ok(messages::queued_of(c, &id("bob"))?.len())
        },
        tx,
    );
    batch(&store, vec![popper]);
    assert_eq!(r.try_recv().unwrap().unwrap(), 1);
}

#[tokio::test(flavor = "multi_thread", worker_threads = 2)]
async fn concurrent_writes_to_a_file_store_are_all_committed_and_readable() {
    let dir = tempfile::tempdir().unwrap();
    let store = Store::open(&dir.path().join("hive.db")).unwrap();
    let mut calls = Vec::new();
    for i in 0..200 {
        let store = store.clone();
        calls.push(tokio::spawn(async move {
            store
                .run(move |c| {
                    messages::insert(
                        c,
                        "x",
                        &Recipient::Agent(id("bob")),
                        &i.to_string(),
                        None,
                        1,
                    )
                })
                .await
        }));
    }
    for call in calls {
        call.await.unwrap().unwrap();
    }
    let n = store
        .read(|c| messages::queued_of(c, &id("bob")).map(|q| q.len()))
        .await
        .unwrap();
    assert_eq!(n, 200);
    let stats = store.write_stats();
    assert_eq!(stats.jobs, 200, "every write went through the writer");
    assert!(
        (1..=200).contains(&stats.batches),
        "{stats:?}: at most one commit per write"
    );
    // And from a fresh connection: they are on disk.
    drop(store);
    let again = Store::open(&dir.path().join("hive.db")).unwrap();
    let n = again
        .blocking(|c| messages::queued_of(c, &id("bob")).map(|q| q.len()))
        .unwrap();
    assert_eq!(n, 200);
}

#[tokio::test]
async fn a_chore_rides_the_first_batch_after_its_interval_and_not_before() {
    let store = Store::open_in_memory().unwrap();
    let indexed = |store: &Store| {
        store
            .blocking(|c| {
                Ok(c.query_row("SELECT COUNT(*) FROM message_index", [], |r| {
                    r.get::<_, i64>(0)
                })?)
            })
            .unwrap()
    };
    let insert = |body: &'static str| {
        store.run(move |c| messages::insert(c, "x", &Recipient::Agent(id("bob")), body, None, 1))
    };
    insert("first").await.unwrap();
    assert_eq!(indexed(&store), 0, "indexed before its second was up");
    tokio::time::sleep(std::time::Duration::from_millis(1100)).await;
    insert("second").await.unwrap();
    assert_eq!(indexed(&store), 2, "the chore rode the batch");
    assert_eq!(bodies(&store), ["first", "second"]);
}

/// A writer of its own over a fresh in-memory database, batches gathering
/// for `gather`.
fn writer(gather: Duration) -> (Arc<Mutex<Connection>>, Arc<Counters>, Sender<Job>) {
    let conn = Store::migrate(Connection::open_in_memory().unwrap()).unwrap();
    let conn = Arc::new(Mutex::new(conn));
    let counters = Arc::new(Counters::default());
    let tx = spawn(Arc::clone(&conn), Arc::clone(&counters), Vec::new(), gather).unwrap();
    (conn, counters, tx)
}

fn send(tx: &Sender<Job>, body: &'static str) -> Reply {
    let (job, reply) = insert_job(body, false);
    tx.send(job).unwrap();
    reply
}

#[test]
fn a_batch_gathers_only_while_several_callers_write_at_once() {
    assert_eq!(gathering(0, GATHER), None, "the first write");
    assert_eq!(gathering(1, GATHER), None, "a lone write");
    assert_eq!(gathering(2, GATHER), Some(GATHER));
    assert_eq!(gathering(MAX_BATCH, Duration::ZERO), None, "gathering off");
}

#[test]
fn a_write_while_several_callers_write_waits_to_share_the_next_commit() {
    let (conn, counters, tx) = writer(Duration::from_secs(1));
    // One job alone, and two queued behind it while the connection is held:
    // a batch of one, then a batch of two.
    let held = conn.lock().unwrap();
    let a = send(&tx, "a");
    while counters.read().batches == 0 {
        std::thread::sleep(Duration::from_millis(1));
    }
    let (b, c) = (send(&tx, "b"), send(&tx, "c"));
    drop(held);
    for reply in [a, b, c] {
        reply.blocking_recv().unwrap().unwrap();
    }
    let two = WriteStats {
        batches: 2,
        jobs: 3,
    };
    assert_eq!(counters.read(), two);
    // The last batch carried two: a write sent a moment after the next
    // one shares its commit.
    let d = send(&tx, "d");
    std::thread::sleep(Duration::from_millis(20));
    let e = send(&tx, "e");
    for reply in [d, e] {
        reply.blocking_recv().unwrap().unwrap();
    }
    let shared = WriteStats {
        batches: 3,
        jobs: 5,
    };
    assert_eq!(counters.read(), shared, "d and e in one commit");
}

#[test]
fn a_lone_write_commits_without_gathering() {
    let gather = Duration::from_secs(30);
    let (_conn, counters, tx) = writer(gather);
    for body in ["first", "second"] {
        let started = Instant::now();
        send(&tx, body).blocking_recv().unwrap().unwrap();
        assert!(
            started.elapsed() < gather / 2,
            "{body}: {:?}",
            started.elapsed()
        );
    }
    assert_eq!(counters.read().batches, 2);
}
