//! The gateway's own error answers: their shape and whether they may be
//! retried.

use hyper::StatusCode;

use super::*;

#[test]
fn only_an_upstream_at_fault_may_be_retried_every_other_refusal_says_not_to() {
    for (status, retry) in [
        (StatusCode::UNAUTHORIZED, "false"),
        (StatusCode::NOT_FOUND, "false"),
        (StatusCode::PAYLOAD_TOO_LARGE, "false"),
        (StatusCode::BAD_REQUEST, "false"),
        (StatusCode::SERVICE_UNAVAILABLE, "false"),
        (StatusCode::BAD_GATEWAY, "true"),
        (StatusCode::GATEWAY_TIMEOUT, "true"),
    ] {
        assert_eq!(retry_value(status), retry, "{status}");
    }
}

#[test]
fn a_raw_refusal_is_one_complete_http_answer_in_the_apis_error_shape() {
    let text = raw(
        StatusCode::SERVICE_UNAVAILABLE,
        "api_error",
        "not \"set\" up",
    );
    let (head, body) = text.split_once("\r\n\r\n").unwrap();
    assert!(
        head.starts_with("HTTP/1.1 503 Service Unavailable\r\n"),
        "{head}"
    );
    assert!(head.contains("\r\nx-should-retry: false\r\n"), "{head}");
    assert!(head.contains(&format!("\r\nContent-Length: {}\r\n", body.len())));
    let v: serde_json::Value = serde_json::from_str(body).unwrap();
    assert_eq!(v["type"], "error");
    assert_eq!(v["error"]["type"], "api_error");
    assert_eq!(v["error"]["message"], "not \"set\" up");
}
