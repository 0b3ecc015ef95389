use std::ffi::OsString;
use std::path::PathBuf;
use std::time::Duration;

use super::JournalPriority;
use super::stand_in::StandIn;
use super::*;
use crate::wire::ident::Ident;

const TEST_DEADLINE: Duration = Duration::from_secs(10);

fn fixture_path() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("src/systemd/journal/testdata/journalctl-252.jsonl")
}

fn journal_over_fixture(source: JournalSource) -> Journal<StandIn> {
    Journal::with_spawn(
        StandIn::new("cat", [fixture_path()]),
        source,
        Limits::default(),
    )
}

#[tokio::test]
async fn a_read_hands_the_querys_argv_to_the_seam_and_parses_what_comes_back() {
    let journal = journal_over_fixture(JournalSource::Host);
    let request = HostJournalRequest {
        container: Some("h-iris"),
        priority: Some(JournalPriority::Warning),
        grep: Some("--output=export"),
        since: Some("-1h"),
        ..HostJournalRequest::default()
    };
    let query = JournalQuery::host_journal(&request).unwrap();
    let entries = tokio::time::timeout(TEST_DEADLINE, journal.read(&query))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(entries.len(), 7);
    // since + lines reads newest first (`--reverse`) and turns the entries
    // back; the stand-in prints the fixture as it is, so its first is last.
    assert_eq!(entries[6].message, "agent started");
    let seen = journal.spawn.seen();
    assert_eq!(seen.len(), 1);
    let expected: Vec<OsString> = [
        "--no-pager",
        "--quiet",
        "--output=json",
        "--machine=h-iris",
        "--priority=warning",
        "--grep=--output=export",
        "--since=-1h",
        "--lines=30",
        "--reverse",
    ]
    .into_iter()
    .map(OsString::from)
    .collect();
    assert_eq!(seen[0], expected);
}

#[tokio::test]
async fn read_text_renders_every_entry_as_one_short_line_plus_continuations() {
    let journal = journal_over_fixture(JournalSource::Host);
    let text = tokio::time::timeout(TEST_DEADLINE, journal.read_text(&JournalQuery::default()))
        .await
        .unwrap()
        .unwrap();
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 8, "{text}");
    assert_eq!(
        lines[0],
        "2026-11-30T12:50:00Z hive1 hive-c0re[812]: agent started"
    );
    assert_eq!(
        lines[2],
        "2026-11-30T12:50:02Z hive1 tool[4242]: raw \u{fffd}bytes \u{fffd}\u{fffd} end"
    );
    assert_eq!(lines[6].trim_start(), "line two");
}

#[tokio::test]
async fn an_agents_logs_from_a_journal_directory_come_from_its_h_name_subdirectory() {
    let journal = journal_over_fixture(JournalSource::Directory("/srv/journal".into()));
    let query = JournalQuery::agent_logs(Ident::new("iris").unwrap(), Some(5));
    let entries = tokio::time::timeout(TEST_DEADLINE, journal.read(&query))
        .await
        .unwrap()
        .unwrap();
    assert_eq!(entries.len(), 7);
    let seen = journal.spawn.seen();
    assert_eq!(
        seen[0][3],
        OsString::from("--directory=/srv/journal/h-iris")
    );
    assert_eq!(seen[0][4], OsString::from("--lines=5"));
}

#[tokio::test]
async fn a_follow_passes_follow_and_streams_the_entries() {
    let journal = journal_over_fixture(JournalSource::Directory("/srv/journal".into()));
    let mut follow = journal.follow(&JournalQuery::default()).unwrap();
    let mut messages = Vec::new();
    while let Some(entry) = tokio::time::timeout(TEST_DEADLINE, follow.next())
        .await
        .unwrap()
    {
        messages.push(entry.unwrap().message);
    }
    assert_eq!(messages.len(), 7);
    assert_eq!(messages[3], "second value");
    let seen = journal.spawn.seen();
    assert_eq!(seen[0].last(), Some(&OsString::from("--follow")));
    assert_eq!(seen[0][3], OsString::from("--directory=/srv/journal"));
}

#[tokio::test]
async fn a_follow_of_the_host_journal_reads_this_machines_entries_of_every_boot() {
    // journalctl 252's --follow implies the boot /proc names, which under
    // the unit's sandbox in a container is not the journal's (issue 16).
    let journal = journal_over_fixture(JournalSource::Host);
    journal
        .follow(&JournalQuery::default())
        .unwrap()
        .close()
        .await;
    let container = JournalQuery::agent_logs(Ident::new("iris").unwrap(), None);
    journal.follow(&container).unwrap().close().await;
    let seen = journal.spawn.seen();
    let host: Vec<_> = seen[0].iter().map(|a| a.to_string_lossy()).collect();
    // A machine without /etc/machine-id (some build containers) follows
    // the current boot, as journalctl alone would.
    let id = std::fs::read_to_string("/etc/machine-id").unwrap_or_default();
    let expected: Vec<String> = MachineId::parse(&id)
        .map(|id| {
            id.host_follow_args()
                .iter()
                .map(|a| a.to_string_lossy().into_owned())
                .collect()
        })
        .unwrap_or_default();
    assert_eq!(
        host[host.len() - expected.len()..],
        expected[..],
        "{host:?}"
    );
    assert!(host.iter().any(|a| a == "--follow"), "{host:?}");
    let agent: Vec<_> = seen[1].iter().map(|a| a.to_string_lossy()).collect();
    assert!(
        !agent
            .iter()
            .any(|a| a == "--merge" || a.starts_with("_MACHINE_ID")),
        "{agent:?}"
    );
}

#[tokio::test]
async fn a_grep_that_matches_nothing_is_an_empty_result_not_a_refusal() {
    // journalctl 252 exits 1 with nothing on stderr in that case; `false`
    // does the same.
    let journal = Journal::with_spawn(
        StandIn::new("false", Vec::<OsString>::new()),
        JournalSource::Host,
        Limits::default(),
    );
    let grep = JournalQuery::host_journal(&HostJournalRequest {
        grep: Some("no such line"),
        ..HostJournalRequest::default()
    })
    .unwrap();
    let entries = tokio::time::timeout(TEST_DEADLINE, journal.read(&grep))
        .await
        .unwrap()
        .unwrap();
    assert!(entries.is_empty());
    // Without a grep the same silent exit is a failure worth reporting.
    let err = journal.read(&JournalQuery::default()).await.unwrap_err();
    assert!(matches!(err, JournalError::Refused { .. }), "{err:?}");
}
