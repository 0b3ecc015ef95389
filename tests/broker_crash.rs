//! A SIGKILL of the real daemon under load loses no message that `send`
//! acknowledged: every acknowledged body is, after a restart, either
//! already received before the crash or received after it; and a kill in
//! the middle of the store's group commit (many senders at once, so every
//! batch holds many callers) leaves each acknowledged message pending
//! exactly once; and a kill among receives and acks brings back no
//! message whose ack was answered; and a kill while the writer indexes the
//! history (`messages::index_tail`, once a second under load) leaves every
//! acknowledged message in its recipient's history exactly once; and a
//! kill while the writer gathers a batch (asleep before its commit) leaves
//! every acknowledged message pending exactly once.

#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use std::collections::HashSet;
use std::sync::atomic::{AtomicUsize, Ordering};
use std::sync::{Arc, Mutex};
use std::thread::JoinHandle;

use common::{Conn, Daemon, Launch};

const HOST_OK: &str = r#"{"version":1,"ok":true}"#;

/// A thread sending `<name>-<n>` to `sink` until the daemon dies; the bodies
/// whose `send` was acknowledged.
fn sender(d: &Daemon, name: &str, acked: &Arc<AtomicUsize>) -> JoinHandle<Vec<String>> {
    let mut c = Conn::open(&d.agent_socket(name));
    let (acked, name) = (acked.clone(), name.to_owned());
    std::thread::spawn(move || {
        let mut confirmed = Vec::new();
        for n in 0.. {
            let body = format!("{name}-{n}");
            let line = format!(r#"{{"cmd":"send","to":"sink","body":"{body}"}}"#);
            match c.try_ask(&line) {
                Some(answer) if answer == r#"{"kind":"ok","delivered":1}"# => {
                    confirmed.push(body);
                    acked.fetch_add(1, Ordering::SeqCst);
                }
                Some(answer) => panic!("{answer}"),
                None => return confirmed,
            }
        }
        confirmed
    })
}

/// Run `f` on a thread with a connection to the sink's socket.
fn on_sink<T: Send + 'static>(
    d: &Daemon,
    f: impl FnOnce(Conn) -> T + Send + 'static,
) -> JoinHandle<T> {
    let c = Conn::open(&d.agent_socket("sink"));
    std::thread::spawn(move || f(c))
}

/// The bodies of the sink's next `recv` (up to 5, waiting up to 1 s);
/// `None` once the daemon is gone.
fn next_turn(c: &mut Conn) -> Option<Vec<String>> {
    let answer = c.try_ask(r#"{"cmd":"recv","wait_seconds":1,"max":5}"#)?;
    let v: serde_json::Value = serde_json::from_str(&answer).unwrap();
    let bodies = v["messages"].as_array().unwrap().iter();
    Some(
        bodies
            .map(|m| m["body"].as_str().unwrap().to_owned())
            .collect(),
    )
}

/// Wait until `n` sends were acknowledged.
fn wait_for_acks(acked: &AtomicUsize, n: usize) {
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(60);
    while acked.load(Ordering::SeqCst) < n {
        assert!(std::time::Instant::now() < deadline, "load never got going");
        std::thread::sleep(std::time::Duration::from_millis(5));
    }
}

/// SIGKILL the daemon once `n` sends were acknowledged (an event the
/// senders count, mid-stream): its state directory and every body whose
/// send was acknowledged.
fn kill_after(
    d: Daemon,
    acked: &AtomicUsize,
    n: usize,
    senders: Vec<JoinHandle<Vec<String>>>,
) -> (tempfile::TempDir, Vec<String>) {
    wait_for_acks(acked, n);
    let dir = d.kill_hard();
    let confirmed = senders.into_iter().flat_map(|s| s.join().unwrap());
    (dir, confirmed.collect())
}

/// Every acknowledged body was delivered.
fn assert_none_lost(confirmed: &[String], delivered: impl Fn(&str) -> bool) {
    let lost: Vec<&String> = confirmed.iter().filter(|b| !delivered(b)).collect();
    assert!(
        lost.is_empty(),
        "{} of {} acknowledged messages lost, e.g. {:?}",
        lost.len(),
        confirmed.len(),
        &lost[..lost.len().min(5)]
    );
}

#[test]
fn sigkill_of_the_daemon_under_load_loses_no_acknowledged_message() {
    let (d, acked, senders) = many_senders_and_a_sink(3);
    // The sink pops and acks while the senders run, so the crash finds
    // rows in every state: pending, in flight and handled.
    let received = Arc::new(Mutex::new(HashSet::new()));
    let sink = {
        let received = received.clone();
        on_sink(&d, move |mut c| {
            for n in 0.. {
                let Some(turn) = next_turn(&mut c) else {
                    return;
                };
                received.lock().unwrap().extend(turn);
                if n % 2 == 0 && c.try_ask(r#"{"cmd":"ack_turn"}"#).is_none() {
                    return;
                }
            }
        })
    };
    let (dir, confirmed) = kill_after(d, &acked, 300, senders);
    sink.join().unwrap();
    assert!(confirmed.len() >= 300);

    let d = Daemon::start_in(dir, Launch::Standalone);
    // The sink's socket is bound again at start; the harness requeues at
    // boot, then drains.
    let mut c = Conn::open(&d.agent_socket("sink"));
    assert_eq!(c.ask(r#"{"cmd":"requeue_inflight"}"#), r#"{"kind":"ok"}"#);
    let mut received = received.lock().unwrap().clone();
    loop {
        let got = c.recv(0, 500);
        if got.is_empty() {
            break;
        }
        received.extend(got.iter().map(|m| m["body"].as_str().unwrap().to_owned()));
    }
    assert_none_lost(&confirmed, |b| received.contains(b));
}

/// A daemon with `n` agents sending to `sink` (see [`sender`]): the
/// daemon, the acknowledged count, the senders. With many senders every
/// batch of the store's group commit holds many callers.
fn many_senders_and_a_sink(n: usize) -> (Daemon, Arc<AtomicUsize>, Vec<JoinHandle<Vec<String>>>) {
    let d = Daemon::start(Launch::Standalone);
    let names: Vec<String> = (0..n).map(|i| format!("s{i}")).collect();
    for a in names.iter().map(String::as_str).chain(["sink"]) {
        assert_eq!(
            d.request(&format!(r#"{{"cmd":"spawn","name":"{a}"}}"#)),
            HOST_OK
        );
    }
    let acked = Arc::new(AtomicUsize::new(0));
    let senders = names.iter().map(|n| sender(&d, n, &acked)).collect();
    (d, acked, senders)
}

/// Restart in `dir` and drain the sink: every `confirmed` body is pending
/// there, and none twice.
fn assert_pending_exactly_once(dir: tempfile::TempDir, confirmed: &[String]) {
    let d = Daemon::start_in(dir, Launch::Standalone);
    let mut c = Conn::open(&d.agent_socket("sink"));
    let mut delivered: std::collections::HashMap<String, usize> = Default::default();
    loop {
        let got = c.recv(0, 500);
        if got.is_empty() {
            break;
        }
        for m in got {
            *delivered
                .entry(m["body"].as_str().unwrap().to_owned())
                .or_default() += 1;
        }
        assert_eq!(c.ask(r#"{"cmd":"ack_turn"}"#), r#"{"kind":"ok"}"#);
    }
    assert_none_lost(confirmed, |b| delivered.contains_key(b));
    let twice: Vec<_> = delivered.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "delivered more than once: {twice:?}");
}

#[test]
fn sigkill_in_the_middle_of_a_group_commit_leaves_every_acknowledged_message_pending_exactly_once()
{
    let (d, acked, senders) = many_senders_and_a_sink(24);
    let (dir, confirmed) = kill_after(d, &acked, 500, senders);
    assert_pending_exactly_once(dir, &confirmed);
}

/// While several callers write, a batch gathers before it commits (the
/// writer sleeps `store::writer::GATHER` for the callers' next writes): a
/// kill caught in that sleep — the daemon stopped, its writer seen asleep,
/// then killed — leaves every acknowledged message pending exactly once.
#[test]
fn sigkill_while_a_batch_gathers_leaves_every_acknowledged_message_pending_exactly_once() {
    let (d, acked, senders) = many_senders_and_a_sink(24);
    wait_for_acks(&acked, 300);
    stop_while_gathering(&d);
    let (dir, confirmed) = kill_after(d, &acked, 300, senders);
    assert_pending_exactly_once(dir, &confirmed);
}

/// Stop the daemon (SIGSTOP) at a moment its store writer is asleep in a
/// batch's gather, as the kernel reports the thread's syscall.
fn stop_while_gathering(d: &Daemon) {
    use nix::sys::signal::{Signal, kill};
    let pid = nix::unistd::Pid::from_raw(d.child.id() as i32);
    let tasks = format!("/proc/{pid}/task");
    let writer = std::fs::read_dir(&tasks)
        .unwrap()
        .flatten()
        .map(|t| t.path())
        .find(|t| std::fs::read_to_string(t.join("comm")).unwrap().trim() == "store-writer")
        .expect("the store's writer thread");
    let sleeps = [nix::libc::SYS_nanosleep, nix::libc::SYS_clock_nanosleep];
    let deadline = std::time::Instant::now() + std::time::Duration::from_secs(30);
    loop {
        kill(pid, Signal::SIGSTOP).unwrap();
        // Stopped: state `T` in the thread's stat, after its command name.
        while !std::fs::read_to_string(writer.join("stat"))
            .unwrap()
            .rsplit(") ")
            .next()
            .is_some_and(|rest| rest.starts_with('T'))
        {
            std::thread::yield_now();
        }
        let syscall = std::fs::read_to_string(writer.join("syscall")).unwrap();
        let number = syscall
            .split_whitespace()
            .next()
            .and_then(|n| n.parse().ok());
        if number.is_some_and(|n: i64| sleeps.contains(&n)) {
            return;
        }
        kill(pid, Signal::SIGCONT).unwrap();
        assert!(
            std::time::Instant::now() < deadline,
            "the writer was never seen gathering (last: {syscall})"
        );
        std::thread::sleep(std::time::Duration::from_micros(300));
    }
}

/// A `recv` writes nothing it waits for (the in-flight mark rides the next
/// commit) and an `ack_turn` answers once its rows are handled on disk: a
/// kill among turns brings back no message whose ack was answered, and
/// loses none that was received but not acked.
#[test]
fn sigkill_among_receives_and_acks_brings_back_no_acked_message_and_loses_no_other() {
    let (d, acked, senders) = many_senders_and_a_sink(3);
    // Bodies whose ack_turn was answered; the sink's thread returns those
    // of the turn whose ack the kill cut off (handled or not).
    let settled = Arc::new(Mutex::new(HashSet::new()));
    let sink = {
        let settled = settled.clone();
        on_sink(&d, move |mut c| -> Vec<String> {
            loop {
                let Some(turn) = next_turn(&mut c) else {
                    return Vec::new();
                };
                match c.try_ask(r#"{"cmd":"ack_turn"}"#) {
                    Some(ok) => {
                        assert_eq!(ok, r#"{"kind":"ok"}"#);
                        settled.lock().unwrap().extend(turn);
                    }
                    None => return turn,
                }
            }
        })
    };
    let (dir, confirmed) = kill_after(d, &acked, 300, senders);
    let cut = sink.join().unwrap();
    let settled = settled.lock().unwrap().clone();
    assert!(!settled.is_empty(), "no turn was acked before the kill");

    // The harness starts again: requeue, then drain.
    let d = Daemon::start_in(dir, Launch::Standalone);
    let mut c = Conn::open(&d.agent_socket("sink"));
    assert_eq!(c.ask(r#"{"cmd":"requeue_inflight"}"#), r#"{"kind":"ok"}"#);
    let mut after = HashSet::new();
    loop {
        let got = c.recv(0, 500);
        if got.is_empty() {
            break;
        }
        after.extend(got.iter().map(|m| m["body"].as_str().unwrap().to_owned()));
        assert_eq!(c.ask(r#"{"cmd":"ack_turn"}"#), r#"{"kind":"ok"}"#);
    }
    let back: Vec<_> = settled.intersection(&after).collect();
    assert!(back.is_empty(), "acked, then delivered again: {back:?}");
    let cut: HashSet<String> = cut.into_iter().collect();
    assert_none_lost(&confirmed, |b| {
        settled.contains(b) || after.contains(b) || cut.contains(b)
    });
}

/// The history index is written behind the table, once a second, inside a
/// batch of senders' jobs: a kill under load (after several such seconds,
/// at a moment unrelated to them) leaves every acknowledged message in the
/// sink's history (`recent`: rows behind the index's mark and past it)
/// exactly once, and indexing the rest changes nothing of that.
#[test]
fn sigkill_while_the_history_is_indexed_leaves_every_acknowledged_message_listed_once() {
    use hive_c0re::hive::Recipient;
    use hive_c0re::store::{Store, messages};

    let (d, acked, senders) = many_senders_and_a_sink(3);
    let db = d.state_dir().join("hive.db");
    // The sink reads and acks (its inbox stays under its cap): the history
    // holds handled and pending rows.
    let sink_reader = on_sink(&d, |mut c| {
        while next_turn(&mut c).is_some() && c.try_ask(r#"{"cmd":"ack_turn"}"#).is_some() {}
    });
    // Past two of the writer's index seconds, then at the 300th
    // acknowledged send or later, 0-999 ms into the third.
    let jitter = {
        use std::hash::{BuildHasher, Hasher};
        std::collections::hash_map::RandomState::new()
            .build_hasher()
            .finish()
            % 1000
    };
    std::thread::sleep(std::time::Duration::from_millis(2000 + jitter));
    let (_dir, confirmed) = kill_after(d, &acked, 300, senders);
    sink_reader.join().unwrap();

    let store = Store::open(&db).unwrap();
    let sink = Recipient::Agent("sink".parse().unwrap());
    let listed = |store: &Store| -> std::collections::HashMap<String, usize> {
        let (rows, _) = store
            .blocking(|c| messages::recent(c, &sink, u64::MAX, usize::MAX))
            .unwrap();
        let mut seen = std::collections::HashMap::new();
        for r in rows {
            *seen.entry(r.body).or_insert(0) += 1;
        }
        seen
    };
    let (indexed, upto): (i64, i64) = store
        .blocking(|c| {
            Ok(c.query_row(
                "SELECT (SELECT COUNT(*) FROM message_index), upto FROM message_index_mark",
                [],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?)
        })
        .unwrap();
    assert!(indexed > 0 && upto > 0, "the index never ran under load");
    let before = listed(&store);
    assert_none_lost(&confirmed, |b| before.contains_key(b));
    let twice: Vec<_> = before.iter().filter(|(_, n)| **n > 1).collect();
    assert!(twice.is_empty(), "listed more than once: {twice:?}");
    store
        .blocking(|c| messages::index_tail(c).map(drop))
        .unwrap();
    assert_eq!(
        listed(&store),
        before,
        "indexing the rest changed the history"
    );
}
