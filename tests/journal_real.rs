//! The journal reader against the **real journalctl** on journal files the
//! test writes with `systemd-journal-remote` (export format in, real
//! `*.journal` files out), read through `--directory=`.
//!
//! What this proves that the unit tests cannot: journalctl really takes each
//! `--option=value` element as one value (a grep of `--output=cat`, a since
//! of `-1h`), its filters select what we claim, its `-o json` (byte arrays
//! included) parses, its refusals reach us as `Refused` with its words, and
//! `--follow` delivers a new entry promptly.
//!
//! What it cannot: `--machine=h-<n>` needs machined and a running container;
//! that check lives in the systemd test-bed. An agent's logs are tested here
//! through the directory layout (`<dir>/h-<n>/`) instead.
//!
//! Needs `journalctl` and `systemd-journal-remote` (Debian: `apt-get install
//! systemd-journal-remote`). Without them the tests fail and say so; set
//! `HIVE_SKIP_REAL_JOURNAL=1` to skip them knowingly.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use std::path::{Path, PathBuf};
use std::time::{Duration, Instant};

use common::journal_files::{Entry, Value, journal_remote, now_us, text, write_journal};

use hive_c0re::systemd::journal::{
    HostJournalRequest, Journal, JournalError, JournalPriority, JournalQuery, JournalSource,
};

const TEST_DEADLINE: Duration = Duration::from_secs(20);

/// A small host journal: the daemon, a container unit, a failing tool with a
/// binary message, and an old line from two hours ago.
struct Fixture {
    dir: tempfile::TempDir,
}

impl Fixture {
    fn new() -> Option<Self> {
        let remote = journal_remote()?;
        let dir = tempfile::tempdir().unwrap();
        // journal-remote only writes files, but a directory of our own keeps
        // the export input out of journalctl's sight.
        let journal_dir = dir.path().join("journal");
        std::fs::create_dir(&journal_dir).unwrap();
        let now = now_us();
        let minute = 60_000_000;
        write_journal(
            &remote,
            &journal_dir,
            "host",
            &[
                Entry {
                    realtime_us: now - 120 * minute,
                    fields: vec![
                        text("PRIORITY", "6"),
                        text("_SYSTEMD_UNIT", "hive-c0re.service"),
                        text("SYSLOG_IDENTIFIER", "hive-c0re"),
                        text("_HOSTNAME", "hive1"),
                        text("MESSAGE", "old line from two hours ago"),
                    ],
                },
                Entry {
                    realtime_us: now - 3 * minute,
                    fields: vec![
                        text("PRIORITY", "6"),
                        text("_SYSTEMD_UNIT", "hive-c0re.service"),
                        text("SYSLOG_IDENTIFIER", "hive-c0re"),
                        text("_PID", "812"),
                        text("_HOSTNAME", "hive1"),
                        text("AGENT", "iris"),
                        text("MESSAGE", "agent iris started"),
                    ],
                },
                Entry {
                    realtime_us: now - 2 * minute,
                    fields: vec![
                        text("PRIORITY", "3"),
                        text("_SYSTEMD_UNIT", "tool.service"),
                        text("_COMM", "tool"),
                        text("_HOSTNAME", "hive1"),
                        ("MESSAGE", Value::Bytes(b"tool failed: \x01\xff")),
                    ],
                },
                Entry {
                    realtime_us: now - minute,
                    fields: vec![
                        text("PRIORITY", "4"),
                        text("_SYSTEMD_UNIT", "systemd-nspawn@h-iris.service"),
                        text("SYSLOG_IDENTIFIER", "systemd-nspawn"),
                        text("_HOSTNAME", "hive1"),
                        text("MESSAGE", "warning: try --output=cat to see it"),
                    ],
                },
            ],
        );
        Some(Self { dir })
    }

    fn journal_dir(&self) -> PathBuf {
        self.dir.path().join("journal")
    }

    fn journal(&self) -> Journal {
        Journal::new(JournalSource::Directory(self.journal_dir()))
    }

    async fn messages(&self, request: HostJournalRequest<'_>) -> Result<Vec<String>, JournalError> {
        let query = JournalQuery::host_journal(&request).unwrap();
        let entries = tokio::time::timeout(TEST_DEADLINE, self.journal().read(&query))
            .await
            .unwrap()?;
        Ok(entries.into_iter().map(|e| e.message).collect())
    }
}

#[tokio::test]
async fn the_real_journalctl_output_parses_including_a_binary_message() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let journal = fixture.journal();
    let entries = tokio::time::timeout(TEST_DEADLINE, journal.read(&JournalQuery::default()))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(entries.len(), 4);
    let started = &entries[1];
    assert_eq!(started.message, "agent iris started");
    assert_eq!(started.unit.as_deref(), Some("hive-c0re.service"));
    assert_eq!(started.priority, Some(JournalPriority::Info));
    assert_eq!(started.hostname.as_deref(), Some("hive1"));
    assert_eq!(entries[2].message, "tool failed: \u{1}\u{fffd}");
    let text = tokio::time::timeout(TEST_DEADLINE, journal.read_text(&JournalQuery::default()))
        .await
        .unwrap()
        .unwrap();
    assert!(
        text.contains(" hive1 hive-c0re[812]: agent iris started\n"),
        "{text}"
    );
    assert!(
        text.contains(" hive1 tool: tool failed: \u{fffd}\u{fffd}\n"),
        "{text}"
    );
}

#[tokio::test]
async fn a_unit_filter_selects_only_that_units_lines() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let request = HostJournalRequest {
        unit: Some("hive-c0re.service"),
        ..HostJournalRequest::default()
    };
    assert_eq!(
        fixture.messages(request).await.unwrap(),
        ["old line from two hours ago", "agent iris started"]
    );
    let glob = HostJournalRequest {
        unit: Some("systemd-nspawn@*"),
        ..HostJournalRequest::default()
    };
    assert_eq!(
        fixture.messages(glob).await.unwrap(),
        ["warning: try --output=cat to see it"]
    );
}

#[tokio::test]
async fn a_priority_filter_selects_that_level_and_more_severe() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let request = HostJournalRequest {
        priority: Some(JournalPriority::Warning),
        ..HostJournalRequest::default()
    };
    let messages = fixture.messages(request).await.unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].starts_with("tool failed"));
    assert!(messages[1].starts_with("warning:"));
}

#[tokio::test]
async fn a_grep_that_looks_like_an_option_is_matched_as_text_not_obeyed() {
    // Had `--output=cat` become an option, journalctl would print plain
    // text and nothing would parse as JSON.
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let request = HostJournalRequest {
        grep: Some("--output=cat"),
        ..HostJournalRequest::default()
    };
    assert_eq!(
        fixture.messages(request).await.unwrap(),
        ["warning: try --output=cat to see it"]
    );
}

#[tokio::test]
async fn a_grep_that_matches_nothing_returns_no_lines() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let request = HostJournalRequest {
        grep: Some("no line says this"),
        ..HostJournalRequest::default()
    };
    assert_eq!(
        fixture.messages(request).await.unwrap(),
        Vec::<String>::new()
    );
}

#[tokio::test]
async fn a_since_or_until_starting_with_a_dash_is_a_relative_time() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let recent = HostJournalRequest {
        since: Some("-1h"),
        ..HostJournalRequest::default()
    };
    assert_eq!(fixture.messages(recent).await.unwrap().len(), 3);
    let old = HostJournalRequest {
        until: Some("-1h"),
        ..HostJournalRequest::default()
    };
    assert_eq!(
        fixture.messages(old).await.unwrap(),
        ["old line from two hours ago"]
    );
}

#[tokio::test]
async fn lines_returns_the_newest_entries_oldest_first() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let request = HostJournalRequest {
        lines: Some(2),
        ..HostJournalRequest::default()
    };
    let messages = fixture.messages(request).await.unwrap();
    assert_eq!(messages.len(), 2);
    assert!(messages[0].starts_with("tool failed"));
    assert!(messages[1].starts_with("warning:"));
}

#[tokio::test]
async fn lines_with_a_since_returns_the_newest_entries_of_that_range_oldest_first() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    // journalctl 252 alone answers `--since=-1h --lines=2` with the range's
    // two OLDEST entries ("agent iris started", "tool failed").
    let request = HostJournalRequest {
        since: Some("-1h"),
        lines: Some(2),
        ..HostJournalRequest::default()
    };
    let messages = fixture.messages(request).await.unwrap();
    assert_eq!(messages.len(), 2, "{messages:?}");
    assert!(messages[0].starts_with("tool failed"), "{messages:?}");
    assert!(messages[1].starts_with("warning:"), "{messages:?}");
}

#[tokio::test]
async fn a_pattern_journalctl_cannot_compile_is_refused_in_its_own_words() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let request = HostJournalRequest {
        grep: Some("(unclosed"),
        ..HostJournalRequest::default()
    };
    let err = fixture.messages(request).await.unwrap_err();
    let JournalError::Refused { stderr, .. } = &err else {
        panic!("expected Refused, got {err:?}");
    };
    assert!(stderr.contains("(unclosed"), "{stderr}");
}

#[tokio::test]
async fn a_time_journalctl_cannot_parse_is_refused_in_its_own_words() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let request = HostJournalRequest {
        since: Some("next blue moon"),
        ..HostJournalRequest::default()
    };
    let err = fixture.messages(request).await.unwrap_err();
    assert!(
        err.to_string().contains("Failed to parse timestamp"),
        "{err}"
    );
}

#[tokio::test]
async fn follow_delivers_an_entry_written_later_within_a_second() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let Some(remote) = journal_remote() else {
        return;
    };
    let journal = fixture.journal();
    let query = JournalQuery {
        lines: Some(1),
        ..JournalQuery::default()
    };
    let mut follow = journal.follow(&query).unwrap();
    let first = tokio::time::timeout(TEST_DEADLINE, follow.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    assert_eq!(first.message, "warning: try --output=cat to see it");

    let written = Instant::now();
    write_journal(
        &remote,
        &fixture.journal_dir(),
        "live",
        &[Entry {
            realtime_us: now_us(),
            fields: vec![text("MESSAGE", "a new line")],
        }],
    );
    let next = tokio::time::timeout(TEST_DEADLINE, follow.next())
        .await
        .unwrap()
        .unwrap()
        .unwrap();
    let latency = written.elapsed();
    assert_eq!(next.message, "a new line");
    assert!(latency < Duration::from_secs(1), "took {latency:?}");
    eprintln!("follow latency: {latency:?}");

    let pid = follow.pid().unwrap();
    tokio::time::timeout(TEST_DEADLINE, follow.close())
        .await
        .unwrap();
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "journalctl {pid} survived close"
    );
}

#[tokio::test]
async fn an_agents_logs_come_from_its_h_name_journal_and_not_the_hosts() {
    let Some(fixture) = Fixture::new() else {
        return;
    };
    let Some(remote) = journal_remote() else {
        return;
    };
    let machine_dir = fixture.journal_dir().join("h-iris");
    std::fs::create_dir(&machine_dir).unwrap();
    let now = now_us();
    let lines: Vec<String> = (1..=4).map(|i| format!("harness turn {i}")).collect();
    let entries: Vec<Entry<'_>> = lines
        .iter()
        .zip(0u64..)
        .map(|(line, i)| Entry {
            realtime_us: now - 10_000_000 + i,
            fields: vec![
                text("_HOSTNAME", "h-iris"),
                text("_SYSTEMD_UNIT", "harness.service"),
                text("SYSLOG_IDENTIFIER", "harness"),
                text("MESSAGE", line),
            ],
        })
        .collect();
    write_journal(&remote, &machine_dir, "container", &entries);

    let query =
        JournalQuery::agent_logs(hive_c0re::wire::ident::Ident::new("iris").unwrap(), Some(3));
    let text = tokio::time::timeout(TEST_DEADLINE, fixture.journal().read_text(&query))
        .await
        .unwrap()
        .unwrap();
    let got: Vec<&str> = text.lines().collect();
    assert_eq!(got.len(), 3, "{text}");
    assert!(
        got[0].ends_with(" h-iris harness: harness turn 2"),
        "{text}"
    );
    assert!(
        got[2].ends_with(" h-iris harness: harness turn 4"),
        "{text}"
    );

    let nobody =
        JournalQuery::agent_logs(hive_c0re::wire::ident::Ident::new("nobody").unwrap(), None);
    let err = fixture.journal().read(&nobody).await.unwrap_err();
    assert!(matches!(err, JournalError::Refused { .. }), "{err:?}");
    assert!(err.to_string().contains("h-nobody"), "{err}");
}
