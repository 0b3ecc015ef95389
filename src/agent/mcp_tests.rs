use std::path::PathBuf;

use tokio::io::{AsyncBufReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixListener;

use super::*;
use crate::agent::idempotency::{self, Calls};

/// A server that reads each request line; the first connection is hung up
/// on without an answer, the next answered `answer`. The lines it read.
fn flaky_socket(path: PathBuf, answer: &'static str) -> tokio::task::JoinHandle<Vec<String>> {
    let listener = UnixListener::bind(&path).unwrap();
    tokio::spawn(async move {
        let mut lines = Vec::new();
        for n in 0..2 {
            let (stream, _) = listener.accept().await.unwrap();
            let (r, mut w) = stream.into_split();
            let mut line = String::new();
            BufReader::new(r).read_line(&mut line).await.unwrap();
            lines.push(line);
            if n == 1 {
                w.write_all(answer.as_bytes()).await.unwrap();
            }
        }
        lines
    })
}

fn hyperhive(socket: PathBuf, calls: Calls) -> Hyperhive {
    let selection = Selection::from_values(None, None, ToolGroup::AGENT_DEFAULT).unwrap();
    Hyperhive::new(AgentSocket::new(socket), &selection)
        .with_budget(Duration::from_secs(5))
        .with_calls(calls)
}

#[tokio::test]
async fn a_keyed_call_without_an_answer_is_asked_once_more_with_the_same_key() {
    let dir = tempfile::tempdir().unwrap();
    idempotency::begin_attempt(dir.path(), "abc-1");
    let socket = dir.path().join("mcp.sock");
    let server = flaky_socket(socket.clone(), "{\"kind\":\"ok\",\"delivered\":1}\n");
    let calls = Calls::at(Some(idempotency::calls_path(dir.path())));
    let args = serde_json::json!({"to": "bob", "body": "hi"});
    let (text, is_error) = hyperhive(socket, calls)
        .call("send", args.as_object().cloned())
        .await;
    assert!(!is_error, "{text}");
    let lines = server.await.unwrap();
    let keys: Vec<serde_json::Value> = lines
        .iter()
        .map(|l| serde_json::from_str::<serde_json::Value>(l).unwrap()["idempotency_key"].clone())
        .collect();
    assert!(keys[0].is_string(), "{lines:?}");
    assert_eq!(keys[0], keys[1], "the same key both times");
}

#[tokio::test]
async fn an_unkeyed_call_without_an_answer_is_not_asked_again() {
    let dir = tempfile::tempdir().unwrap();
    let socket = dir.path().join("mcp.sock");
    let _server = flaky_socket(socket.clone(), "{\"kind\":\"ok\"}\n");
    let args = serde_json::json!({"to": "bob", "body": "hi"});
    let (text, is_error) = hyperhive(socket, Calls::default())
        .call("send", args.as_object().cloned())
        .await;
    assert!(is_error && text.contains("no answer"), "{text}");
}
