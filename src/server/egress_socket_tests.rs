//! The daemon's side of a model connection, against a stand-in of the
//! egress service on the dialer socket: the frames read strictly, the rows
//! recorded as the agent's, the data handed on untouched.

use std::time::Duration;

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{UnixListener, UnixStream};
use tokio_util::sync::CancellationToken;

use super::*;
use crate::testing::{config_in, hive_at, id, model_request};
use crate::wire::model_log::{MeterRow, Tokens, data_head};

fn row(input: u64) -> MeterRow {
    MeterRow {
        tokens: Tokens {
            input,
            ..Tokens::default()
        },
        cost_micro_usd: Some(input),
        ms: 3,
        ..model_request()
    }
}

/// One connection of agent alice served with the service's side answering
/// `answer` (after reading the dial line); what the agent got, and alice's
/// rows once the connection ended.
async fn served(answer: Vec<u8>) -> (Vec<u8>, Vec<MeterRow>, DialRequest) {
    served_to(answer, false).await
}

/// [`served`]; with `hang_up`, the agent goes away after its request and
/// the service answers only then.
async fn served_to(answer: Vec<u8>, hang_up: bool) -> (Vec<u8>, Vec<MeterRow>, DialRequest) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _) = hive_at(config_in(dir.path()), 1_000);
    hive.spawn(&id("alice")).await.unwrap();
    std::fs::create_dir_all(hive.config().runtime_dir.clone()).unwrap();
    let listener = UnixListener::bind(hive.config().egress_dialer_socket()).unwrap();
    let service = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut line = Vec::new();
        let mut byte = [0u8; 1];
        while s.read_exact(&mut byte).await.is_ok() && byte[0] != b'\n' {
            line.push(byte[0]);
        }
        if hang_up {
            tokio::time::sleep(Duration::from_millis(200)).await;
        }
        s.write_all(&answer).await.unwrap();
        s.shutdown().await.unwrap();
        let mut rest = Vec::new();
        let _ = s.read_to_end(&mut rest).await;
        serde_json::from_slice::<DialRequest>(&line).unwrap()
    });
    let (mut agent, ours) = UnixStream::pair().unwrap();
    let task = tokio::spawn(serve(
        hive.clone(),
        id("alice"),
        ours,
        CancellationToken::new(),
    ));
    agent
        .write_all(b"POST /v1/messages HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    agent.shutdown().await.unwrap();
    let mut got = Vec::new();
    if hang_up {
        drop(agent);
    } else {
        agent.read_to_end(&mut got).await.unwrap();
    }
    task.await.unwrap();
    let dial = service.await.unwrap();
    let mut rows = Vec::new();
    for _ in 0..100 {
        rows = hive.model_log(&id("alice"), 100).await.unwrap();
        if !rows.is_empty() {
            break;
        }
        tokio::time::sleep(Duration::from_millis(10)).await;
    }
    (got, rows.into_iter().map(|r| r.request).collect(), dial)
}

fn verdict() -> Vec<u8> {
    VerdictLine::new(Verdict::Model)
        .target("api.anthropic.com")
        .to_line()
}

#[tokio::test]
async fn a_model_connections_data_reaches_the_agent_and_its_meter_rows_are_the_agents_and_never_data()
 {
    // A data frame whose payload looks like a meter frame is data, however
    // it reads: its length was counted by the service.
    let forged = row(999_999).to_frame();
    let mut answer = verdict();
    answer.extend(data_head(forged.len() + 4));
    answer.extend(b"HTTP");
    answer.extend(&forged);
    answer.extend(row(42).to_frame());
    answer.extend(data_head(3));
    answer.extend(b"end");
    let (got, rows, dial) = served(answer).await;
    let mut want = b"HTTP".to_vec();
    want.extend(&forged);
    want.extend(b"end");
    assert_eq!(got, want);
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].tokens.input, 42);
    // Stamped by the daemon's clock (1,000 s), less the request's duration.
    assert_eq!(rows[0].at_ms, 1_000_000 - 3);
    assert_eq!(dial.meter, METER_VERSION);
}

#[tokio::test]
async fn a_bad_frame_ends_the_connection_and_nothing_after_it_is_read() {
    let mut answer = verdict();
    answer.extend(data_head(2));
    answer.extend(b"ok");
    answer.extend(b"D 0\n");
    answer.extend(row(7).to_frame());
    let (got, rows, _) = served(answer).await;
    assert_eq!(got, b"ok");
    assert!(rows.is_empty(), "{rows:?}");
}

/// Used to be: the daemon stopped reading when the agent had gone, so the
/// row of the request the gateway cut (sent last) was never recorded.
#[tokio::test]
async fn an_agent_gone_mid_answer_still_gets_the_cut_requests_row() {
    let mut answer = verdict();
    answer.extend(data_head(5));
    answer.extend(b"HTTP/");
    answer.extend(row(1200).to_frame());
    let (_, rows, _) = served_to(answer, true).await;
    assert_eq!(rows.len(), 1, "{rows:?}");
    assert_eq!(rows[0].tokens.input, 1200);
}
