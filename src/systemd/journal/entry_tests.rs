use super::*;

/// Captured from journalctl 252 (`--output=json`) reading a journal written by
/// `systemd-journal-remote` from an export stream: a daemon line, systemd's
/// own line about a unit (`UNIT=`), a binary message (byte array), a field
/// set twice (array of values), a 5000-byte message (`null`), a container's
/// two-line message, and an entry without MESSAGE.
const SAMPLE: &[u8] = include_bytes!("testdata/journalctl-252.jsonl");

fn sample() -> Vec<JournalEntry> {
    let parsed = parse_output(SAMPLE);
    assert_eq!(parsed.skipped, 0);
    parsed.entries
}

#[test]
fn a_captured_journalctl_output_parses_into_one_entry_per_line() {
    let entries = sample();
    assert_eq!(entries.len(), 7);
    let first = &entries[0];
    assert_eq!(first.time_us, Some(1_796_043_000_000_000));
    assert_eq!(first.priority, Some(JournalPriority::Notice));
    assert_eq!(first.unit.as_deref(), Some("hive-c0re.service"));
    assert_eq!(first.identifier.as_deref(), Some("hive-c0re"));
    assert_eq!(first.pid.as_deref(), Some("812"));
    assert_eq!(first.hostname.as_deref(), Some("hive1"));
    assert_eq!(
        first.machine_id.as_deref(),
        Some("0f1e2d3c4b5a69788796a5b4c3d2e1f0")
    );
    assert_eq!(first.message, "agent started");
    assert!(first.cursor.as_deref().unwrap_or("").starts_with("s="));
}

#[test]
fn the_systemd_unit_field_wins_over_unit_and_unit_is_the_fallback() {
    let entries = sample();
    // systemd's "Started ..." line: _SYSTEMD_UNIT=init.scope, UNIT=the container.
    assert_eq!(entries[1].unit.as_deref(), Some("init.scope"));
    let only_unit = br#"{"UNIT":"systemd-nspawn@h-iris.service","MESSAGE":"Stopped."}"#;
    assert_eq!(
        JournalEntry::from_json_line(only_unit)
            .unwrap()
            .unit
            .as_deref(),
        Some("systemd-nspawn@h-iris.service")
    );
}

#[test]
fn a_message_written_as_a_byte_array_is_decoded_lossily() {
    let binary = &sample()[2];
    assert_eq!(binary.message, "raw \u{1}bytes \u{fffd}\u{fffd} end");
    assert_eq!(binary.identifier.as_deref(), Some("tool"), "_COMM fallback");
    assert_eq!(binary.priority, Some(JournalPriority::Err));
}

#[test]
fn any_field_may_be_a_byte_array_not_only_the_message() {
    let line = br#"{"__REALTIME_TIMESTAMP":[49,50],"_SYSTEMD_UNIT":[97,255],"PRIORITY":[51],"MESSAGE":"m"}"#;
    let entry = JournalEntry::from_json_line(line).unwrap();
    assert_eq!(entry.time_us, Some(12));
    assert_eq!(entry.unit.as_deref(), Some("a\u{fffd}"));
    assert_eq!(entry.priority, Some(JournalPriority::Err));
}

#[test]
fn a_field_set_twice_shows_its_last_value_like_journalctl_short() {
    assert_eq!(sample()[3].message, "second value");
    let mixed = br#"{"MESSAGE":["text",[98,255]]}"#;
    assert_eq!(
        JournalEntry::from_json_line(mixed).unwrap().message,
        "b\u{fffd}"
    );
}

#[test]
fn an_over_long_field_left_out_as_null_gives_an_empty_message() {
    let big = &sample()[4];
    assert_eq!(big.message, "");
    assert_eq!(big.identifier.as_deref(), Some("big"));
    let null_inside = br#"{"MESSAGE":[null,"kept"]}"#;
    assert_eq!(
        JournalEntry::from_json_line(null_inside).unwrap().message,
        "kept"
    );
}

#[test]
fn an_entry_without_message_or_priority_still_parses() {
    let entries = sample();
    assert_eq!(entries[5].message, "line one\nline two");
    assert_eq!(entries[6].message, "");
    let bare = JournalEntry::from_json_line(b"{}").unwrap();
    assert_eq!(bare, JournalEntry::default());
    let odd_priority = br#"{"PRIORITY":"9"}"#;
    assert_eq!(
        JournalEntry::from_json_line(odd_priority).unwrap().priority,
        None
    );
}

#[test]
fn a_truncated_last_line_is_skipped_and_counted() {
    // What a journalctl killed by the timeout or the output cap leaves behind.
    let cut = SAMPLE.len() - 40;
    let parsed = parse_output(&SAMPLE[..cut]);
    assert_eq!(parsed.entries.len(), 6);
    assert_eq!(parsed.skipped, 1);
    assert_eq!(parsed.entries[5].message, "line one\nline two");
}

#[test]
fn a_garbage_line_in_the_middle_does_not_hide_the_lines_around_it() {
    let mut output = Vec::new();
    output.extend_from_slice(br#"{"MESSAGE":"before"}"#);
    output.extend_from_slice(b"\n-- No entries --\n\n");
    output.extend_from_slice(br#"{"MESSAGE":"after"}"#);
    let parsed = parse_output(&output);
    let messages: Vec<&str> = parsed.entries.iter().map(|e| e.message.as_str()).collect();
    assert_eq!(messages, ["before", "after"]);
    assert_eq!(parsed.skipped, 1);
}

#[test]
fn empty_output_is_no_entries() {
    assert_eq!(parse_output(b""), Parsed::default());
    assert_eq!(parse_output(b"\n\n"), Parsed::default());
}

#[test]
fn syslog_numbers_zero_to_seven_are_the_levels_in_order_and_eight_is_none() {
    let names: Vec<&str> = (0..8)
        .map(|n| priority_from_syslog(n).unwrap().as_str())
        .collect();
    assert_eq!(
        names,
        [
            "emerg", "alert", "crit", "err", "warning", "notice", "info", "debug"
        ]
    );
    assert_eq!(priority_from_syslog(8), None);
}

#[test]
fn priorities_are_written_on_the_wire_as_journalctls_names() {
    for n in 0..8 {
        let p = priority_from_syslog(n).unwrap();
        assert_eq!(
            serde_json::to_string(&p).unwrap(),
            format!("\"{}\"", p.as_str())
        );
    }
    for bad in ["\"error\"", "\"ERR\"", "\"3\"", "3", "\"0..7\""] {
        assert!(
            serde_json::from_str::<JournalPriority>(bad).is_err(),
            "{bad}"
        );
    }
}
