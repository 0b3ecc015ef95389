use std::time::Instant;

use tokio::io::AsyncWriteExt;

use super::super::stand_in::StandIn;
use super::*;

/// Every test here is bounded: a regression that hangs fails instead.
const TEST_DEADLINE: Duration = Duration::from_secs(10);

async fn bounded<T>(future: impl std::future::Future<Output = T>) -> T {
    tokio::time::timeout(TEST_DEADLINE, future)
        .await
        .expect("test exceeded its deadline")
}

fn limits(timeout_ms: u64, max_output: usize) -> Limits {
    Limits {
        timeout: Duration::from_millis(timeout_ms),
        max_output,
    }
}

#[tokio::test]
async fn a_reader_that_outlives_the_timeout_is_killed_and_the_error_says_timeout() {
    let sleep = StandIn::new("sleep", ["30"]);
    let started = Instant::now();
    let err = bounded(run_to_end(&sleep, &[], limits(300, 1024)))
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::TimedOut { .. }), "{err:?}");
    assert!(
        started.elapsed() < Duration::from_secs(5),
        "killed, not waited for"
    );
    let message = err.to_string();
    assert!(
        message.contains("did not finish within 0.3 s and was killed"),
        "{message}"
    );
}

#[tokio::test]
async fn a_reader_that_writes_past_the_cap_is_killed_and_the_error_says_output() {
    // `yes` never stops on its own: only the cap can end this read.
    let yes = StandIn::new("yes", Vec::<OsString>::new());
    let err = bounded(run_to_end(&yes, &[], limits(10_000, 64 * 1024)))
        .await
        .unwrap_err();
    assert!(
        matches!(err, JournalError::OutputTooLarge { limit: 65536, .. }),
        "{err:?}"
    );
    assert!(
        err.to_string()
            .contains("wrote more than 65536 bytes and was killed")
    );
}

#[tokio::test]
async fn output_of_exactly_the_cap_is_accepted_and_one_byte_more_is_not() {
    let dir = tempfile::tempdir().unwrap();
    let file = dir.path().join("out");
    std::fs::write(&file, b"0123456789").unwrap();
    let cat = StandIn::new("cat", [&file]);
    let output = bounded(run_to_end(&cat, &[], limits(10_000, 10)))
        .await
        .unwrap();
    assert_eq!(output, b"0123456789");
    let err = bounded(run_to_end(&cat, &[], limits(10_000, 9)))
        .await
        .unwrap_err();
    assert!(
        matches!(err, JournalError::OutputTooLarge { limit: 9, .. }),
        "{err:?}"
    );
}

#[tokio::test]
async fn a_reader_that_exits_non_zero_is_refused_with_its_own_stderr() {
    let ls = StandIn::new("ls", ["/nonexistent-hive-c0re-path"]);
    let err = bounded(run_to_end(&ls, &[], Limits::default()))
        .await
        .unwrap_err();
    let JournalError::Refused { stderr, status, .. } = &err else {
        panic!("expected Refused, got {err:?}");
    };
    assert!(!status.success());
    assert!(stderr.contains("nonexistent-hive-c0re-path"), "{stderr}");
    assert!(err.to_string().contains(stderr.as_str()));
}

#[tokio::test]
async fn a_missing_program_is_a_spawn_error_naming_it() {
    let missing = Journalctl::new("/nonexistent/journalctl");
    let err = bounded(run_to_end(&missing, &[], Limits::default()))
        .await
        .unwrap_err();
    assert!(matches!(err, JournalError::Spawn { .. }), "{err:?}");
    assert_eq!(err.to_string(), "cannot start /nonexistent/journalctl");
}

/// A stand-in for `journalctl --follow`: `cat` on a FIFO the test writes.
struct FollowFixture {
    _dir: tempfile::TempDir,
    fifo: PathBuf,
}

impl FollowFixture {
    fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let fifo = dir.path().join("journal.fifo");
        nix::unistd::mkfifo(&fifo, nix::sys::stat::Mode::from_bits_truncate(0o600)).unwrap();
        Self { _dir: dir, fifo }
    }

    fn stand_in(&self) -> StandIn {
        StandIn::new("cat", [&self.fifo])
    }

    /// Opens the writing end; completes once `cat` has opened the reading end.
    async fn writer(&self) -> tokio::fs::File {
        tokio::fs::OpenOptions::new()
            .write(true)
            .open(&self.fifo)
            .await
            .unwrap()
    }
}

async fn write_line(writer: &mut tokio::fs::File, line: &str) {
    try_write_line(writer, line).await.unwrap();
}

/// One write of `line\n` (atomic on a pipe below PIPE_BUF).
async fn try_write_line(writer: &mut tokio::fs::File, line: &str) -> std::io::Result<()> {
    writer.write_all(format!("{line}\n").as_bytes()).await?;
    writer.flush().await
}

#[tokio::test]
async fn a_follow_yields_each_entry_as_it_is_written_and_ends_with_the_process() {
    let fixture = FollowFixture::new();
    let mut follow = follow(&fixture.stand_in(), &[], Limits::default()).unwrap();
    let mut writer = bounded(fixture.writer()).await;
    write_line(&mut writer, r#"{"MESSAGE":"first"}"#).await;
    let first = bounded(follow.next()).await.unwrap().unwrap();
    assert_eq!(first.message, "first");
    // Blank and non-JSON lines are skipped, the next entry still arrives.
    write_line(&mut writer, "").await;
    write_line(&mut writer, "not json").await;
    write_line(&mut writer, r#"{"MESSAGE":[115,101,99,255]}"#).await;
    let second = bounded(follow.next()).await.unwrap().unwrap();
    assert_eq!(second.message, "sec\u{fffd}");
    drop(writer);
    assert!(
        bounded(follow.next()).await.is_none(),
        "cat exited 0: the stream ends"
    );
}

#[tokio::test]
async fn closing_a_follow_kills_and_reaps_the_reader() {
    let fixture = FollowFixture::new();
    let follow = follow(&fixture.stand_in(), &[], Limits::default()).unwrap();
    let _writer = bounded(fixture.writer()).await;
    let pid = follow.pid().unwrap();
    assert!(Path::new(&format!("/proc/{pid}")).exists());
    bounded(follow.close()).await;
    assert!(
        !Path::new(&format!("/proc/{pid}")).exists(),
        "the reader {pid} is still there after close"
    );
}

#[tokio::test]
async fn dropping_a_follow_kills_the_reader() {
    let fixture = FollowFixture::new();
    let follow = follow(&fixture.stand_in(), &[], Limits::default()).unwrap();
    let _writer = bounded(fixture.writer()).await;
    let proc_dir = PathBuf::from(format!("/proc/{}", follow.pid().unwrap()));
    drop(follow);
    // No event tells us a foreign pid is gone (no pidfd in nix 0.32), so
    // poll /proc briefly; the bound turns a leak into a failure.
    bounded(async {
        while proc_dir.exists() {
            tokio::time::sleep(Duration::from_millis(10)).await;
        }
    })
    .await;
}

#[tokio::test]
async fn a_follow_line_longer_than_the_cap_ends_the_stream_with_an_output_error() {
    let fixture = FollowFixture::new();
    let mut follow = follow(&fixture.stand_in(), &[], limits(0, 100)).unwrap();
    let mut writer = bounded(fixture.writer()).await;
    // The reader may be killed before the flush returns: EPIPE is fine.
    let long = format!(r#"{{"MESSAGE":"{}"}}"#, "x".repeat(200));
    let _ = try_write_line(&mut writer, &long).await;
    let err = bounded(follow.next()).await.unwrap().unwrap_err();
    assert!(
        matches!(err, JournalError::OutputTooLarge { limit: 100, .. }),
        "{err:?}"
    );
    assert!(bounded(follow.next()).await.is_none());
}

#[tokio::test]
async fn a_follow_whose_reader_fails_ends_with_its_stderr() {
    let ls = StandIn::new("ls", ["/nonexistent-hive-c0re-path"]);
    let mut follow = follow(&ls, &[], Limits::default()).unwrap();
    let err = bounded(follow.next()).await.unwrap().unwrap_err();
    assert!(
        err.to_string().contains("nonexistent-hive-c0re-path"),
        "{err}"
    );
    assert!(bounded(follow.next()).await.is_none());
}
