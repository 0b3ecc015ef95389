//! Budgets held at the request: the board the daemon's control connection
//! writes, and the model gateway's requests waiting on it, against the
//! in-process TLS stand-in ([`super::super::standin`]).

use std::sync::Arc;
use std::time::Duration;

use http_body_util::BodyExt;
use hyper::StatusCode;
use tokio::io::AsyncWriteExt;
use tokio::net::UnixStream;

use super::super::audit::Audit;
use super::super::gateway::HEAD_TIMEOUT;
use super::super::service::{ModelGateway, serve_dialled};
use super::super::standin::*;
use super::super::{Outcome, gateway};
use super::*;
use crate::testing::id;
use crate::wire::model_log::Tokens;

/// Alice's budget, held requests waiting `wait_ms`.
fn hold(wait_ms: u64) -> GatewayHold {
    GatewayHold {
        budget: "1usd/day on alice and under".into(),
        spent: "$1.02 of $1.00 today".into(),
        raise: "hivectl budget set alice AMOUNT".into(),
        wait_ms,
    }
}

/// The line holding `agents`, each with [`hold`] of `wait_ms`.
fn line(agents: &[&str], wait_ms: u64) -> String {
    let holds = agents.iter().map(|a| (id(a), hold(wait_ms))).collect();
    format!("{}\n", serde_json::to_string(&HoldsLine { holds }).unwrap())
}

/// Write the daemon's line holding `agents` on its control connection.
async fn say(daemon: &mut UnixStream, agents: &[&str], wait_ms: u64) {
    daemon
        .write_all(line(agents, wait_ms).as_bytes())
        .await
        .unwrap();
}

/// A control connection to the service sharing `board`, as the daemon
/// opens it (its first line written by the test); the service's outcome.
fn control(board: &Arc<Board>) -> (UnixStream, tokio::task::JoinHandle<Outcome>) {
    let (daemon, service) = UnixStream::pair().unwrap();
    let board = Arc::clone(board);
    let gateway: ModelGateway = Err("not needed for the control connection".into());
    let task =
        tokio::spawn(
            async move { serve_dialled(service, &Audit::default(), &gateway, &board).await },
        );
    (daemon, task)
}

/// Wait until `board` says `agent` is held (or not), as a request would
/// read it: a view whose dial line says the opposite, so that only the
/// daemon's word can settle it.
async fn settled(board: &Board, agent: &str, held: bool) {
    let mut view = board.view((!held).then(|| hold(1)));
    for _ in 0..200 {
        if view.now(&id(agent)).is_some() == held {
            return;
        }
        tokio::time::sleep(Duration::from_millis(5)).await;
    }
    panic!("{agent} never became held={held}");
}

/// A gateway to a fresh stand-in, and the stand-in.
async fn gateway_and_standin() -> (Arc<gateway::Gateway>, Arc<Standin>, tempfile::TempDir) {
    let (port, standin) = standin().await;
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    (gw, standin, creds)
}

fn message() -> hyper::Request<http_body_util::Full<bytes::Bytes>> {
    let body = serde_json::json!({"model": MODEL, "max_tokens": 5, "messages": []});
    post("/v1/messages", ("x-api-key", SENTINEL), body)
}

#[tokio::test]
async fn a_held_wait_ends_when_the_daemon_lets_the_agent_go_and_times_out_with_the_hold_if_not() {
    let board = Board::default();
    // Nothing said, nothing carried at dial: not held.
    assert_eq!(board.view(None).wait(&id("alice")).await, Ok(()));
    // Held at dial, the daemon silent: held for the hold's wait, then the hold.
    let started = tokio::time::Instant::now();
    let got = board.view(Some(hold(150))).wait(&id("alice")).await;
    assert_eq!(got, Err(hold(150)));
    assert!(started.elapsed() >= Duration::from_millis(150));
    // Held by the board, released by the next line well within its wait.
    let board = Arc::new(board);
    let (mut daemon, _task) = control(&board);
    say(&mut daemon, &["alice"], 60_000).await;
    settled(&board, "alice", true).await;
    let mut view = board.view(None);
    let waiting = tokio::spawn(async move { view.wait(&id("alice")).await });
    tokio::time::sleep(Duration::from_millis(100)).await;
    assert!(!waiting.is_finished(), "held while the line says so");
    let released = tokio::time::Instant::now();
    say(&mut daemon, &[], 60_000).await;
    assert_eq!(waiting.await.unwrap(), Ok(()));
    assert!(released.elapsed() < Duration::from_secs(1));
}

#[tokio::test]
async fn the_daemons_word_replaces_the_dial_lines_and_its_connection_ending_brings_that_back() {
    let board = Arc::new(Board::default());
    let mut carried = board.view(Some(hold(60_000)));
    assert!(carried.now(&id("alice")).is_some());
    let (mut daemon, task) = control(&board);
    say(&mut daemon, &[], 1000).await;
    settled(&board, "alice", false).await;
    assert!(board.said());
    assert_eq!(carried.now(&id("alice")), None, "the daemon says not held");
    drop(daemon);
    assert_eq!(task.await.unwrap(), Outcome::Control);
    assert!(!board.said());
    assert!(carried.now(&id("alice")).is_some(), "the dial line's again");
}

#[tokio::test]
async fn a_control_line_not_well_formed_ends_the_control_connection() {
    let board = Arc::new(Board::default());
    let (mut daemon, task) = control(&board);
    say(&mut daemon, &["alice"], 1000).await;
    settled(&board, "alice", true).await;
    let mut bad = hold(1000);
    bad.raise = "hivectl budget set alice\nAMOUNT".into();
    let holds = [(id("bob"), bad)].into_iter().collect();
    let text = format!("{}\n", serde_json::to_string(&HoldsLine { holds }).unwrap());
    daemon.write_all(text.as_bytes()).await.unwrap();
    assert_eq!(task.await.unwrap(), Outcome::Control);
    assert!(!board.said(), "nothing it said is kept");
}

#[tokio::test]
async fn a_held_message_request_is_forwarded_once_released_and_another_agents_passes_meanwhile() {
    let (gw, standin, _creds) = gateway_and_standin().await;
    let board = Arc::new(Board::default());
    let (mut daemon, _task) = control(&board);
    say(&mut daemon, &["alice"], 60_000).await;
    settled(&board, "alice", true).await;
    let mut alice = connect_as("alice", gw.clone(), Some("anthropic"), board.clone(), None).await;
    let sent = alice.sender.send_request(message());
    let waiting = tokio::spawn(sent);
    // Bob is covered by no hold: his request goes at once.
    let mut bob = connect_as("bob", gw, Some("anthropic"), board.clone(), None).await;
    let resp = bob.sender.send_request(message()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(next_row(&mut bob).await.status, 200);
    assert!(!waiting.is_finished(), "alice is still held");
    assert_eq!(standin.seen.lock().unwrap().len(), 1, "bob's only");
    // Raised: the daemon's next line lets alice's request go, forwarded.
    say(&mut daemon, &[], 60_000).await;
    let resp = tokio::time::timeout(Duration::from_secs(1), waiting)
        .await
        .expect("let go within a second")
        .unwrap()
        .unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let row = next_row(&mut alice).await;
    assert_eq!((row.status, row.error), (200, None));
    assert_eq!(row.tokens.output, 20);
    assert_eq!(standin.seen.lock().unwrap().len(), 2);
}

#[tokio::test]
async fn a_request_still_held_after_the_wait_gets_the_budgets_error_and_a_row_without_tokens() {
    let (gw, standin, _creds) = gateway_and_standin().await;
    // Held by its dial line alone (an egress service the daemon has not
    // reached yet).
    let board = Arc::new(Board::default());
    let mut alice = connect_as("alice", gw, Some("anthropic"), board, Some(hold(200))).await;
    let resp = alice.sender.send_request(message()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(resp.headers()["x-should-retry"], "false");
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let v: serde_json::Value = serde_json::from_slice(&bytes).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "invalid_request_error");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("1usd/day on alice and under")
            && msg.contains("hivectl budget set alice AMOUNT")
            && msg.contains("$1.02 of $1.00 today"),
        "{msg}"
    );
    let row = next_row(&mut alice).await;
    assert_eq!((row.status, row.tokens), (400, Tokens::default()));
    assert_eq!(row.route, "POST /v1/messages");
    assert_eq!(row.model.as_deref(), Some(MODEL));
    assert!(row.ms >= 200, "{row:?}");
    assert_eq!(row.error.as_deref(), Some(msg));
    assert!(standin.seen.lock().unwrap().is_empty(), "never forwarded");
}

#[tokio::test]
async fn a_hold_that_starts_mid_connection_holds_the_next_request_on_it_but_not_count_tokens() {
    let (gw, standin, _creds) = gateway_and_standin().await;
    let board = Arc::new(Board::default());
    let (mut daemon, _task) = control(&board);
    say(&mut daemon, &[], 200).await;
    let mut alice = connect_as("alice", gw, Some("anthropic"), board.clone(), None).await;
    let resp = alice.sender.send_request(message()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    resp.into_body().collect().await.unwrap();
    assert_eq!(next_row(&mut alice).await.status, 200);
    // The budget is reached now; the same keep-alive connection's next
    // message request is held, and answered after the wait.
    say(&mut daemon, &["alice"], 200).await;
    settled(&board, "alice", true).await;
    // count_tokens spends nothing: it passes at once.
    let count = post(
        "/v1/messages/count_tokens",
        ("x-api-key", SENTINEL),
        serde_json::json!({"model": MODEL}),
    );
    let resp = alice.sender.send_request(count).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    resp.into_body().collect().await.unwrap();
    assert_eq!(next_row(&mut alice).await.status, 200);
    let resp = alice.sender.send_request(message()).await.unwrap();
    assert_eq!(resp.status(), StatusCode::BAD_REQUEST);
    assert_eq!(next_row(&mut alice).await.status, 400);
    assert_eq!(
        standin.paths(),
        ["/v1/messages", "/v1/messages/count_tokens"]
    );
}

#[tokio::test]
async fn a_client_that_goes_away_while_held_ends_the_wait_with_a_row_saying_so() {
    let (gw, standin, _creds) = gateway_and_standin().await;
    let board = Arc::new(Board::default());
    let mut alice = connect_as("alice", gw, Some("anthropic"), board, Some(hold(60_000))).await;
    let sent = tokio::spawn(alice.sender.send_request(message()));
    tokio::time::sleep(Duration::from_millis(200)).await;
    // The agent's connection goes: the held request's row comes at once,
    // not after the minute's wait.
    sent.abort();
    let Agent { sender, mut rows } = alice;
    drop(sender);
    let row = tokio::time::timeout(Duration::from_secs(5), rows.recv())
        .await
        .expect("the row within 5 s, not after the wait")
        .unwrap();
    assert_eq!(row.status, 0);
    let error = row.error.unwrap_or_default();
    assert!(error.contains("while a budget held it"), "{error}");
    assert!(standin.seen.lock().unwrap().is_empty());
}

#[test]
fn the_held_message_names_the_agent_the_budget_the_wait_and_the_command() {
    let msg = held_message(&id("alice"), &hold(300_000));
    assert!(msg.contains("agent alice is paused"), "{msg}");
    assert!(
        msg.contains("the budget 1usd/day on alice and under is reached"),
        "{msg}"
    );
    assert!(msg.contains("waited 300 s"), "{msg}");
    assert!(msg.contains("hivectl budget set alice AMOUNT"), "{msg}");
}
