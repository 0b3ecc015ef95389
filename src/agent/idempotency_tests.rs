use super::*;

fn send(body: &str) -> Request {
    Request::Send {
        to: "bob".into(),
        body: body.into(),
        in_reply_to: None,
    }
}

/// A state directory with the log of an attempt of `turn`.
fn attempt(turn: &str) -> (tempfile::TempDir, Calls) {
    let dir = tempfile::tempdir().unwrap();
    begin_attempt(dir.path(), turn);
    let calls = Calls::at(Some(calls_path(dir.path())));
    (dir, calls)
}

#[test]
fn the_same_call_of_the_same_turn_derives_the_same_key_and_another_turn_or_call_another() {
    let key = derive("t-1", &send("hi"), 1);
    assert_eq!(key, derive("t-1", &send("hi"), 1));
    assert_eq!(key.len(), 32);
    assert!(key.bytes().all(|b| b.is_ascii_hexdigit()));
    assert_ne!(key, derive("t-2", &send("hi"), 1), "another turn");
    assert_ne!(key, derive("t-1", &send("hello"), 1), "other arguments");
    assert_ne!(key, derive("t-1", &send("hi"), 2), "the second such call");
    let ask = Request::Ask {
        question: "hi".into(),
        options: Vec::new(),
        multi: false,
        ttl_seconds: None,
        to: Some(crate::testing::id("bob")),
    };
    assert_ne!(key, derive("t-1", &ask, 1), "another tool");
}

#[test]
fn a_resumed_attempt_counts_from_zero_so_its_repeat_gets_the_cut_attempts_key() {
    let (dir, calls) = attempt("abc-1");
    let first = calls.key_for(&send("hi")).unwrap();
    let second = calls.key_for(&send("hi")).unwrap();
    assert_ne!(
        first, second,
        "a deliberate second identical send is another key"
    );
    let other = calls.key_for(&send("other")).unwrap();
    // The next attempt of the same turn: the same calls, the same keys.
    begin_attempt(dir.path(), "abc-1");
    assert_eq!(calls.key_for(&send("other")).unwrap(), other);
    assert_eq!(calls.key_for(&send("hi")).unwrap(), first);
    assert_eq!(calls.key_for(&send("hi")).unwrap(), second);
    // Another turn: other keys.
    begin_attempt(dir.path(), "abc-2");
    assert_ne!(calls.key_for(&send("hi")).unwrap(), first);
}

#[test]
fn no_key_outside_a_turn_on_a_call_that_does_not_act_or_from_a_log_the_harness_did_not_write() {
    let (dir, calls) = attempt("abc-1");
    assert_eq!(
        calls.key_for(&Request::SetStatus { text: "x".into() }),
        None
    );
    assert_eq!(
        calls.key_for(&Request::Recv {
            wait_seconds: None,
            max: None
        }),
        None
    );
    assert_eq!(Calls::at(None).key_for(&send("hi")), None);
    std::fs::write(calls_path(dir.path()), "turn ../../etc\n").unwrap();
    assert_eq!(calls.key_for(&send("hi")), None);
    end_turn(dir.path());
    assert_eq!(calls.key_for(&send("hi")), None);
}

#[test]
fn calls_made_at_once_each_get_their_own_count() {
    let (_dir, calls) = attempt("abc-1");
    let keys: Vec<String> = std::thread::scope(|s| {
        let handles: Vec<_> = (0..8)
            .map(|_| s.spawn(|| calls.key_for(&send("hi")).unwrap()))
            .collect();
        handles.into_iter().map(|h| h.join().unwrap()).collect()
    });
    let mut unique = keys.clone();
    unique.sort();
    unique.dedup();
    assert_eq!(unique.len(), 8, "{keys:?}");
    let mut expected: Vec<String> = (1..=8).map(|n| derive("abc-1", &send("hi"), n)).collect();
    expected.sort();
    assert_eq!(unique, expected);
}

#[test]
fn a_new_turn_id_is_valid_and_never_repeats() {
    let a = new_turn_id();
    let b = new_turn_id();
    assert!(valid_turn_id(&a), "{a}");
    assert_ne!(a, b);
    assert!(!valid_turn_id(""));
    assert!(!valid_turn_id("a/b"));
    assert!(!valid_turn_id(&"a".repeat(65)));
}
