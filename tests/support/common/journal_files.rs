//! Journal files for tests: entries in journald's export format, turned
//! into real `*.journal` files by `systemd-journal-remote`, for the real
//! journalctl to read through `--directory=` (the daemon's
//! `journal_directory`).

use std::path::{Path, PathBuf};
use std::process::{Command, Stdio};

pub const BOOT_ID: &str = "6b1a5e0f2c2d4f0b9d8e7f6a5b4c3d2e";

/// A field value in the export format: text, or bytes (length-prefixed).
pub enum Value<'a> {
    Text(&'a str),
    Bytes(&'a [u8]),
}

pub struct Entry<'a> {
    pub realtime_us: u64,
    pub fields: Vec<(&'a str, Value<'a>)>,
}

fn export(entries: &[Entry<'_>]) -> Vec<u8> {
    let mut out = Vec::new();
    for entry in entries {
        // One boot for every file: journalctl orders entries of the same
        // boot by their monotonic time, so it must grow with the wall clock
        // (a later file restarting at 1 would sort before what -f has shown).
        out.extend_from_slice(
            format!(
                "__REALTIME_TIMESTAMP={0}\n__MONOTONIC_TIMESTAMP={0}\n_BOOT_ID={BOOT_ID}\n",
                entry.realtime_us
            )
            .as_bytes(),
        );
        for (name, value) in &entry.fields {
            match value {
                Value::Text(text) => out.extend_from_slice(format!("{name}={text}\n").as_bytes()),
                Value::Bytes(bytes) => {
                    out.extend_from_slice(format!("{name}\n").as_bytes());
                    out.extend_from_slice(&(bytes.len() as u64).to_le_bytes());
                    out.extend_from_slice(bytes);
                    out.push(b'\n');
                }
            }
        }
        out.push(b'\n');
    }
    out
}

fn tool(candidates: &[&str]) -> Option<PathBuf> {
    candidates.iter().map(PathBuf::from).find(|p| p.exists())
}

/// `None` when the run was asked to skip; panics naming the package otherwise.
pub fn journal_remote() -> Option<PathBuf> {
    if std::env::var_os("HIVE_SKIP_REAL_JOURNAL").is_some() {
        eprintln!("skipped: HIVE_SKIP_REAL_JOURNAL is set");
        return None;
    }
    let found = tool(&[
        "/usr/lib/systemd/systemd-journal-remote",
        "/lib/systemd/systemd-journal-remote",
    ]);
    assert!(
        found.is_some(),
        "systemd-journal-remote is missing: apt-get install systemd-journal-remote \
         (or set HIVE_SKIP_REAL_JOURNAL=1)"
    );
    found
}

/// Write `entries` as the journal file `<dir>/<name>.journal`.
pub fn write_journal(remote: &Path, dir: &Path, name: &str, entries: &[Entry<'_>]) {
    let input = dir.join(format!("{name}.export"));
    std::fs::write(&input, export(entries)).unwrap();
    let status = Command::new(remote)
        .arg(format!(
            "--output={}",
            dir.join(format!("{name}.journal")).display()
        ))
        .arg(&input)
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .unwrap();
    assert!(status.success(), "systemd-journal-remote failed: {status}");
    std::fs::remove_file(input).unwrap();
}

#[allow(clippy::disallowed_methods)] // --since=-1h is relative to the real clock
pub fn now_us() -> u64 {
    std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .unwrap()
        .as_micros() as u64
}

pub fn text<'a>(name: &'a str, value: &'a str) -> (&'a str, Value<'a>) {
    (name, Value::Text(value))
}
