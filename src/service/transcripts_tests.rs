use std::io::Write;
use std::path::PathBuf;

use super::*;
use crate::testing::{config_in, hive_at, id};
use crate::wire::turns::{UsageBy, UsageRow};

const T0: i64 = 1_796_040_000;

fn assistant(id: &str, input: u64, output: u64) -> String {
    format!(
        "{{\"type\":\"assistant\",\"sessionId\":\"s1\",\"message\":{{\"id\":\"{id}\",\
         \"model\":\"claude-test\",\"role\":\"assistant\",\"content\":[],\
         \"usage\":{{\"input_tokens\":{input},\"output_tokens\":{output},\
         \"cache_read_input_tokens\":100,\"cache_creation_input_tokens\":10}}}}}}\n"
    )
}

fn stop(path: &str) -> String {
    format!(
        r#"{{"hook_event_name":"Stop","session_id":"s1","transcript_path":{}}}"#,
        serde_json::to_string(path).unwrap()
    )
}

/// A hive with agent `alice` spawned, and her state directory on the host.
async fn hive_with_alice(dir: &tempfile::TempDir) -> (Hive, PathBuf) {
    let (hive, _driver) = hive_at(config_in(dir.path()), T0);
    let alice = id("alice");
    hive.spawn(&alice).await.unwrap();
    let state = hive.config().agent_state_dir(&alice);
    std::fs::create_dir_all(state.join(".claude/projects/-var-lib-hive")).unwrap();
    (hive, state)
}

const INSIDE: &str = "/var/lib/hive/.claude/projects/-var-lib-hive/s1.jsonl";

fn append(state: &std::path::Path, text: &str) {
    let mut f = std::fs::OpenOptions::new()
        .create(true)
        .append(true)
        .open(state.join(".claude/projects/-var-lib-hive/s1.jsonl"))
        .unwrap();
    f.write_all(text.as_bytes()).unwrap();
}

async fn alices_usage(hive: &Hive) -> Option<UsageRow> {
    let rows = hive.usage().sums(None, UsageBy::Agent).await.unwrap();
    rows.into_iter().find(|r| r.key == "alice")
}

async fn interactive_turns(hive: &Hive) -> Vec<TurnReport> {
    let rows = hive.usage().turns(&id("alice"), 100).await.unwrap();
    rows.into_iter()
        .map(|r| r.report)
        .filter(|r| r.outcome == TurnOutcome::Interactive)
        .collect()
}

#[tokio::test]
async fn a_message_repeated_per_content_block_is_counted_once_and_shows_in_usage() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, state) = hive_with_alice(&dir).await;
    append(
        &state,
        &[
            "{\"type\":\"user\",\"message\":{\"role\":\"user\",\"content\":\"hello\"}}\n".into(),
            assistant("msg_a", 50, 3),
            assistant("msg_a", 50, 20),
            assistant("msg_a", 50, 20),
        ]
        .concat(),
    );
    hive.hook_event(&id("alice"), stop(INSIDE)).await.unwrap();
    let row = alices_usage(&hive).await.expect("alice's usage row");
    assert_eq!(row.turns, 1);
    assert_eq!(row.usage.input_tokens, 50);
    assert_eq!(row.usage.output_tokens, 20);
    assert_eq!(row.usage.cache_read_input_tokens, 100);
    assert_eq!(row.usage.cache_creation_input_tokens, 10);
    assert_eq!(row.cost_micro_usd, 0, "a transcript has no cost");
    let turns = interactive_turns(&hive).await;
    assert_eq!(turns.len(), 1);
    assert_eq!(turns[0].model.as_deref(), Some("claude-test"));
    assert_eq!(turns[0].session_id.as_deref(), Some("s1"));
    assert_eq!(turns[0].cost_micro_usd, None);
    assert_eq!(turns[0].num_turns, Some(1));
    // The same hook again: nothing new.
    hive.hook_event(&id("alice"), stop(INSIDE)).await.unwrap();
    assert_eq!(alices_usage(&hive).await.unwrap().turns, 1);
}

#[tokio::test]
async fn a_second_hook_counts_only_new_messages_and_a_half_written_line_waits() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, state) = hive_with_alice(&dir).await;
    let alice = id("alice");
    let second = assistant("msg_b", 7, 7);
    let (head, tail) = second.split_at(40);
    append(&state, &format!("{}{head}", assistant("msg_a", 1, 1)));
    assert_eq!(
        hive.count_transcript(&alice, INSIDE, None).await.unwrap(),
        TranscriptRead::Counted(1)
    );
    // The rest of msg_b, msg_a's content block repeated across the read's
    // end, and a new message.
    append(
        &state,
        &format!(
            "{tail}{}{}",
            assistant("msg_a", 1, 1),
            assistant("msg_c", 5, 5)
        ),
    );
    hive.hook_event(&alice, stop(INSIDE)).await.unwrap();
    let row = alices_usage(&hive).await.unwrap();
    assert_eq!(row.turns, 2);
    assert_eq!(row.usage.input_tokens, 1 + 7 + 5);
    assert_eq!(interactive_turns(&hive).await[0].num_turns, Some(2));
}

#[tokio::test]
async fn a_transcript_that_shrank_is_read_from_its_start_again() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, state) = hive_with_alice(&dir).await;
    let alice = id("alice");
    append(
        &state,
        &format!("{}{}", assistant("msg_a", 1, 1), assistant("msg_b", 1, 1)),
    );
    hive.count_transcript(&alice, INSIDE, None).await.unwrap();
    std::fs::write(
        state.join(".claude/projects/-var-lib-hive/s1.jsonl"),
        assistant("msg_z", 3, 3),
    )
    .unwrap();
    assert_eq!(
        hive.count_transcript(&alice, INSIDE, None).await.unwrap(),
        TranscriptRead::Counted(1)
    );
    assert_eq!(alices_usage(&hive).await.unwrap().usage.input_tokens, 5);
}

#[tokio::test]
async fn paths_outside_the_agents_state_or_through_a_symlink_are_not_read() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, state) = hive_with_alice(&dir).await;
    let alice = id("alice");
    // Real transcripts the bad paths could reach: another agent's, and
    // one outside every agent.
    let outside = dir.path().join("secret.jsonl");
    std::fs::write(&outside, assistant("msg_x", 1000, 1000)).unwrap();
    append(&state, &assistant("msg_a", 1, 1));
    std::os::unix::fs::symlink(&outside, state.join("link.jsonl")).unwrap();
    std::os::unix::fs::symlink(dir.path(), state.join("up")).unwrap();
    std::os::unix::fs::symlink(state.join(".claude"), state.join("claude-link")).unwrap();
    for (path, ignored) in [
        ("/etc/passwd", true),
        (
            "/var/lib/hive/../hive/.claude/projects/-var-lib-hive/s1.jsonl",
            true,
        ),
        ("/var/lib/hive-other/s1.jsonl", true),
        ("relative/s1.jsonl", true),
        ("/var/lib/hive/link.jsonl", false),
        ("/var/lib/hive/up/secret.jsonl", false),
        // Even a symlink that stays inside is not followed.
        (
            "/var/lib/hive/claude-link/projects/-var-lib-hive/s1.jsonl",
            false,
        ),
    ] {
        let read = hive.count_transcript(&alice, path, None).await.unwrap();
        match read {
            TranscriptRead::Ignored(_) if ignored => {}
            TranscriptRead::Unreadable(_) if !ignored => {}
            other => panic!("{path}: {other:?}"),
        }
        hive.hook_event(&alice, stop(path)).await.unwrap();
    }
    assert_eq!(alices_usage(&hive).await, None, "nothing was counted");
    let cursors: i64 = hive
        .store()
        .read(|c| Ok(c.query_row("SELECT COUNT(*) FROM transcript_cursors", [], |r| r.get(0))?))
        .await
        .unwrap();
    assert_eq!(cursors, 0, "nothing was read");
}

#[tokio::test]
async fn a_harness_turns_hooks_leave_its_transcript_to_report_turn() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, state) = hive_with_alice(&dir).await;
    let alice = id("alice");
    append(&state, &assistant("msg_a", 40, 4));
    hive.hook_event_from(&alice, stop(INSIDE), true)
        .await
        .unwrap();
    assert_eq!(alices_usage(&hive).await, None);
    // The harness's report is the one count of that turn.
    let report = TurnReport {
        started_at_ms: T0 * 1000,
        ended_at_ms: T0 * 1000 + 5,
        message_ids: vec![],
        session_id: Some("s1".into()),
        model: Some("claude-test".into()),
        outcome: TurnOutcome::Ok,
        error: None,
        tools: vec![],
        usage: Some(crate::wire::turns::TurnUsage {
            input_tokens: 40,
            output_tokens: 4,
            ..Default::default()
        }),
        cost_micro_usd: Some(9),
        num_turns: Some(1),
        duration_ms: None,
        duration_api_ms: None,
    };
    hive.usage()
        .report_turn(&alice, report.clone())
        .await
        .unwrap();
    let row = alices_usage(&hive).await.unwrap();
    assert_eq!((row.turns, row.usage.input_tokens), (1, 40));
    // And no harness may pass its turn off as the daemon's own kind.
    let forged = TurnReport {
        outcome: TurnOutcome::Interactive,
        ..report
    };
    assert!(hive.usage().report_turn(&alice, forged).await.is_err());
}

#[tokio::test]
async fn racing_reads_of_the_same_lines_count_them_once() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, state) = hive_with_alice(&dir).await;
    let alice = id("alice");
    append(&state, &assistant("msg_a", 2, 2));
    let (a, b) = tokio::join!(
        hive.count_transcript(&alice, INSIDE, None),
        hive.count_transcript(&alice, INSIDE, None)
    );
    let mut reads = [a.unwrap(), b.unwrap()];
    reads.sort_by_key(|r| format!("{r:?}"));
    // Either the second read started from the first one's cursor (nothing
    // new), or from the same place and lost.
    assert!(
        reads == [TranscriptRead::Counted(0), TranscriptRead::Counted(1)]
            || reads == [TranscriptRead::Counted(1), TranscriptRead::Raced],
        "{reads:?}"
    );
    assert_eq!(alices_usage(&hive).await.unwrap().turns, 1);
}

/// The log lines written while `f` runs on this thread.
#[derive(Clone, Default)]
struct Captured(std::sync::Arc<std::sync::Mutex<Vec<u8>>>);

impl Write for Captured {
    fn write(&mut self, buf: &[u8]) -> std::io::Result<usize> {
        self.0.lock().unwrap().extend_from_slice(buf);
        Ok(buf.len())
    }
    fn flush(&mut self) -> std::io::Result<()> {
        Ok(())
    }
}

#[tokio::test]
async fn an_ignored_path_is_logged_once_naming_the_agent_and_the_path() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), T0);
    let mallory = id("mallory");
    hive.spawn(&mallory).await.unwrap();
    let captured = Captured::default();
    let writer = captured.clone();
    let subscriber = tracing_subscriber::fmt()
        .with_writer(move || writer.clone())
        .with_ansi(false)
        .finish();
    let _on = tracing::subscriber::set_default(subscriber);
    // Another test's thread may have registered the warning's callsite
    // while this subscriber was not yet known, caching "never" for it (a
    // race in tracing's interest cache): ask every callsite again.
    tracing::callsite::rebuild_interest_cache();
    for _ in 0..3 {
        hive.hook_event(&mallory, stop("/etc/shadow"))
            .await
            .unwrap();
    }
    let log = String::from_utf8(captured.0.lock().unwrap().clone()).unwrap();
    let lines: Vec<&str> = log
        .lines()
        .filter(|l| l.contains("transcript_path"))
        .collect();
    assert_eq!(lines.len(), 1, "{log}");
    assert!(
        lines[0].contains("mallory") && lines[0].contains("/etc/shadow"),
        "{log}"
    );
}
