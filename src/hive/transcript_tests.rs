use super::*;

fn line(id: &str, model: &str, input: u64, output: u64) -> String {
    format!(
        "{{\"type\":\"assistant\",\"message\":{{\"id\":\"{id}\",\"model\":\"{model}\",\
         \"usage\":{{\"input_tokens\":{input},\"output_tokens\":{output},\
         \"cache_read_input_tokens\":7,\"cache_creation_input_tokens\":3}}}}}}\n"
    )
}

#[test]
fn an_assistant_message_repeated_per_content_block_is_counted_once() {
    let chunk = [
        "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hi\"}}\n".to_owned(),
        line("msg_1", "claude-x", 10, 1),
        line("msg_1", "claude-x", 10, 5),
        line("msg_1", "claude-x", 10, 5),
        line("msg_2", "claude-x", 20, 2),
    ]
    .concat();
    let c = count(chunk.as_bytes(), false, &VecDeque::new());
    assert_eq!(c.consumed, chunk.len());
    let spend = &c.by_model[&Some("claude-x".to_owned())];
    assert_eq!(spend.messages, 2);
    assert_eq!(spend.usage.input_tokens, 30);
    assert_eq!(
        spend.usage.output_tokens, 7,
        "each field the largest of a message's lines"
    );
    assert_eq!(spend.usage.cache_read_input_tokens, 14);
    assert_eq!(spend.usage.cache_creation_input_tokens, 6);
    assert_eq!(
        c.recent,
        VecDeque::from(["msg_1".to_owned(), "msg_2".to_owned()])
    );
}

#[test]
fn a_half_written_last_line_is_left_for_the_next_read() {
    let whole = line("msg_1", "m", 1, 1);
    let half = &line("msg_2", "m", 2, 2)[..30];
    let chunk = format!("{whole}{half}");
    let c = count(chunk.as_bytes(), false, &VecDeque::new());
    assert_eq!(c.consumed, whole.len());
    assert_eq!(c.messages(), 1);
    assert!(!c.skipping);
}

#[test]
fn an_id_counted_by_an_earlier_read_is_not_counted_again() {
    let recent = VecDeque::from(["msg_1".to_owned()]);
    let chunk = format!("{}{}", line("msg_1", "m", 9, 9), line("msg_2", "m", 2, 2));
    let c = count(chunk.as_bytes(), false, &recent);
    assert_eq!(c.messages(), 1);
    assert_eq!(c.by_model[&Some("m".to_owned())].usage.input_tokens, 2);
}

#[test]
fn lines_that_are_not_assistant_messages_with_an_id_count_nothing() {
    let chunk = "not json\n{\"type\":\"assistant\",\"message\":{\"usage\":{\"input_tokens\":5}}}\n\
                 {\"type\":\"summary\"}\n[1,2]\n";
    let c = count(chunk.as_bytes(), false, &VecDeque::new());
    assert_eq!(c.messages(), 0);
    assert_eq!(c.consumed, chunk.len());
}

#[test]
fn an_over_long_line_is_skipped_even_across_reads() {
    let long = vec![b'x'; MAX_LINE + 10];
    let c = count(&long, false, &VecDeque::new());
    assert_eq!((c.consumed, c.skipping), (long.len(), true));
    let next = format!("xxxx\n{}", line("msg_1", "m", 1, 1));
    let c = count(next.as_bytes(), true, &VecDeque::new());
    assert_eq!(
        (c.consumed, c.skipping, c.messages()),
        (next.len(), false, 1)
    );
    let mut whole = vec![b'{'; MAX_LINE + 1];
    whole.push(b'\n');
    assert_eq!(count(&whole, false, &VecDeque::new()).consumed, whole.len());
}

#[test]
fn the_remembered_ids_are_bounded() {
    let chunk: String = (0..RECENT_IDS + 5)
        .map(|i| line(&format!("msg_{i}"), "m", 1, 1))
        .collect();
    let c = count(chunk.as_bytes(), false, &VecDeque::new());
    assert_eq!(c.messages() as usize, RECENT_IDS + 5);
    assert_eq!(c.recent.len(), RECENT_IDS);
    assert_eq!(c.recent.back().map(String::as_str), Some("msg_68"));
}

#[test]
fn only_paths_inside_the_containers_state_map_to_the_host() {
    assert_eq!(
        inside_state("/var/lib/hive/.claude/projects/-x/s.jsonl"),
        Ok(vec![
            ".claude".into(),
            "projects".into(),
            "-x".into(),
            "s.jsonl".into()
        ])
    );
    assert_eq!(inside_state("//var/lib/./hive//a"), Ok(vec!["a".into()]));
    for bad in [
        "/var/lib/hive",
        "/var/lib/hive/",
        "/var/lib/hive/../hive2/a",
        "/var/lib/hive/a/../../etc/shadow",
        "/var/lib/hivex/a",
        "/etc/passwd",
        "var/lib/hive/a",
        "/var/lib/hive/a\0b",
    ] {
        assert!(inside_state(bad).is_err(), "{bad:?} was taken");
    }
}

#[test]
fn a_payload_names_its_transcript_and_a_sane_session() {
    let raw = r#"{"hook_event_name":"Stop","transcript_path":"/var/lib/hive/t.jsonl","session_id":"s-1"}"#;
    assert_eq!(
        pointer(raw),
        Some(("/var/lib/hive/t.jsonl".into(), Some("s-1".into())))
    );
    let raw = r#"{"hook_event_name":"Stop","transcript_path":"/t","session_id":"a\nb"}"#;
    assert_eq!(pointer(raw), Some(("/t".into(), None)));
    assert_eq!(pointer(r#"{"hook_event_name":"Stop"}"#), None);
}
