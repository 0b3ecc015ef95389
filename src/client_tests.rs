//! Client tests against real Unix sockets served by in-test threads. Every
//! test runs under [`within`], so a hang fails instead of wedging the suite.

use std::io::{BufRead, BufReader};
use std::os::unix::net::UnixListener;
use std::sync::mpsc::{self, Receiver, Sender};
use std::thread;

use super::*;

const LIMIT: Duration = Duration::from_secs(10);

/// Run `f` on a thread and fail the test if it takes longer than `limit`.
fn within<T: Send + 'static>(limit: Duration, f: impl FnOnce() -> T + Send + 'static) -> T {
    let (tx, rx) = mpsc::channel();
    thread::spawn(move || {
        let _ = tx.send(f());
    });
    match rx.recv_timeout(limit) {
        Ok(value) => value,
        Err(mpsc::RecvTimeoutError::Timeout) => panic!("the test took longer than {limit:?}"),
        Err(mpsc::RecvTimeoutError::Disconnected) => panic!("the test body panicked"),
    }
}

/// A one-connection daemon stand-in: reads the request line (sent on the
/// returned receiver), writes each of `writes` in turn, then keeps the
/// connection open until the returned sender is dropped.
struct Peer {
    _dir: tempfile::TempDir,
    path: PathBuf,
    requests: Receiver<String>,
    _hold: Sender<()>,
}

fn peer(writes: Vec<Vec<u8>>) -> Peer {
    peer_with(writes, None)
}

fn peer_with(writes: Vec<Vec<u8>>, pause_before_last: Option<Duration>) -> Peer {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let (req_tx, requests) = mpsc::channel();
    let (hold, release) = mpsc::channel::<()>();
    thread::spawn(move || {
        let (stream, _) = listener.accept().unwrap();
        let mut reader = BufReader::new(stream.try_clone().unwrap());
        let mut line = String::new();
        reader.read_line(&mut line).unwrap();
        let _ = req_tx.send(line);
        let mut stream = stream;
        let last = writes.len().saturating_sub(1);
        for (i, bytes) in writes.into_iter().enumerate() {
            if i == last
                && let Some(pause) = pause_before_last
            {
                // The behaviour under test is "time passes after the ack",
                // so this wait is the point, not a race guard.
                thread::sleep(pause);
            }
            stream.write_all(&bytes).unwrap();
        }
        let _ = release.recv();
    });
    Peer {
        _dir: dir,
        path,
        requests,
        _hold: hold,
    }
}

/// A peer that answers with `reply` and closes the connection.
fn answering(reply: &str) -> (tempfile::TempDir, PathBuf, Receiver<String>) {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("host.sock");
    let listener = UnixListener::bind(&path).unwrap();
    let (tx, rx) = mpsc::channel();
    let reply = reply.to_owned();
    thread::spawn(move || {
        let (mut stream, _) = listener.accept().unwrap();
        let mut line = String::new();
        BufReader::new(stream.try_clone().unwrap())
            .read_line(&mut line)
            .unwrap();
        let _ = tx.send(line);
        stream.write_all(reply.as_bytes()).unwrap();
    });
    (dir, path, rx)
}

#[test]
fn a_call_sends_one_line_and_returns_the_answer_with_its_exact_line() {
    within(LIMIT, || {
        let raw = r#"{"version":1,"ok":true,"agents":["alice"],"from_the_future":{"x":1}}"#;
        let (_dir, path, requests) = answering(&format!("{raw}\n"));
        let reply = Client::new(&path).call(&HostRequest::List).unwrap();
        assert_eq!(requests.recv().unwrap(), "{\"cmd\":\"list\"}\n");
        assert_eq!(reply.line, raw);
        assert_eq!(reply.response.agents.as_ref().unwrap()[0].as_str(), "alice");
        assert!(!reply.is_newer_than_us());
    });
}

#[test]
fn a_refusal_is_a_reply_not_a_client_error() {
    within(LIMIT, || {
        let (_dir, path, _rx) = answering("{\"version\":1,\"ok\":false,\"error\":\"no\"}\n");
        let reply = Client::new(&path).call(&HostRequest::List).unwrap();
        assert!(!reply.response.ok);
        assert_eq!(reply.response.error.as_deref(), Some("no"));
    });
}

#[test]
fn a_daemon_speaking_a_newer_version_is_flagged() {
    within(LIMIT, || {
        let (_dir, path, _rx) = answering("{\"version\":2,\"ok\":true}\n");
        let reply = Client::new(&path).call(&HostRequest::Urls).unwrap();
        assert!(reply.is_newer_than_us());
    });
}

#[test]
fn an_answer_split_across_writes_is_reassembled() {
    within(LIMIT, || {
        let p = peer(vec![
            b"{\"version\":1,".to_vec(),
            b"\"ok\":true}\n".to_vec(),
        ]);
        let reply = Client::new(&p.path).call(&HostRequest::RestartAll).unwrap();
        assert_eq!(reply.line, "{\"version\":1,\"ok\":true}");
        assert_eq!(p.requests.recv().unwrap(), "{\"cmd\":\"restart_all\"}\n");
    });
}

#[test]
fn a_missing_socket_says_the_daemon_is_not_running_and_how_to_start_it() {
    within(LIMIT, || {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.sock");
        let err = Client::new(&path).call(&HostRequest::List).unwrap_err();
        assert!(matches!(err, ClientError::NotRunning { .. }), "{err:?}");
        let msg = err.to_string();
        assert!(msg.contains(&path.display().to_string()), "{msg}");
        assert!(msg.contains("systemctl start hive-c0re.socket"), "{msg}");
    });
}

#[test]
fn a_socket_file_nobody_listens_on_is_reported_as_stale() {
    within(LIMIT, || {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.sock");
        drop(UnixListener::bind(&path).unwrap());
        let err = Client::new(&path).call(&HostRequest::List).unwrap_err();
        assert!(matches!(err, ClientError::Refused { .. }), "{err:?}");
        assert!(err.to_string().contains("stale socket"), "{err}");
    });
}

#[test]
fn a_silent_daemon_runs_into_the_budget() {
    within(LIMIT, || {
        let p = peer(vec![]);
        let budget = Duration::from_millis(200);
        let started = Instant::now();
        let err = Client::new(&p.path)
            .with_budget(budget)
            .call(&HostRequest::List)
            .unwrap_err();
        assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() >= budget);
        assert!(err.to_string().contains("within 200 ms"), "{err}");
    });
}

#[test]
fn a_daemon_that_hangs_up_without_answering_is_reported_as_closed() {
    within(LIMIT, || {
        let (_dir, path, _rx) = answering("");
        let err = Client::new(&path).call(&HostRequest::List).unwrap_err();
        assert!(matches!(err, ClientError::Closed { .. }), "{err:?}");
    });
}

#[test]
fn half_a_line_then_a_hangup_is_reported_as_closed() {
    within(LIMIT, || {
        let (_dir, path, _rx) = answering("{\"version\":1,");
        let err = Client::new(&path).call(&HostRequest::List).unwrap_err();
        assert!(matches!(err, ClientError::Closed { .. }), "{err:?}");
    });
}

#[test]
fn a_line_that_is_not_a_response_is_a_protocol_error_quoting_it() {
    within(LIMIT, || {
        let (_dir, path, _rx) = answering("SSH-2.0-OpenSSH\n");
        let err = Client::new(&path).call(&HostRequest::List).unwrap_err();
        assert!(matches!(err, ClientError::Protocol { .. }), "{err:?}");
        assert!(err.to_string().contains("SSH-2.0-OpenSSH"), "{err}");
    });
}

#[test]
fn a_line_that_is_not_utf8_is_refused() {
    within(LIMIT, || {
        let p = peer(vec![
            b"{\"version\":1,\"ok\":true,\"x\":\"\xff\"}\n".to_vec(),
        ]);
        let err = Client::new(&p.path).call(&HostRequest::List).unwrap_err();
        assert!(matches!(err, ClientError::BadLine { .. }), "{err:?}");
    });
}

#[test]
fn a_subscription_yields_the_ack_then_each_row_even_when_they_arrive_together() {
    within(LIMIT, || {
        let ack = "{\"version\":1,\"ok\":true}\n";
        let row = |n: &str| {
            format!(
                "{{\"version\":1,\"ok\":true,\"agent_statuses\":[{{\"name\":\"{n}\",\"running\":true,\
                 \"failed\":false,\"needs_update\":false,\"needs_login\":false,\
                 \"pending_reminders\":0,\"paused\":false}}]}}\n"
            )
        };
        let (_dir, path, requests) = answering(&format!("{ack}{}{}", row("a"), row("b")));
        let lines: Vec<Reply> = Client::new(&path)
            .subscribe()
            .unwrap()
            .collect::<Result<_, _>>()
            .unwrap();
        assert_eq!(
            requests.recv().unwrap(),
            "{\"cmd\":\"subscribe_agent_status\"}\n"
        );
        assert_eq!(lines.len(), 3);
        assert_eq!(lines[0].line, ack.trim_end());
        let names: Vec<String> = lines[1..]
            .iter()
            .map(|r| {
                r.response.agent_statuses.as_ref().unwrap()[0]
                    .name
                    .to_string()
            })
            .collect();
        assert_eq!(names, ["a", "b"]);
    });
}

#[test]
fn after_the_ack_a_subscription_waits_longer_than_the_budget() {
    within(LIMIT, || {
        let budget = Duration::from_millis(100);
        let p = peer_with(
            vec![
                b"{\"version\":1,\"ok\":true}\n".to_vec(),
                b"{\"version\":1,\"ok\":true,\"agent_statuses\":[]}\n".to_vec(),
            ],
            Some(budget * 3),
        );
        let mut stream = Client::new(&p.path)
            .with_budget(budget)
            .subscribe()
            .unwrap();
        assert!(
            stream
                .next()
                .unwrap()
                .unwrap()
                .response
                .agent_statuses
                .is_none()
        );
        let later = stream.next().unwrap().unwrap();
        assert_eq!(later.response.agent_statuses, Some(vec![]));
    });
}

#[test]
fn a_subscription_whose_ack_never_comes_runs_into_the_budget() {
    within(LIMIT, || {
        let p = peer(vec![]);
        let err = Client::new(&p.path)
            .with_budget(Duration::from_millis(100))
            .subscribe()
            .unwrap_err();
        assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
    });
}

#[test]
fn a_daemon_whose_backlog_is_full_runs_into_the_budget_while_connecting() {
    // A blocking connect to a Unix socket with a full accept queue waits
    // for room; without SO_SNDTIMEO it would ignore the budget entirely.
    within(LIMIT, || {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("host.sock");
        let fd = socket::socket(
            AddressFamily::Unix,
            SockType::Stream,
            SockFlag::SOCK_CLOEXEC,
            None,
        )
        .unwrap();
        socket::bind(fd.as_raw_fd(), &UnixAddr::new(path.as_path()).unwrap()).unwrap();
        socket::listen(&fd, socket::Backlog::new(0).unwrap()).unwrap();
        // Linux admits backlog + 1 pending connections; fill the queue.
        let _queued: Vec<UnixStream> = (0..2)
            .map_while(|_| {
                let s = socket::socket(
                    AddressFamily::Unix,
                    SockType::Stream,
                    SockFlag::SOCK_NONBLOCK,
                    None,
                )
                .unwrap();
                let addr = UnixAddr::new(path.as_path()).unwrap();
                socket::connect(s.as_raw_fd(), &addr)
                    .ok()
                    .map(|()| UnixStream::from(s))
            })
            .collect();
        let budget = Duration::from_millis(200);
        let started = Instant::now();
        let err = Client::new(&path)
            .with_budget(budget)
            .call(&HostRequest::List)
            .unwrap_err();
        assert!(matches!(err, ClientError::Timeout { .. }), "{err:?}");
        assert!(started.elapsed() >= budget / 2, "{:?}", started.elapsed());
    });
}
