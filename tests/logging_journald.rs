//! The daemon's journald layer, as `hive_c0re::logging` configures it, end to
//! end without a running journald: its native-protocol datagrams are caught
//! on a journal socket of our own, written into a real journal file with
//! `systemd-journal-remote`, and queried with the real journalctl the way an
//! operator would: `journalctl -u hive-c0re.service AGENT=iris`.
//!
//! tracing-journald sends to the fixed path `/run/systemd/journal/socket`,
//! so the capturing half runs in a private mount namespace with a tmpfs on
//! `/run` (`unshare --mount`, root only): the host's `/run` is never touched.
//! That half is the `#[ignore]`d test below, re-executed by the outer tests
//! with `HIVE_LOGGING_CAPTURE` set; run alone it does nothing. It calls the
//! daemon's real entry point, `logging::init()`, with stderr on a file and
//! `JOURNAL_STREAM` naming that file (or another one), so the detection is
//! exercised too.
//!
//! What is left to the systemd test-bed: a real journald adding the trusted
//! `_SYSTEMD_UNIT` itself (here the capture adds it, as journald would), and
//! systemd setting `JOURNAL_STREAM` for a real service.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

use std::os::unix::fs::MetadataExt;
use std::os::unix::net::UnixDatagram;
use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

use hive_c0re::logging::LogTarget;

const CAPTURE_ENV: &str = "HIVE_LOGGING_CAPTURE";
const EXPECT_ENV: &str = "HIVE_LOGGING_EXPECT";
const INNER_TEST: &str = "capture_the_layers_datagrams_in_a_private_run";
const BOOT_ID: &str = "6b1a5e0f2c2d4f0b9d8e7f6a5b4c3d2e";

fn journal_remote() -> Option<PathBuf> {
    if std::env::var_os("HIVE_SKIP_REAL_JOURNAL").is_some() {
        eprintln!("skipped: HIVE_SKIP_REAL_JOURNAL is set");
        return None;
    }
    let found = [
        "/usr/lib/systemd/systemd-journal-remote",
        "/lib/systemd/systemd-journal-remote",
    ]
    .iter()
    .map(PathBuf::from)
    .find(|p| p.exists());
    assert!(
        found.is_some(),
        "systemd-journal-remote is missing: apt-get install systemd-journal-remote \
         (or set HIVE_SKIP_REAL_JOURNAL=1)"
    );
    found
}

/// Runs only when re-executed by the outer test, inside `unshare --mount`,
/// with stderr on a file and `JOURNAL_STREAM` set by the outer test.
#[test]
#[ignore = "helper: re-executed by the tests below in a private mount namespace"]
fn capture_the_layers_datagrams_in_a_private_run() {
    let Some(out) = std::env::var_os(CAPTURE_ENV).map(PathBuf::from) else {
        return;
    };
    let expect_journald = std::env::var(EXPECT_ENV).unwrap() == "journald";
    // Private /run: the mount namespace was made private by unshare.
    let mounted = Command::new("mount")
        .args(["-t", "tmpfs", "hive-test-run", "/run"])
        .status()
        .unwrap();
    assert!(mounted.success(), "mount tmpfs on /run: {mounted}");
    std::fs::create_dir_all("/run/systemd/journal").unwrap();
    let socket = UnixDatagram::bind("/run/systemd/journal/socket").unwrap();
    socket.set_nonblocking(true).unwrap();

    // The daemon's own entry point: detection, layer, global subscriber.
    let target = hive_c0re::logging::init().unwrap();
    if expect_journald {
        assert_eq!(target, LogTarget::Journald);
    } else {
        assert_eq!(
            target,
            LogTarget::Stderr {
                journal_error: None
            }
        );
    }
    let name = "iris";
    tracing::info!(agent = %name, "agent started");
    let span = tracing::info_span!("request", agent = %"juno");
    span.in_scope(|| tracing::warn!("inside a span"));
    tracing::error!(request_id = 7, "no agent here");
    tracing::debug!(agent = %name, "below the default level");

    // The layer sends each event synchronously, so every datagram is already
    // queued: drain without waiting. The probe sent when the layer is built
    // is empty and skipped. journald would add the trusted fields; the
    // capture adds the ones the query needs.
    let mut export = Vec::new();
    let mut buf = vec![0u8; 64 * 1024];
    let mut entries = 0u64;
    while let Ok(n) = socket.recv(&mut buf) {
        if n == 0 {
            continue;
        }
        entries += 1;
        let time = 1_796_043_000_000_000u64 + entries;
        export.extend_from_slice(
            format!(
                "__REALTIME_TIMESTAMP={time}\n__MONOTONIC_TIMESTAMP={time}\n_BOOT_ID={BOOT_ID}\n\
                 _SYSTEMD_UNIT=hive-c0re.service\n_PID=812\n"
            )
            .as_bytes(),
        );
        export.extend_from_slice(&buf[..n]);
        if !export.ends_with(b"\n") {
            export.push(b'\n');
        }
        export.push(b'\n');
    }
    assert_eq!(entries, if expect_journald { 3 } else { 0 });
    std::fs::write(out, export).unwrap();
}

/// Re-run this binary's capture helper in a private mount namespace with
/// stderr on `<dir>/stderr.log` and `JOURNAL_STREAM` naming that file (or,
/// with `journald == false`, another file). Returns the export file.
fn capture(dir: &Path, journald: bool) -> PathBuf {
    let stderr_path = dir.join("stderr.log");
    let stderr = std::fs::File::create(&stderr_path).unwrap();
    let named = if journald {
        stderr_path.clone()
    } else {
        let other = dir.join("other.log");
        std::fs::write(&other, b"").unwrap();
        other
    };
    let meta = std::fs::metadata(&named).unwrap();
    let journal_stream = format!("{}:{}", meta.dev(), meta.ino());
    let export = dir.join("daemon.export");
    let status = Command::new("unshare")
        .args(["--mount", "--propagation", "private", "--"])
        .arg(std::env::current_exe().unwrap())
        .args([
            "--exact",
            INNER_TEST,
            "--ignored",
            "--nocapture",
            "--test-threads=1",
        ])
        .env(CAPTURE_ENV, &export)
        .env(EXPECT_ENV, if journald { "journald" } else { "stderr" })
        .env("JOURNAL_STREAM", journal_stream)
        .env("RUST_LOG", "info")
        .stdout(Stdio::null())
        .stderr(stderr)
        .status()
        .unwrap();
    assert!(
        status.success(),
        "capture failed: {}",
        std::fs::read_to_string(&stderr_path).unwrap_or_default()
    );
    export
}

fn journalctl_json(dir: &Path, matches: &[&str]) -> Vec<serde_json::Value> {
    let output = Command::new("journalctl")
        .arg(format!("--directory={}", dir.display()))
        .args(["--no-pager", "--output=json", "--unit=hive-c0re.service"])
        .args(matches)
        .output()
        .unwrap();
    assert!(output.status.success(), "{output:?}");
    String::from_utf8(output.stdout)
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect()
}

fn preconditions() -> Option<PathBuf> {
    let remote = journal_remote()?;
    assert!(
        nix::unistd::geteuid().is_root(),
        "needs root for unshare --mount (or set HIVE_SKIP_REAL_JOURNAL=1)"
    );
    Some(remote)
}

#[test]
fn when_stderr_is_the_journal_stream_agent_fields_are_found_by_journalctl_agent_match() {
    let Some(remote) = preconditions() else {
        return;
    };
    let dir = tempfile::tempdir().unwrap();
    let export = capture(dir.path(), true);

    let journal_dir = dir.path().join("journal");
    std::fs::create_dir(&journal_dir).unwrap();
    let written = Command::new(remote)
        .arg(format!(
            "--output={}",
            journal_dir.join("d.journal").display()
        ))
        .arg(&export)
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(written.success());

    let iris = journalctl_json(&journal_dir, &["AGENT=iris"]);
    assert_eq!(iris.len(), 1, "{iris:?}");
    assert_eq!(iris[0]["MESSAGE"], "agent started");
    assert_eq!(iris[0]["PRIORITY"], "6", "INFO is syslog info, not notice");
    assert_eq!(iris[0]["SYSLOG_IDENTIFIER"], "hive-c0re");

    let juno = journalctl_json(&journal_dir, &["AGENT=juno"]);
    assert_eq!(
        juno.len(),
        1,
        "a span's agent field reaches its events: {juno:?}"
    );
    assert_eq!(juno[0]["MESSAGE"], "inside a span");
    assert_eq!(juno[0]["PRIORITY"], "4");

    assert!(
        journalctl_json(&journal_dir, &["F_AGENT=iris"]).is_empty(),
        "no F_ prefix"
    );
    let other = journalctl_json(&journal_dir, &["REQUEST_ID=7"]);
    assert_eq!(other.len(), 1);
    assert_eq!(other[0]["PRIORITY"], "3");
    assert_eq!(
        journalctl_json(&journal_dir, &[]).len(),
        3,
        "debug is filtered out"
    );
    let text = std::fs::read_to_string(dir.path().join("stderr.log")).unwrap();
    assert!(
        !text.contains("agent started"),
        "not also on stderr: {text}"
    );
}

#[test]
fn when_journal_stream_names_another_file_logs_are_text_on_stderr() {
    // A child of a journald-logged service inherits JOURNAL_STREAM even after
    // its stderr was redirected: the variable alone must not win.
    if preconditions().is_none() {
        return;
    }
    let dir = tempfile::tempdir().unwrap();
    capture(dir.path(), false);
    let text = std::fs::read_to_string(dir.path().join("stderr.log")).unwrap();
    let line = text
        .lines()
        .find(|l| l.contains("agent started"))
        .unwrap_or_else(|| panic!("no text line on stderr: {text}"));
    assert!(
        line.contains("INFO") && line.contains("agent=iris"),
        "{line}"
    );
    assert!(!text.contains("below the default level"), "{text}");
}
