//! A model connection end to end inside the egress service: the verdict
//! line, a stream passing through as it comes, the agent going away, against
//! the in-process TLS stand-in ([`super::super::standin`]).

use std::time::Duration;

use http_body_util::BodyExt;
use hyper::StatusCode;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::UnixStream;

use super::super::audit::Audit;
use super::super::gateway::HEAD_TIMEOUT;
use super::super::holds::Board;
use super::super::service::{ModelGateway, serve_dialled};
use super::super::standin::*;
use crate::testing::id;
use crate::wire::egress::DialRequest;
use crate::wire::egress_audit::{Verdict, VerdictLine};
use crate::wire::model_log::{METER_VERSION, Tokens};

#[tokio::test]
async fn a_stream_arrives_byte_for_byte_as_it_is_sent_and_is_metered_from_its_own_events() {
    let (port, standin) = standin().await;
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    let mut agent = connect(gw, Some("anthropic")).await;
    let body = serde_json::json!({"model": MODEL, "stream": true});
    let req = post("/v1/messages", ("x-api-key", SENTINEL), body);
    let resp = agent.sender.send_request(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    assert_eq!(resp.headers()["content-type"], "text/event-stream");
    let mut body = resp.into_body();
    // The first event comes before the stand-in sends the second: nothing
    // is held back for a whole answer.
    let first = tokio::time::timeout(Duration::from_secs(5), body.frame())
        .await
        .expect("the first event before the rest is sent")
        .unwrap()
        .unwrap()
        .into_data()
        .unwrap();
    standin.go_on.add_permits(1);
    let mut got = first.to_vec();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.unwrap().into_data() {
            got.extend_from_slice(&data);
        }
    }
    assert_eq!(got, sse_events().concat());
    let row = next_row(&mut agent).await;
    assert_eq!(row.route, "POST /v1/messages");
    assert_eq!(row.status, 200);
    assert_eq!(row.model.as_deref(), Some(MODEL));
    assert_eq!(
        row.tokens,
        Tokens {
            input: 1200,
            output: 57,
            cache_write: 300,
            cache_read: 4000
        }
    );
    // Sonnet 4.5: 3, 15, 3.75 and 0.30 dollars per million tokens.
    let micro = 1200.0 * 3.0 + 57.0 * 15.0 + 300.0 * 3.75 + 4000.0 * 0.3;
    assert_eq!(row.cost_micro_usd, Some(micro as u64));
    assert_eq!(row.request_id.as_deref(), Some("req_standin_sse"));
    assert_eq!(row.error, None);
}

#[tokio::test]
async fn an_agent_that_goes_away_mid_stream_closes_the_upstream_request_and_its_row_says_cut() {
    let (port, standin) = standin().await;
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    let mut agent = connect(gw, Some("anthropic")).await;
    standin.go_on.add_permits(1);
    let body = serde_json::json!({"model": MODEL, "stream": true, "endless": true});
    let req = post("/v1/messages", ("x-api-key", SENTINEL), body);
    let resp = agent.sender.send_request(req).await.unwrap();
    let mut body = resp.into_body();
    body.frame().await.unwrap().unwrap();
    drop(body);
    let Agent { sender, mut rows } = agent;
    drop(sender);
    tokio::time::timeout(Duration::from_secs(5), standin.cut.notified())
        .await
        .expect("the upstream's answer cut within 5 s of the agent going away");
    let row = tokio::time::timeout(Duration::from_secs(5), rows.recv())
        .await
        .unwrap()
        .unwrap();
    assert!(
        row.error.as_deref().unwrap_or("").contains("cut"),
        "{row:?}"
    );
    assert_eq!(row.tokens.input, 1200, "what had come is counted");
}

#[tokio::test]
async fn the_verdict_line_says_model_and_names_the_upstream() {
    let (port, _standin) = standin().await;
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    let (mut daemon, service) = UnixStream::pair().unwrap();
    let model: ModelGateway = Ok(gw);
    tokio::spawn(async move {
        serve_dialled(service, &Audit::default(), &model, &Board::default()).await
    });
    let dial = DialRequest {
        agent: id("alice"),
        allow: Vec::new(),
        verdict: 1,
        meter: METER_VERSION,
        credential: None,
        hold: None,
    };
    let line = format!(
        "{}\nGET /v1/models HTTP/1.1\r\nhost: x\r\nconnection: close\r\n\r\n",
        serde_json::to_string(&dial).unwrap()
    );
    daemon.write_all(line.as_bytes()).await.unwrap();
    let mut r = BufReader::new(daemon);
    let mut first = Vec::new();
    r.read_until(b'\n', &mut first).await.unwrap();
    let said = VerdictLine::parse(&first).unwrap();
    assert_eq!(said.verdict, Verdict::Model);
    assert_eq!(said.target, Some(format!("127.0.0.1:{port}")));
    // A daemon that does not read frames gets no model service.
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    let (mut daemon, service) = UnixStream::pair().unwrap();
    let model: ModelGateway = Ok(gw);
    tokio::spawn(async move {
        serve_dialled(service, &Audit::default(), &model, &Board::default()).await
    });
    let old = DialRequest { meter: 0, ..dial };
    let line = format!(
        "{}\nGET /v1/models HTTP/1.1\r\nhost: x\r\n\r\n",
        serde_json::to_string(&old).unwrap()
    );
    daemon.write_all(line.as_bytes()).await.unwrap();
    let mut out = String::new();
    daemon.read_to_string(&mut out).await.unwrap();
    assert!(
        out.contains("\"verdict\":\"unavailable\"")
            && out.contains("503 Service Unavailable")
            && out.contains("x-should-retry: false")
            && out.contains("\"type\":\"error\""),
        "{out}"
    );
}
