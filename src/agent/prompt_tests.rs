use super::*;

fn msg(id: i64, from: &str, body: &str) -> DeliveredMessage {
    DeliveredMessage {
        from: from.into(),
        body: body.into(),
        id,
        redelivered: false,
        in_reply_to: None,
    }
}

#[test]
fn each_message_shows_sender_id_thread_and_body_verbatim() {
    let mut reply = msg(8, "bob", "done:\n  - x");
    reply.in_reply_to = Some(3);
    let text = render(&[msg(7, "operator", "hello"), reply]);
    assert_eq!(
        text,
        "--- message 7 from operator\nhello\n\n--- message 8 from bob (in reply to 3)\ndone:\n  - x"
    );
}

#[test]
fn a_redelivered_message_says_it_may_already_be_handled() {
    let mut m = msg(1, "bob", "x");
    m.redelivered = true;
    assert!(render(&[m]).contains("may already have handled"));
}

#[test]
fn a_system_event_is_rendered_as_named_fields_not_json() {
    let body = HelperEvent::NeedsLogin {
        agent: "alice".into(),
    }
    .to_body();
    assert_eq!(
        render(&[msg(2, "system", &body)]),
        "--- message 2 from system\nhive event: needs_login\n  agent: alice"
    );
    // Not an event: shown as sent.
    assert_eq!(
        render(&[msg(3, "system", "{\"x\":1}")]),
        "--- message 3 from system\n{\"x\":1}"
    );
}

#[test]
fn the_turn_prompt_tells_how_to_reply_before_the_messages() {
    let p = turn_prompt(&[msg(1, "operator", "hi")]);
    assert!(p.starts_with(TURN_PREAMBLE));
    assert!(p.ends_with("--- message 1 from operator\nhi"));
}
