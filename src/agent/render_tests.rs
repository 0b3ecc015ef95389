use super::*;

#[test]
fn a_long_result_is_cut_on_a_char_boundary_and_says_so() {
    let text = "é".repeat(MAX_TOOL_OUTPUT);
    let out = cap(&text, MAX_TOOL_OUTPUT);
    assert!(out.len() <= MAX_TOOL_OUTPUT);
    assert!(out.ends_with(&format!("capped at {MAX_TOOL_OUTPUT} bytes]")));
    assert_eq!(cap("short", 10), "short");
}

#[test]
fn a_refusal_is_an_error_result_with_the_daemons_words() {
    let (text, is_error) = response_text(&Response::err(
        ErrorCode::UnknownRecipient,
        "unknown recipient \"zed\"",
    ));
    assert!(is_error);
    assert_eq!(
        text,
        "unknown recipient \"zed\"\n[code: unknown_recipient; change the request]"
    );
    let (text, _) = response_text(&Response::err(ErrorCode::InboxFull, "bob's inbox is full"));
    assert!(text.ends_with("[code: inbox_full; retry later]"), "{text}");
    assert_eq!(response_text(&Response::ok()), ("ok".into(), false));
    let (text, is_error) = response_text(&Response::sent(0));
    assert!(!is_error);
    assert!(text.contains("reached nobody"), "{text}");
    let (text, is_error) = response_text(&Response::Status { unread: 2 });
    assert!(!is_error);
    assert_eq!(text, r#"{"kind":"status","unread":2}"#);
}

#[test]
fn a_queued_request_names_its_approval_and_a_repeat_says_it_is_already_pending() {
    assert_eq!(
        response_text(&Response::queued(12, false)),
        ("ok: approval 12 queued; the operator decides".into(), false)
    );
    let (text, is_error) = response_text(&Response::queued(12, true));
    assert!(!is_error);
    assert!(
        text.starts_with("already pending: approval 12 asks the same"),
        "{text}"
    );
    let (text, _) = response_text(&Response::err(ErrorCode::TooManyPending, "16 pending"));
    assert!(
        text.ends_with("[code: too_many_pending; retry later]"),
        "{text}"
    );
}
