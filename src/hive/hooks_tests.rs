use super::*;
use crate::wire::host::SessionState::*;

fn event(json: &str) -> HookEvent {
    HookEvent::parse(json.as_bytes()).unwrap()
}

fn notification(kind: &str) -> HookEvent {
    event(&format!(
        r#"{{"hook_event_name":"Notification","notification_type":"{kind}","message":"m"}}"#
    ))
}

#[test]
fn every_notification_type_of_the_seed_maps_to_its_state() {
    let table = [
        ("permission_prompt", Some(NeedsPermission)),
        ("idle_prompt", Some(Idle)),
        ("elicitation_dialog", Some(NeedsAnswer)),
        ("agent_needs_input", Some(NeedsAnswer)),
        ("something_new", Some(NeedsAnswer)),
        ("auth_success", None),
        ("elicitation_complete", None),
        ("elicitation_response", None),
        ("agent_completed", None),
    ];
    for (kind, want) in table {
        let got = notification(kind).next(Some(Working)).map(|(s, _)| s);
        assert_eq!(got, want, "notification_type {kind}");
    }
}

#[test]
fn informational_notifications_do_not_block_a_working_agent() {
    assert_eq!(notification("auth_success").next(Some(Working)), None);
}

#[test]
fn lifecycle_events_map_as_in_the_seed() {
    let table = [
        ("SessionStart", None, Some(Working)),
        ("UserPromptSubmit", Some(AwaitingReview), Some(Working)),
        ("Stop", Some(Working), Some(AwaitingReview)),
        ("StopFailure", Some(Working), Some(TurnFailed)),
        ("PreToolUse", Some(Working), None),
        ("SomethingClaudeAddsLater", Some(Working), None),
    ];
    for (name, from, want) in table {
        let got = event(&format!(r#"{{"hook_event_name":"{name}"}}"#))
            .next(from)
            .map(|(s, _)| s);
        assert_eq!(got, want, "{name} from {from:?}");
    }
}

#[test]
fn a_permission_prompt_carries_its_message() {
    let e = event(
        r#"{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"Claude needs your permission to use Edit"}"#,
    );
    assert_eq!(
        e.next(Some(Working)),
        Some((
            NeedsPermission,
            Some("Claude needs your permission to use Edit".into())
        ))
    );
}

#[test]
fn session_end_during_a_turn_fails_it_and_after_stop_ends_the_session() {
    let end = event(r#"{"hook_event_name":"SessionEnd","reason":"other"}"#);
    for during in [Working, NeedsPermission, NeedsAnswer, Idle] {
        assert_eq!(end.next(Some(during)).unwrap().0, TurnFailed, "{during:?}");
    }
    assert_eq!(end.next(Some(AwaitingReview)).unwrap().0, Ended);
    assert_eq!(end.next(None).unwrap().0, Ended);
    assert_eq!(end.next(Some(TurnFailed)), None, "a failure stays shown");
}

#[test]
fn stop_failure_says_which_error() {
    let e = event(r#"{"hook_event_name":"StopFailure","error":"authentication_failed"}"#);
    assert_eq!(
        e.next(Some(Working)),
        Some((TurnFailed, Some("authentication_failed".into())))
    );
}

/// The CLI's StopFailure and SessionEnd hooks can reach the daemon in
/// either order (a CI run of the real CLI kept SessionEnd first).
#[test]
fn a_failed_turn_reads_the_same_whichever_of_stop_failure_and_session_end_comes_first() {
    let fail = event(r#"{"hook_event_name":"StopFailure","error":"authentication_failed"}"#);
    let end = event(r#"{"hook_event_name":"SessionEnd","reason":"other"}"#);
    let run = |first: &HookEvent, second: &HookEvent| {
        let mut now = Some((Working, None));
        for e in [first, second] {
            if let Some(next) = e.next(now.as_ref().map(|n| n.0)) {
                now = Some(next);
            }
        }
        now
    };
    let expected = Some((TurnFailed, Some("authentication_failed".into())));
    assert_eq!(run(&fail, &end), expected);
    assert_eq!(run(&end, &fail), expected);
}

#[test]
fn bad_payloads_are_refused_each_with_its_reason() {
    let big = format!(
        r#"{{"hook_event_name":"Stop","x":"{}"}}"#,
        "a".repeat(2 << 20)
    );
    let cases: [(&[u8], HookError); 6] = [
        (b"not json", HookError::NotJson(String::new())),
        (br#"{"session_id":"s"}"#, HookError::NoEventName),
        (br#"{"hook_event_name":""}"#, HookError::NoEventName),
        (b"[1,2]", HookError::NotObject),
        (big.as_bytes(), HookError::TooLarge(big.len())),
        (b"{\"hook_event_name\":\"Stop\xff\"}", HookError::NotUtf8),
    ];
    for (bytes, want) in cases {
        let got = HookEvent::parse(bytes).unwrap_err();
        match (&got, &want) {
            (HookError::NotJson(_), HookError::NotJson(_)) => {}
            _ => assert_eq!(got, want),
        }
    }
}

#[test]
fn the_payload_is_kept_whole_with_fields_this_version_does_not_know() {
    let raw = r#"{"hook_event_name":"Stop","session_id":"s1","future_field":{"a":[1]}}"#;
    assert_eq!(event(raw).raw, raw);
}

#[test]
fn roster_messages_are_clipped_and_free_of_control_characters() {
    let long = format!(
        r#"{{"hook_event_name":"Notification","notification_type":"permission_prompt","message":"a\nb{}"}}"#,
        "é".repeat(400)
    );
    let (_, message) = event(&long).next(Some(Working)).unwrap();
    let message = message.unwrap();
    assert!(message.len() <= MAX_MESSAGE && message.starts_with("a b"));
}
