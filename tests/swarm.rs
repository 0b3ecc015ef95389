//! The swarm end to end: the real `hive-c0re` binary (`--driver fake`) on a
//! real three-node NATS JetStream cluster (Debian's `nats-server` on
//! loopback).
//!
//! The cluster tests are `#[ignore]`d so that plain `cargo test` needs no
//! NATS and stays fast; `tests/run` installs `nats-server` and runs them
//! with `cargo test --test swarm -- --include-ignored`.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;
#[path = "support/swarm/hive.rs"]
mod swarm_hive;
#[path = "support/swarm/mod.rs"]
mod swarm_support;

use std::collections::{BTreeMap, BTreeSet};
use std::sync::Arc;
use std::sync::atomic::{AtomicBool, AtomicUsize, Ordering};
use std::time::{Duration, Instant};

use swarm_hive::{Hive, open_retrying, send, take};
use swarm_support::{Cluster, Cutter, SWARM, password, wait_until};

const HIVES: [&str; 3] = ["hive-a", "hive-b", "hive-c"];
const SENDERS: usize = 4;

fn agents() -> Vec<String> {
    (0..SENDERS).map(|i| format!("s{i}")).collect()
}

/// One sender: `s<i>` of `hive` sends `<hive>/s<i>/<n>` to `s<i>@<next>`
/// until `stop`, riding out its hive's restarts. Returns the acknowledged
/// bodies in order and the ones whose answer never came.
fn sender(
    socket: std::path::PathBuf,
    hive: &'static str,
    i: usize,
    to: String,
    stop: Arc<AtomicBool>,
    acked: Arc<AtomicUsize>,
) -> std::thread::JoinHandle<(Vec<String>, Vec<String>)> {
    std::thread::spawn(move || {
        let mut conn = open_retrying(&socket);
        let (mut confirmed, mut unknown) = (Vec::new(), Vec::new());
        let mut n = 0u64;
        while !stop.load(Ordering::SeqCst) {
            let body = format!("{hive}/s{i}/{n}");
            n += 1;
            match send(&mut conn, &to, &body) {
                Some(true) => {
                    confirmed.push(body);
                    acked.fetch_add(1, Ordering::SeqCst);
                }
                Some(false) => panic!("send {body} to {to} refused"),
                None => {
                    // The hive died mid-request: this one may or may not
                    // have been committed. Reconnect once it is back.
                    unknown.push(body);
                    conn = open_retrying(&socket);
                }
            }
            std::thread::sleep(Duration::from_millis(10));
        }
        (confirmed, unknown)
    })
}

#[test]
#[ignore = "needs nats-server: tests/run runs it"]
fn acknowledged_cross_hive_messages_arrive_exactly_once_and_in_order_through_crashes_and_a_partition()
 {
    let mut cluster = Cluster::start(&HIVES);
    let base = tempfile::tempdir().unwrap();
    let ports: Vec<u16> = cluster.nodes.iter().map(|n| n.port).collect();
    // hive-c reaches the bus only through the cutter, so the test can cut
    // it off (its relay and its consumer) for a while.
    let cutter = Cutter::new(&ports);
    let mut hives: Vec<Hive> = HIVES
        .iter()
        .map(|&h| {
            let urls = if h == "hive-c" {
                cutter.urls()
            } else {
                cluster.urls()
            };
            Hive::start(base.path(), h, urls)
        })
        .collect();
    for h in &hives {
        h.spawn_agents(&agents());
    }
    // The roster bucket: every hive sees every hive's agents.
    wait_until(Duration::from_secs(60), "the swarm roster", || {
        let rows = hives[0].swarm_roster();
        HIVES
            .iter()
            .all(|h| agents().iter().all(|a| rows.contains(&format!("{h}:{a}"))))
    });

    let stop = Arc::new(AtomicBool::new(false));
    let acked = Arc::new(AtomicUsize::new(0));
    let mut senders = Vec::new();
    for (k, &hive) in HIVES.iter().enumerate() {
        let next = HIVES[(k + 1) % HIVES.len()];
        for i in 0..SENDERS {
            senders.push(sender(
                hives[k].agent_socket(&format!("s{i}")),
                hive,
                i,
                format!("s{i}@{next}"),
                stop.clone(),
                acked.clone(),
            ));
        }
    }
    let at_least = |n: usize| {
        let acked = acked.clone();
        move || acked.load(Ordering::SeqCst) >= n
    };
    wait_until(Duration::from_secs(60), "sends to start", at_least(200));
    // 1. A hive dies by SIGKILL mid-stream and comes back.
    hives[1].kill();
    std::thread::sleep(Duration::from_millis(500));
    hives[1].restart();
    let base_count = acked.load(Ordering::SeqCst);
    wait_until(
        Duration::from_secs(60),
        "sends after the restart",
        at_least(base_count + 200),
    );
    // 2. A hive stops answering past its inbox consumer's ack wait (10 s):
    //    what it had pulled is redelivered to it after SIGCONT.
    hives[0].freeze(true);
    std::thread::sleep(Duration::from_secs(12));
    hives[0].freeze(false);
    // 3. A NATS node dies (the stream keeps a quorum of two).
    cluster.nodes[1].kill();
    std::thread::sleep(Duration::from_secs(2));
    // 4. hive-c is cut off the bus: its sends are acknowledged from its
    //    outbox and wait there; messages for it wait in the stream.
    cutter.block();
    std::thread::sleep(Duration::from_secs(5));
    cluster.restart(1);
    std::thread::sleep(Duration::from_secs(1));
    cutter.unblock();
    std::thread::sleep(Duration::from_secs(2));
    stop.store(true, Ordering::SeqCst);

    // The roster after every fault above (issue 30): a new agent of each
    // hive is listed by every hive within 30 s, with every agent before.
    let mut listed: BTreeSet<String> = HIVES
        .iter()
        .flat_map(|h| agents().into_iter().map(move |a| format!("{h}:{a}")))
        .collect();
    for (k, h) in hives.iter().enumerate() {
        h.spawn_agents(&[format!("after{k}")]);
        listed.insert(format!("{}:after{k}", HIVES[k]));
    }
    wait_until(
        Duration::from_secs(30),
        "every hive to list every agent after the faults",
        || hives.iter().all(|h| h.swarm_roster().is_superset(&listed)),
    );

    let mut confirmed: Vec<String> = Vec::new();
    let mut unknown: BTreeSet<String> = BTreeSet::new();
    for s in senders {
        let (c, u) = s.join().unwrap();
        confirmed.extend(c);
        unknown.extend(u);
    }
    let expected: BTreeSet<&String> = confirmed.iter().collect();

    // Drain every inbox until each acknowledged message has arrived.
    let mut received: BTreeMap<String, Vec<(String, String)>> = BTreeMap::new();
    let mut conns: Vec<(String, common::Conn)> = Vec::new();
    for h in &hives {
        for a in agents() {
            conns.push((
                format!("{a}@{}", h.name),
                open_retrying(&h.agent_socket(&a)),
            ));
        }
    }
    let deadline = Instant::now() + Duration::from_secs(120);
    loop {
        for (who, conn) in &mut conns {
            let got = take(conn, 500);
            received.entry(who.clone()).or_default().extend(got);
        }
        let have: usize = received
            .values()
            .flatten()
            .filter(|(_, b)| expected.contains(b))
            .count();
        if have >= expected.len() {
            break;
        }
        assert!(
            Instant::now() < deadline,
            "only {have} of {} acknowledged messages arrived",
            expected.len()
        );
        std::thread::sleep(Duration::from_millis(200));
    }
    // Whatever is still on its way (unacknowledged sends) is given a
    // moment too, so a late double would be seen.
    std::thread::sleep(Duration::from_secs(2));
    for (who, conn) in &mut conns {
        let got = take(conn, 500);
        received.entry(who.clone()).or_default().extend(got);
    }

    let mut seen: BTreeMap<&str, usize> = BTreeMap::new();
    for (to, messages) in received.iter() {
        let mut last: BTreeMap<&str, u64> = BTreeMap::new();
        for (from, body) in messages {
            *seen.entry(body).or_default() += 1;
            let mut parts = body.split('/');
            let (hive, agent, n) = (
                parts.next().unwrap(),
                parts.next().unwrap(),
                parts.next().unwrap().parse::<u64>().unwrap(),
            );
            assert_eq!(from, &format!("{agent}@{hive}"), "sender of {body} at {to}");
            if let Some(prev) = last.insert(from.as_str(), n) {
                assert!(
                    prev < n,
                    "{to} got {body} after {from}'s #{prev}: order broken"
                );
            }
        }
    }
    let doubled: Vec<_> = seen.iter().filter(|(_, n)| **n > 1).collect();
    assert!(doubled.is_empty(), "delivered twice: {doubled:?}");
    let lost: Vec<_> = expected
        .iter()
        .filter(|b| !seen.contains_key(b.as_str()))
        .collect();
    assert!(
        lost.is_empty(),
        "{} acknowledged messages lost: {:?}",
        lost.len(),
        &lost[..lost.len().min(5)]
    );
    for body in seen.keys() {
        assert!(
            expected.contains(&body.to_string()) || unknown.contains(*body),
            "{body} was never sent"
        );
    }
    eprintln!(
        "swarm ring: {} acknowledged, {} unanswered at a crash, {} delivered, each once, in order",
        expected.len(),
        unknown.len(),
        seen.len()
    );
}

#[test]
#[ignore = "needs nats-server: tests/run runs it"]
fn a_hives_credentials_cannot_read_another_hives_inbox_or_send_in_its_name() {
    let cluster = Cluster::start(&HIVES);
    let base = tempfile::tempdir().unwrap();
    let _a = Hive::start(base.path(), "hive-a", cluster.urls());
    let rt = tokio::runtime::Builder::new_current_thread()
        .enable_all()
        .build()
        .unwrap();
    rt.block_on(async {
        use async_nats::jetstream::{self, consumer::pull};
        let bob = async_nats::ConnectOptions::new()
            .user_and_password("hive-b".into(), password("hive-b"))
            .custom_inbox_prefix(format!("_INBOX.{SWARM}.hive-b"))
            .event_callback(|e| async move { eprintln!("hive-b's client: {e}") })
            .connect(cluster.urls())
            .await
            .unwrap();
        let js = jetstream::ContextBuilder::new()
            .timeout(Duration::from_secs(2))
            .build(bob);
        // hive-a makes the stream (with its own credentials) once it is up.
        let stream_name = format!("HIVE-{SWARM}");
        let deadline = Instant::now() + Duration::from_secs(60);
        let stream = loop {
            match js.get_stream(&stream_name).await {
                Ok(s) => break s,
                Err(e) => assert!(Instant::now() < deadline, "hive-a made no stream: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        };

        // Allowed: publishing as itself to hive-a, reading its own inbox.
        // (A new stream's subjects reach every node of the cluster a
        // moment after it exists: until then a publish has no responder.)
        let deadline = Instant::now() + Duration::from_secs(30);
        loop {
            let ack = js
                .publish(format!("hive.{SWARM}.inbox.hive-a.hive-b"), "{}".into())
                .await
                .unwrap()
                .await;
            match ack {
                Ok(_) => break,
                Err(e) => assert!(Instant::now() < deadline, "hive-b may send to hive-a: {e}"),
            }
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        let own = stream
            .get_or_create_consumer(
                "inbox-hive-b",
                pull::Config {
                    durable_name: Some("inbox-hive-b".into()),
                    filter_subject: format!("hive.{SWARM}.inbox.hive-b.*"),
                    ..Default::default()
                },
            )
            .await;
        assert!(
            own.is_ok(),
            "hive-b may read its own inbox: {:?}",
            own.err()
        );

        // Refused: a consumer on hive-a's subject, under any name.
        for name in ["spy", "inbox-hive-b", "inbox-hive-a"] {
            let spy = stream
                .create_consumer(pull::Config {
                    durable_name: Some(name.into()),
                    filter_subject: format!("hive.{SWARM}.inbox.hive-a.*"),
                    ..Default::default()
                })
                .await;
            assert!(
                spy.is_err(),
                "hive-b made consumer {name} on hive-a's inbox"
            );
        }
        // Refused: hive-a's own consumer, and reading stream messages raw.
        let theirs = stream.get_consumer::<pull::Config>("inbox-hive-a").await;
        assert!(theirs.is_err(), "hive-b opened hive-a's consumer");
        let raw = stream.get_raw_message(1).await;
        assert!(raw.is_err(), "hive-b read a raw stream message");
        // Refused: sending in hive-a's name.
        let forged = js
            .publish(format!("hive.{SWARM}.inbox.hive-c.hive-a"), "{}".into())
            .await;
        let forged = match forged {
            Ok(ack) => ack.await.map(drop).map_err(|e| e.to_string()),
            Err(e) => Err(e.to_string()),
        };
        assert!(forged.is_err(), "hive-b published as hive-a");
    });
}

/// Fast tier, no NATS: a hive whose bus is unreachable still starts, and a
/// cross-hive send is acknowledged from its outbox.
#[test]
fn a_hive_whose_bus_is_down_still_serves_and_queues_cross_hive_sends() {
    let base = tempfile::tempdir().unwrap();
    let dead = format!("nats://127.0.0.1:{}", swarm_support::free_port());
    let hive = Hive::start(base.path(), "hive-a", vec![dead]);
    hive.spawn_agents(&["alice".to_owned()]);
    let mut alice = open_retrying(&hive.agent_socket("alice"));
    assert_eq!(send(&mut alice, "bob@hive-b", "queued"), Some(true));
    let answer = alice.ask(r#"{"cmd":"send","to":"bob@","body":"x"}"#);
    assert!(answer.contains("not an address"), "{answer}");
    let rows = hive.swarm_roster();
    assert!(rows.contains("hive-a:alice"), "{rows:?}");
}

/// The SSE events (`event:` name, `data:` text) read from `stream` until
/// one satisfies `done`; panics after `limit`.
fn read_events_until(
    stream: &mut std::io::BufReader<std::os::unix::net::UnixStream>,
    limit: Duration,
    done: impl Fn(&str, &str) -> bool,
) {
    use std::io::BufRead;
    let deadline = Instant::now() + limit;
    let mut event = String::new();
    let mut line = String::new();
    loop {
        assert!(Instant::now() < deadline, "no such event within {limit:?}");
        line.clear();
        match stream.read_line(&mut line) {
            Ok(0) => panic!("the stream ended"),
            Ok(_) => {}
            Err(e) if e.kind() == std::io::ErrorKind::WouldBlock => continue,
            Err(e) => panic!("{e}"),
        }
        let l = line.trim_end();
        if let Some(name) = l.strip_prefix("event: ") {
            event = name.to_owned();
        } else if let Some(data) = l.strip_prefix("data: ")
            && done(&event, data)
        {
            return;
        }
    }
}

#[test]
#[ignore = "needs nats-server: tests/run runs it"]
fn the_dashboards_swarm_page_shows_other_hives_agents_and_follows_them_live() {
    use std::io::Write;
    use std::os::unix::net::UnixStream;
    let cluster = Cluster::start(&HIVES[..2]);
    let base = tempfile::tempdir().unwrap();
    let a = Hive::start(base.path(), "hive-a", cluster.urls());
    let b = Hive::start(base.path(), "hive-b", cluster.urls());
    a.spawn_agents(&["alice".to_owned()]);
    b.spawn_agents(&["bob".to_owned()]);
    wait_until(Duration::from_secs(60), "hive-b hears alice", || {
        b.swarm_roster().contains("hive-a:alice")
    });

    // The page on hive-b: both hives' agents, only its own linked.
    let html = b.web_page("/swarm");
    assert!(html.starts_with("HTTP/1.1 200"), "{html}");
    assert!(html.contains(r#"id="row-alice@hive-a""#), "{html}");
    assert!(html.contains(r#"id="row-bob@hive-b""#), "{html}");
    assert!(html.contains(r#"<a href="/agent/bob">"#), "{html}");
    assert!(!html.contains(r#"<a href="/agent/alice">"#), "{html}");

    // Its stream: hive-a's new agent arrives, then leaves when destroyed.
    let mut events = UnixStream::connect(b.web_socket()).unwrap();
    events
        .write_all(b"GET /events/swarm HTTP/1.1\r\nHost: dash\r\n\r\n")
        .unwrap();
    events
        .set_read_timeout(Some(Duration::from_millis(500)))
        .unwrap();
    let mut events = std::io::BufReader::new(events);
    read_events_until(&mut events, Duration::from_secs(10), |e, _| e == "ready");
    a.spawn_agents(&["carol".to_owned()]);
    read_events_until(&mut events, Duration::from_secs(10), |e, d| {
        e == "row" && d.contains(r#"id="row-carol@hive-a""#)
    });
    let answer = a.request(r#"{"cmd":"destroy","name":"carol"}"#);
    assert_eq!(answer, r#"{"version":1,"ok":true}"#);
    read_events_until(&mut events, Duration::from_secs(10), |e, d| {
        e == "removed" && d == "carol@hive-a"
    });
    // hive-b's own changes come on the same stream.
    let answer = b.request(r#"{"cmd":"stop","scope":{"agent_names":["bob"]}}"#);
    assert!(answer.contains(r#""ok":true"#), "{answer}");
    read_events_until(&mut events, Duration::from_secs(10), |e, d| {
        e == "row" && d.contains(r#"id="row-bob@hive-b""#) && d.contains("stopped")
    });
}

#[test]
#[ignore = "needs nats-server: tests/run runs it"]
fn hivectl_send_reaches_an_agent_of_another_hive_and_the_reply_reaches_the_operator() {
    let cluster = Cluster::start(&HIVES[..2]);
    let base = tempfile::tempdir().unwrap();
    let a = Hive::start(base.path(), "hive-a", cluster.urls());
    let b = Hive::start(base.path(), "hive-b", cluster.urls());
    b.spawn_agents(&["bob".to_owned()]);
    let out = std::process::Command::new(env!("CARGO_BIN_EXE_hivectl"))
        .env("HIVE_SOCKET", a.host_socket())
        .args(["send", "bob@hive-b", "status, please"])
        .output()
        .unwrap();
    assert!(out.status.success(), "{out:?}");
    let mut bob = open_retrying(&b.agent_socket("bob"));
    let mut got = Vec::new();
    wait_until(
        Duration::from_secs(30),
        "bob gets the operator's message",
        || {
            got.extend(take(&mut bob, 10));
            !got.is_empty()
        },
    );
    assert_eq!(
        got,
        [("operator@hive-a".to_owned(), "status, please".to_owned())]
    );
    assert_eq!(send(&mut bob, "operator@hive-a", "all green"), Some(true));
    wait_until(
        Duration::from_secs(30),
        "the reply in hive-a's operator inbox",
        || {
            a.request(r#"{"cmd":"inbox"}"#)
                .contains(r#""body":"all green""#)
        },
    );
    let inbox = a.request(r#"{"cmd":"inbox"}"#);
    assert!(inbox.contains(r#""from":"bob@hive-b""#), "{inbox}");
}

/// Issue 30: a subject the bus refuses (here the roster watch's consumer,
/// its permission taken away) used to be retried by the client library
/// without a word; now the refusal is in the daemon's log and in
/// `swarm_status` (`hivectl status --swarm` prints it under the table).
#[test]
#[ignore = "needs nats-server: tests/run runs it"]
fn a_permission_the_bus_refuses_is_shown_in_the_swarm_status_not_retried_in_silence() {
    let cluster = Cluster::start_with(&["hive-a"], |_, user| {
        user.split(", ")
            .filter(|subject| !subject.contains("CONSUMER.CREATE.KV_hive-"))
            .collect::<Vec<_>>()
            .join(", ")
    });
    let base = tempfile::tempdir().unwrap();
    let a = Hive::start(base.path(), "hive-a", cluster.urls());
    let mut seen = String::new();
    wait_until(
        Duration::from_secs(30),
        "the refusal in swarm_status",
        || {
            seen = a.request(r#"{"cmd":"swarm_status"}"#);
            seen.contains("Permissions Violation")
        },
    );
    let answer: serde_json::Value = serde_json::from_str(&seen).unwrap();
    let error = answer["bus_error"]["error"].as_str().unwrap();
    assert!(error.contains("CONSUMER.CREATE.KV_hive-"), "{seen}");
    assert!(answer["bus_error"]["at"].as_i64().unwrap() > 0, "{seen}");
    // The swarm page says it too.
    let html = a.web_page("/swarm");
    assert!(html.contains(r#"role="alert""#), "{html}");
    assert!(html.contains("Permissions Violation"), "{html}");
}
