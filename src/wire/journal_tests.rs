use super::*;

fn entry(message: &str) -> JournalEntry {
    JournalEntry {
        time_us: Some(1_796_043_000_123_456),
        hostname: Some("hive1".into()),
        identifier: Some("hive-c0re".into()),
        pid: Some("812".into()),
        unit: Some("hive-c0re.service".into()),
        message: message.into(),
        ..JournalEntry::default()
    }
}

#[test]
fn an_entry_renders_like_journalctl_short_iso_in_utc() {
    assert_eq!(
        render_short(&[entry("agent started")]),
        "2026-11-30T12:50:00Z hive1 hive-c0re[812]: agent started\n"
    );
}

#[test]
fn utc_timestamps_are_right_across_epochs_leap_days_and_year_ends() {
    assert_eq!(utc_timestamp(0), "1970-01-01T00:00:00Z");
    assert_eq!(utc_timestamp(951_782_400_000_000), "2000-02-29T00:00:00Z");
    assert_eq!(utc_timestamp(1_704_067_199_999_999), "2023-12-31T23:59:59Z");
    assert_eq!(utc_timestamp(4_102_444_800_000_000), "2100-01-01T00:00:00Z");
}

#[test]
fn missing_identifier_falls_back_to_the_unit_then_unknown() {
    let mut e = entry("m");
    e.identifier = None;
    e.pid = None;
    e.hostname = None;
    e.time_us = None;
    assert_eq!(
        render_short(std::slice::from_ref(&e)),
        "- hive-c0re.service: m\n"
    );
    e.unit = None;
    assert_eq!(render_short(&[e]), "- unknown: m\n");
}

#[test]
fn a_multi_line_message_continues_on_indented_lines() {
    let text = render_short(&[entry("one\ntwo")]);
    let prefix = "2026-11-30T12:50:00Z hive1 hive-c0re[812]: ";
    assert_eq!(
        text,
        format!("{prefix}one\n{}two\n", " ".repeat(prefix.len()))
    );
}

#[test]
fn control_characters_cannot_forge_lines_or_escape_sequences() {
    let text = render_short(&[entry("a\r\u{1b}[2Jb\u{0}c\td")]);
    assert!(
        text.ends_with(": a\u{fffd}\u{fffd}[2Jb\u{fffd}c\td\n"),
        "{text:?}"
    );
    assert_eq!(text.lines().count(), 1);
}

#[test]
fn one_rendered_line_is_the_same_text_as_in_a_list() {
    let e = entry("x");
    assert_eq!(render_line(&e), render_short(&[e]));
}

#[test]
fn no_entries_render_as_empty_text() {
    assert_eq!(render_short(&[]), "");
}
