//! The agent-socket connection loop over real socket pairs, against the
//! fake driver and an in-memory store.

use crate::testing::{config_in, hive_at, id};
use std::time::Duration;

use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;
use tokio_util::sync::CancellationToken;

use super::*;
use crate::hive::access;
use crate::wire::agent::tests::minimal_json;

/// Every socket test ends within this.
const LIMIT: Duration = Duration::from_secs(10);

async fn hive() -> (Hive, tempfile::TempDir) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _) = hive_at(config_in(dir.path()), 1000);
    hive.spawn(&id("alice")).await.unwrap();
    hive.spawn(&id("bob")).await.unwrap();
    (hive, dir)
}

/// A client connected to a connection served as `caller`.
fn connect(hive: &Hive, caller: Caller) -> (BufReader<UnixStream>, CancellationToken) {
    let (client, server) = UnixStream::pair().unwrap();
    let stop = CancellationToken::new();
    tokio::spawn(serve(hive.clone(), caller, server, stop.clone()));
    (BufReader::new(client), stop)
}

async fn read_answer(client: &mut BufReader<UnixStream>) -> String {
    let mut line = String::new();
    tokio::time::timeout(LIMIT, client.read_line(&mut line))
        .await
        .expect("an answer within the limit")
        .unwrap();
    line.trim_end().to_owned()
}

async fn ask(client: &mut BufReader<UnixStream>, line: &str) -> String {
    client
        .get_mut()
        .write_all(format!("{line}\n").as_bytes())
        .await
        .unwrap();
    read_answer(client).await
}

#[tokio::test]
async fn requests_written_in_one_go_are_answered_one_by_one_in_order() {
    let (hive, _dir) = hive().await;
    let (mut c, _stop) = connect(&hive, Caller::Agent(id("alice")));
    // Three requests in one write, a bad one in the middle: each gets its
    // own answer, in order, and the connection survives the bad one.
    c.get_mut()
        .write_all(
            b"{\"cmd\":\"send\",\"to\":\"bob\",\"body\":\"one\"}\n\
              {\"cmd\":\"nope\"}\n\
              {\"cmd\":\"status\"}\n",
        )
        .await
        .unwrap();
    assert_eq!(read_answer(&mut c).await, r#"{"kind":"ok","delivered":1}"#);
    let second = read_answer(&mut c).await;
    assert!(
        second.starts_with(r#"{"kind":"err","message":"unknown cmd \"nope\""#),
        "{second}"
    );
    assert_eq!(read_answer(&mut c).await, r#"{"kind":"status","unread":0}"#);
    // A line split across writes is one request.
    c.get_mut().write_all(b"{\"cmd\":\"sta").await.unwrap();
    c.get_mut().write_all(b"tus\"}\n").await.unwrap();
    assert_eq!(read_answer(&mut c).await, r#"{"kind":"status","unread":0}"#);
}

#[tokio::test]
async fn every_kind_of_bad_input_gets_an_err_and_the_connection_carries_on() {
    let (hive, _dir) = hive().await;
    let (mut c, _stop) = connect(&hive, Caller::Agent(id("alice")));
    let cases: &[(&[u8], &str)] = &[
        (b"\xff\xfe\n", "request is not valid UTF-8"),
        (b"not json\n", "request is not valid JSON"),
        (b"[1]\n", "request is not a JSON object"),
        (b"{}\n", r#"request has no \"cmd\""#),
        (
            b"{\"cmd\":\"recv\",\"max\":\"x\"}\n",
            "invalid recv request",
        ),
        (
            b"{\"cmd\":\"send\",\"to\":\"bob\"}\n",
            "missing field `body`",
        ),
    ];
    for (input, expected) in cases {
        c.get_mut().write_all(input).await.unwrap();
        let answer = read_answer(&mut c).await;
        assert!(
            answer.starts_with(r#"{"kind":"err","message":""#) && answer.contains(expected),
            "{input:?} -> {answer}"
        );
        assert_eq!(
            ask(&mut c, r#"{"cmd":"status"}"#).await,
            r#"{"kind":"status","unread":0}"#
        );
    }
}

#[tokio::test]
async fn an_over_long_line_gets_an_err_then_the_connection_closes() {
    let (hive, _dir) = hive().await;
    let (c, _stop) = connect(&hive, Caller::Agent(id("alice")));
    let (read, mut write) = c.into_inner().into_split();
    // Keep writing past the cap without a newline; the answer must come
    // without the line ever ending.
    let writer = tokio::spawn(async move {
        let chunk = vec![b'x'; 64 * 1024];
        for _ in 0..64 {
            if write.write_all(&chunk).await.is_err() {
                return;
            }
        }
    });
    let mut reader = BufReader::new(read);
    let mut answer = String::new();
    tokio::time::timeout(LIMIT, reader.read_line(&mut answer))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(
        answer,
        "{\"kind\":\"err\",\"message\":\"request line is longer than 1048576 bytes\",\"code\":\"bad_request\"}\n"
    );
    // Then the connection is closed: end of file, or a reset because the
    // rest of the line was never read.
    let mut rest = Vec::new();
    let closed = tokio::time::timeout(LIMIT, reader.read_to_end(&mut rest))
        .await
        .unwrap();
    assert!(closed.is_err() || rest.is_empty(), "{closed:?}");
    writer.abort();
}

#[tokio::test]
async fn every_privileged_variant_is_refused_on_an_agent_socket_and_served_on_the_manager_socket() {
    let (hive, _dir) = hive().await;
    let (mut agent, _s1) = connect(&hive, Caller::Agent(id("alice")));
    let (mut manager, _s2) = connect(&hive, Caller::Manager(id("ruth")));
    // Table-driven from the list of every cmd and the access policy's table
    // (`hive::access`): a new privileged variant is covered here without
    // editing this test.
    let privileged: Vec<(&str, String)> = Request::COMMANDS
        .iter()
        .filter(|cmd| access::rule(access::Kind::Agent, cmd) == Some(access::Rule::Privileged))
        .map(|cmd| (*cmd, minimal_json(cmd)))
        .collect();
    assert!(
        privileged.len() >= 13,
        "only {} privileged variants",
        privileged.len()
    );
    for (cmd, line) in &privileged {
        assert_eq!(
            ask(&mut agent, line).await,
            format!(
                r#"{{"kind":"err","message":"privileged variant {cmd} is refused on an agent socket","code":"denied"}}"#
            ),
        );
    }
    // Nothing a refused request asked for was done.
    assert!(hive.approvals().await.unwrap().is_empty());
    assert!(hive.row(&id("bob")).await.unwrap().unwrap().running);
    for (cmd, line) in &privileged {
        let on_manager = ask(&mut manager, line).await;
        assert!(
            !on_manager.contains("is refused on an agent socket"),
            "{cmd}: {on_manager}"
        );
    }
}

#[tokio::test]
async fn list_descendants_needs_the_lifecycle_group_on_an_agent_socket() {
    let (hive, _dir) = hive().await;
    let (mut agent, _s1) = connect(&hive, Caller::Agent(id("alice")));
    let answer = ask(&mut agent, r#"{"cmd":"list_descendants"}"#).await;
    assert!(
        answer.contains("needs the `lifecycle` tool group") && answer.contains(r#"\"alice\""#),
        "{answer}"
    );
    let (mut manager, _s2) = connect(&hive, Caller::Manager(id("ruth")));
    assert_eq!(
        ask(&mut manager, r#"{"cmd":"list_descendants"}"#).await,
        r#"{"kind":"containers","containers":[{"name":"alice","running":true},{"name":"bob","running":true}]}"#
    );
}

#[tokio::test]
async fn the_host_journal_needs_the_capability_on_an_agent_socket_until_it_is_granted() {
    let (hive, _dir) = hive().await;
    let (mut agent, _s) = connect(&hive, Caller::Agent(id("alice")));
    let refused = ask(&mut agent, &minimal_json("get_host_journal")).await;
    assert!(refused.contains("read_host_journal"), "{refused}");
    hive.set_grant(
        &id("alice"),
        crate::service::grants::Grant::Capability(crate::wire::agenda::Capability::ReadHostJournal),
        true,
    )
    .await
    .unwrap();
    // Granted: the request now reaches journalctl (whatever this machine's
    // journal holds), so the answer is no longer the capability refusal.
    let served = ask(&mut agent, &minimal_json("get_host_journal")).await;
    assert!(!served.contains("read_host_journal"), "{served}");
}

#[tokio::test]
async fn get_logs_is_the_managers_and_names_an_unknown_agent() {
    let (hive, _dir) = hive().await;
    let (mut agent, _s1) = connect(&hive, Caller::Agent(id("alice")));
    assert_eq!(
        ask(&mut agent, r#"{"cmd":"get_logs","agent":"bob"}"#).await,
        r#"{"kind":"err","message":"privileged variant get_logs is refused on an agent socket","code":"denied"}"#
    );
    let (mut manager, _s2) = connect(&hive, Caller::Manager(id("ruth")));
    assert_eq!(
        ask(&mut manager, r#"{"cmd":"get_logs","agent":"nobody"}"#).await,
        r#"{"kind":"err","message":"agent \"nobody\" is not managed by this hive","code":"unknown_agent"}"#
    );
}

#[tokio::test]
async fn the_manager_withdraws_an_approval_and_an_agent_cannot() {
    let (hive, _dir) = hive().await;
    let (mut manager, _s1) = connect(&hive, Caller::Manager(id("ruth")));
    let (mut agent, _s2) = connect(&hive, Caller::Agent(id("alice")));
    assert_eq!(
        ask(
            &mut manager,
            r#"{"cmd":"request_init_config","name":"carol"}"#
        )
        .await,
        r#"{"kind":"ok","approval":1}"#
    );
    let cancel = r#"{"cmd":"cancel_loose_end","kind":"approval","id":1}"#;
    assert!(
        ask(&mut agent, cancel)
            .await
            .contains("for the manager only")
    );
    assert_eq!(ask(&mut manager, cancel).await, r#"{"kind":"ok"}"#);
    let rows = hive.approvals().await.unwrap();
    assert_eq!(rows[0].status, crate::wire::host::ApprovalStatus::Cancelled);
}

#[tokio::test]
async fn manager_requests_check_their_arguments_before_queueing() {
    let (hive, _dir) = hive().await;
    let (mut m, _s) = connect(&hive, Caller::Manager(id("ruth")));
    for (line, expected) in [
        (
            r#"{"cmd":"request_apply_commit","agent":"alice","commit_ref":"HEAD"}"#,
            "7-40 hex digits",
        ),
        (
            r#"{"cmd":"request_apply_commit","agent":"zed","commit_ref":"0123456"}"#,
            r#"agent \"zed\" is not managed"#,
        ),
        (
            r#"{"cmd":"request_init_config","name":"alice"}"#,
            r#"agent \"alice\" already exists"#,
        ),
        (
            r#"{"cmd":"request_update_meta_inputs","inputs":["--override-input"]}"#,
            "is not a flake input name",
        ),
        (
            r#"{"cmd":"kill","name":"ruth"}"#,
            "cannot be killed from its own socket",
        ),
    ] {
        let answer = ask(&mut m, line).await;
        assert!(answer.contains(expected), "{line} -> {answer}");
    }
    assert!(hive.approvals().await.unwrap().is_empty());
    // Well-formed, but this hive runs the nspawn profile: refused, no row.
    let answer = ask(
        &mut m,
        r#"{"cmd":"request_update_meta_inputs","inputs":["nixpkgs","hive"]}"#,
    )
    .await;
    assert!(answer.contains("nspawn profile"), "{answer}");
    assert!(answer.contains("bad_request"), "{answer}");
    assert_eq!(
        ask(&mut m, r#"{"cmd":"request_init_config","name":"carol"}"#).await,
        r#"{"kind":"ok","approval":1}"#
    );
    // The same request again: its pending row, nothing new queued.
    assert_eq!(
        ask(&mut m, r#"{"cmd":"request_init_config","name":"carol"}"#).await,
        r#"{"kind":"ok","approval":1,"already_pending":true}"#
    );
    let rows = hive.approvals().await.unwrap();
    assert_eq!(rows.len(), 1);
    assert_eq!(rows[0].agent, id("carol"));
}

#[tokio::test]
async fn the_manager_stops_and_starts_a_sub_agent() {
    let (hive, _dir) = hive().await;
    let (mut m, _s) = connect(&hive, Caller::Manager(id("ruth")));
    assert_eq!(
        ask(&mut m, r#"{"cmd":"kill","name":"bob"}"#).await,
        r#"{"kind":"ok"}"#
    );
    assert!(!hive.row(&id("bob")).await.unwrap().unwrap().running);
    assert_eq!(
        ask(&mut m, r#"{"cmd":"start","name":"bob"}"#).await,
        r#"{"kind":"ok"}"#
    );
    assert!(hive.row(&id("bob")).await.unwrap().unwrap().running);
    for verb in ["restart", "update"] {
        assert_eq!(
            ask(&mut m, &format!(r#"{{"cmd":"{verb}","name":"bob"}}"#)).await,
            r#"{"kind":"ok"}"#
        );
    }
    assert!(
        ask(&mut m, r#"{"cmd":"start","name":"zed"}"#)
            .await
            .contains(r#"agent \"zed\" is not managed"#)
    );
}

#[tokio::test]
async fn a_long_poll_ends_without_popping_when_its_client_hangs_up() {
    let (hive, _dir) = hive().await;
    let (mut client, server) = UnixStream::pair().unwrap();
    let task = tokio::spawn(serve(
        hive.clone(),
        Caller::Agent(id("alice")),
        server,
        CancellationToken::new(),
    ));
    client
        .write_all(b"{\"cmd\":\"recv\",\"wait_seconds\":60}\n")
        .await
        .unwrap();
    drop(client);
    // The connection ends long before the 60 s poll would: the hang-up
    // was noticed while waiting.
    tokio::time::timeout(LIMIT, task).await.unwrap().unwrap();
    // Nothing was popped for the vanished client.
    hive.messaging()
        .send(&id("bob"), "alice", "hello".into(), None)
        .await
        .unwrap();
    let got = hive
        .messaging()
        .recv(&id("alice"), None, None, std::future::pending())
        .await
        .unwrap();
    assert_eq!(got.len(), 1);
    assert!(!got[0].redelivered);
}

#[tokio::test]
async fn a_client_that_shuts_only_its_writing_side_still_gets_its_long_poll_answer() {
    let (hive, _dir) = hive().await;
    let (c, _stop) = connect(&hive, Caller::Agent(id("alice")));
    let (read, mut write) = c.into_inner().into_split();
    write
        .write_all(b"{\"cmd\":\"recv\",\"wait_seconds\":30}\n")
        .await
        .unwrap();
    write.shutdown().await.unwrap();
    let mut reader = BufReader::new(read);
    let answer = tokio::spawn(async move {
        let mut line = String::new();
        reader.read_line(&mut line).await.unwrap();
        line
    });
    // Sent until the poller takes one: the poll may not be waiting yet.
    let line = tokio::time::timeout(LIMIT, async {
        loop {
            hive.messaging()
                .send(&id("bob"), "alice", "ping".into(), None)
                .await
                .unwrap();
            if answer.is_finished() {
                return answer.await.unwrap();
            }
            tokio::time::sleep(Duration::from_millis(20)).await;
        }
    })
    .await
    .unwrap();
    assert!(line.contains(r#""from":"bob","body":"ping""#), "{line}");
}

#[tokio::test]
async fn destroying_an_agent_ends_its_open_connections() {
    let (hive, _dir) = hive().await;
    let (mut c, stop) = connect(&hive, Caller::Agent(id("alice")));
    assert_eq!(
        ask(&mut c, r#"{"cmd":"status"}"#).await,
        r#"{"kind":"status","unread":0}"#
    );
    stop.cancel();
    let mut rest = String::new();
    tokio::time::timeout(LIMIT, c.read_to_string(&mut rest))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(rest, "");
}

#[tokio::test]
async fn messages_popped_for_a_client_that_cannot_read_them_go_back_marked_redelivered() {
    let (hive, _dir) = hive().await;
    hive.messaging()
        .send(&id("bob"), "alice", "important".into(), None)
        .await
        .unwrap();
    let (mut client, server) = UnixStream::pair().unwrap();
    // Written and gone before the (current-thread) server task first runs:
    // it pops, then fails to write the answer.
    client.write_all(b"{\"cmd\":\"recv\"}\n").await.unwrap();
    drop(client);
    let task = tokio::spawn(serve(
        hive.clone(),
        Caller::Agent(id("alice")),
        server,
        CancellationToken::new(),
    ));
    tokio::time::timeout(LIMIT, task).await.unwrap().unwrap();
    let got = hive
        .messaging()
        .recv(&id("alice"), None, None, std::future::pending())
        .await
        .unwrap();
    assert_eq!(got.len(), 1);
    assert_eq!(got[0].body, "important");
    assert!(got[0].redelivered, "it may have been seen: flagged");
}
