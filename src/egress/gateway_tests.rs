//! The model gateway's answers inside the egress service: the credential
//! swap, the routes, the size cap and the errors, against the in-process
//! TLS stand-in ([`super::super::standin`]).

use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::{Request, StatusCode};
use tokio::net::TcpListener;

use super::super::standin::*;
use super::*;
use crate::wire::model_log::MeterRow;

#[tokio::test]
async fn the_sentinel_goes_no_further_than_the_gateway_the_hosts_key_goes_upstream_instead() {
    let (port, standin) = standin().await;
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    let mut agent = connect(gw, Some("anthropic")).await;
    let body = serde_json::json!({"model": MODEL, "max_tokens": 5, "messages": []});
    let req = post("/v1/messages?beta=true", ("x-api-key", SENTINEL), body);
    let resp = agent.sender.send_request(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let text = resp.into_body().collect().await.unwrap().to_bytes();
    assert!(String::from_utf8_lossy(&text).contains("\"hi\""));
    let seen = standin.seen.lock().unwrap()[0].clone();
    assert_eq!(seen.path, "/v1/messages?beta=true");
    assert_eq!(seen.headers["x-api-key"], REAL_KEY);
    assert!(seen.headers.get("authorization").is_none());
    assert_eq!(seen.headers["anthropic-beta"], "claude-code-20250219");
    assert_eq!(seen.headers["host"], format!("127.0.0.1:{port}"));
    assert_eq!(seen.headers["accept-encoding"], "identity");
    let all = format!("{:?}{}", seen.headers, String::from_utf8_lossy(&seen.body));
    assert!(!all.contains(SENTINEL), "{all}");
    // A JSON answer is metered from its usage.
    let row = next_row(&mut agent).await;
    let tokens = Tokens {
        input: 10,
        output: 20,
        cache_write: 0,
        cache_read: 5,
    };
    assert_eq!((row.status, row.tokens, row.error), (200, tokens, None));
    assert_eq!(row.request_id.as_deref(), Some("req_standin_1"));
}

#[tokio::test]
async fn an_oauth_token_goes_as_a_bearer_with_the_oauth_beta_added_to_the_agents_betas() {
    let (port, standin) = standin().await;
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    let mut agent = connect(gw, Some("oauth")).await;
    let auth = ("authorization", "Bearer hive-sentinel-h-alice");
    let req = post("/v1/messages", auth, serde_json::json!({"model": MODEL}));
    let resp = agent.sender.send_request(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::OK);
    let seen = standin.seen.lock().unwrap()[0].clone();
    assert_eq!(
        seen.headers["authorization"],
        format!("Bearer {REAL_OAUTH}")
    );
    assert!(seen.headers.get("x-api-key").is_none());
    assert_eq!(
        seen.headers["anthropic-beta"],
        format!("claude-code-20250219,{OAUTH_BETA}")
    );
}

#[tokio::test]
async fn routes_claude_code_does_not_use_are_404_naming_the_served_ones_and_never_go_upstream() {
    let (port, standin) = standin().await;
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    let mut agent = connect(gw, Some("anthropic")).await;
    for (method, path) in [
        ("GET", "/v1/files"),
        ("POST", "/v1/messages/batches"),
        ("DELETE", "/v1/messages"),
    ] {
        let req = Request::builder()
            .method(method)
            .uri(path)
            .header("host", "x")
            .body(Full::new(Bytes::new()))
            .unwrap();
        let resp = agent.sender.send_request(req).await.unwrap();
        assert_eq!(resp.status(), StatusCode::NOT_FOUND);
        let text = resp.into_body().collect().await.unwrap().to_bytes();
        let v: serde_json::Value = serde_json::from_slice(&text).unwrap();
        assert_eq!(v["type"], "error");
        assert_eq!(v["error"]["type"], "not_found_error");
        let msg = v["error"]["message"].as_str().unwrap();
        assert!(
            msg.contains(path) && msg.contains("POST /v1/messages/count_tokens"),
            "{msg}"
        );
        let row = next_row(&mut agent).await;
        assert_eq!((row.status, row.route), (404, format!("{method} {path}")));
    }
    // The served ones: count_tokens (its figure is no consumption) and models.
    let req = post(
        "/v1/messages/count_tokens",
        ("x-api-key", SENTINEL),
        serde_json::json!({"model": MODEL}),
    );
    assert_eq!(
        agent.sender.send_request(req).await.unwrap().status(),
        StatusCode::OK
    );
    let row = next_row(&mut agent).await;
    assert_eq!((row.status, row.tokens), (200, Tokens::default()));
    let req = Request::get("/v1/models")
        .header("host", "x")
        .body(Full::new(Bytes::new()))
        .unwrap();
    assert_eq!(
        agent.sender.send_request(req).await.unwrap().status(),
        StatusCode::OK
    );
    assert_eq!(standin.paths(), ["/v1/messages/count_tokens", "/v1/models"]);
}

#[tokio::test]
async fn a_request_over_the_size_cap_is_413_without_reaching_the_upstream() {
    let (port, standin) = standin().await;
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, "ca.pem", creds.path(), HEAD_TIMEOUT);
    let mut agent = connect(gw, Some("anthropic")).await;
    let big = "x".repeat(MAX_REQUEST + 1);
    let req = post(
        "/v1/messages",
        ("x-api-key", SENTINEL),
        serde_json::json!({"pad": big}),
    );
    let resp = agent.sender.send_request(req).await.unwrap();
    assert_eq!(resp.status(), StatusCode::PAYLOAD_TOO_LARGE);
    let v: serde_json::Value =
        serde_json::from_slice(&resp.into_body().collect().await.unwrap().to_bytes()).unwrap();
    assert_eq!(v["error"]["type"], "request_too_large");
    assert_eq!(next_row(&mut agent).await.status, 413);
    assert!(standin.seen.lock().unwrap().is_empty());
}

/// One request to a gateway with `ca`, `timeout` and `credential`: the
/// status, the error's type and message, the row.
async fn one(
    port: u16,
    ca: &str,
    timeout: Duration,
    credential: Option<&str>,
    auth: (&str, &str),
    body: serde_json::Value,
) -> (StatusCode, serde_json::Value, MeterRow) {
    let creds = tempfile::tempdir().unwrap();
    let gw = gateway_to(port, ca, creds.path(), timeout);
    let mut agent = connect(gw, credential).await;
    let resp = agent
        .sender
        .send_request(post("/v1/messages", auth, body))
        .await
        .unwrap();
    let status = resp.status();
    let bytes = resp.into_body().collect().await.unwrap().to_bytes();
    let v = serde_json::from_slice(&bytes).unwrap_or_default();
    (status, v, next_row(&mut agent).await)
}

#[tokio::test]
async fn an_upstream_failure_timeout_or_bad_certificate_is_an_anthropic_shaped_error_with_a_row() {
    let (port, _standin) = standin().await;
    let auth = ("x-api-key", SENTINEL);
    let model = serde_json::json!({"model": MODEL, "fail": 500});
    // The upstream's own 5xx passes through as it said it.
    let (status, v, row) = one(port, "ca.pem", HEAD_TIMEOUT, Some("anthropic"), auth, model).await;
    assert_eq!((status.as_u16(), row.status), (500, 500));
    assert_eq!(v["error"]["message"], "stand-in broke");
    assert_eq!(row.error.as_deref(), Some("stand-in broke"));
    // A stand-in whose certificate the gateway does not trust: 502.
    let body = serde_json::json!({"model": MODEL});
    let (status, v, row) = one(
        port,
        "other-ca.pem",
        HEAD_TIMEOUT,
        Some("anthropic"),
        auth,
        body.clone(),
    )
    .await;
    assert_eq!((status, row.status), (StatusCode::BAD_GATEWAY, 502));
    assert_eq!(v["type"], "error");
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("could not be reached") && msg.contains("certificate"),
        "{msg}"
    );
    // Nothing listening: 502.
    let closed = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let dead = closed.local_addr().unwrap().port();
    drop(closed);
    let (status, _, _) = one(dead, "ca.pem", HEAD_TIMEOUT, Some("anthropic"), auth, body).await;
    assert_eq!(status, StatusCode::BAD_GATEWAY);
    // No answer within the head timeout: 504.
    let slow = serde_json::json!({"model": MODEL, "slow": true});
    let short = Duration::from_millis(300);
    let (status, v, row) = one(port, "ca.pem", short, Some("anthropic"), auth, slow).await;
    assert_eq!((status, row.status), (StatusCode::GATEWAY_TIMEOUT, 504));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("did not answer"),
        "{v}"
    );
}

#[tokio::test]
async fn without_a_host_credential_the_agents_own_key_passes_and_the_sentinel_is_refused_401() {
    let (port, standin) = standin().await;
    let body = serde_json::json!({"model": MODEL});
    let own = ("x-api-key", "sk-ant-api03-the-agents-own");
    let (status, _, _) = one(port, "ca.pem", HEAD_TIMEOUT, None, own, body.clone()).await;
    assert_eq!(status, StatusCode::OK);
    assert_eq!(standin.seen.lock().unwrap()[0].headers["x-api-key"], own.1);
    let bearer = ("authorization", "Bearer hive-sentinel-h-alice");
    let (status, v, row) = one(port, "ca.pem", HEAD_TIMEOUT, None, bearer, body.clone()).await;
    assert_eq!((status, row.status), (StatusCode::UNAUTHORIZED, 401));
    assert!(
        v["error"]["message"]
            .as_str()
            .unwrap()
            .contains("model_credential")
    );
    assert_eq!(
        standin.seen.lock().unwrap().len(),
        1,
        "the sentinel never went upstream"
    );
    // A credential named but not loaded: 503 naming it and the directive.
    let (status, v, _) = one(port, "ca.pem", HEAD_TIMEOUT, Some("nope"), own, body).await;
    assert_eq!(status, StatusCode::SERVICE_UNAVAILABLE);
    let msg = v["error"]["message"].as_str().unwrap();
    assert!(msg.contains("LoadCredential=nope:"), "{msg}");
}

#[test]
fn the_gateways_own_answer_is_json_with_the_retry_its_status_calls_for() {
    let resp = error_response(StatusCode::UNAUTHORIZED, "authentication_error", "why");
    assert_eq!(resp.status(), StatusCode::UNAUTHORIZED);
    assert_eq!(resp.headers()["x-should-retry"], "false");
    assert_eq!(resp.headers()["content-type"], "application/json");
    let resp = error_response(StatusCode::BAD_GATEWAY, "api_error", "why");
    assert_eq!(resp.headers()["x-should-retry"], "true");
}
