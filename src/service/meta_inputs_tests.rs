//! `update_meta_inputs` on the fake driver, with a stand-in `nix` (a
//! script that records its argv and moves the lock's `narHash`).

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};

use super::*;
use crate::hive::approvals::NewApproval;
use crate::testing::{config_in, git, hive_at, id, manager_events};
use crate::wire::host::{ApprovalKind, ApprovalStatus};

const LOCK: &str = r#"{"nodes":{"nixpkgs":{"locked":{"narHash":"sha256-OLD","owner":"NixOS","repo":"nixpkgs","rev":"0123456789abcdef0123456789abcdef01234567","type":"github"},"original":{"owner":"NixOS","repo":"nixpkgs","type":"github"}},"root":{"inputs":{"nixpkgs":"nixpkgs"}}},"root":"root","version":7}
"#;

/// A stand-in `nix` in `dir`: appends its argv to `dir/argv`; with `ok`
/// it moves the lock's narHash in the flake named after `--flake`, else
/// it fails with an error on stderr.
fn stand_in_nix(dir: &Path, ok: bool) -> PathBuf {
    let script = dir.join(if ok { "nix" } else { "nix-failing" });
    let d = dir.display();
    let body = if ok {
        "sed -i 's/sha256-OLD/sha256-NEW/' \"$6/flake.lock\"\n".to_owned()
    } else {
        "echo \"error: cannot fetch input 'nixpkgs'\" >&2; exit 1\n".to_owned()
    };
    std::fs::write(
        &script,
        format!("#!/bin/sh\necho \"$*\" >> {d}/argv\n{body}"),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// A nixos-profile hive whose meta flake (a git repo with a committed
/// lock) is `dir/meta`, `nix` the stand-in, and `alice` spawned.
async fn nixos_hive(ok: bool) -> (Hive, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let meta = dir.path().join("meta");
    std::fs::create_dir_all(&meta).unwrap();
    std::fs::write(meta.join("flake.nix"), "{ outputs = _: { }; }\n").unwrap();
    std::fs::write(meta.join("flake.lock"), LOCK).unwrap();
    git(&meta, &["init", "-q", "-b", "main"]);
    git(&meta, &["add", "-A"]);
    git(&meta, &["commit", "-q", "-m", "meta"]);
    let mut config = config_in(dir.path());
    config.profile = crate::containers::Profile::Nixos;
    config.meta_flake = Some(meta.clone());
    config.nix_command = vec![stand_in_nix(dir.path(), ok).display().to_string()];
    let (hive, _driver) = hive_at(config, 1000);
    hive.spawn(&id("alice")).await.unwrap();
    (hive, dir, meta)
}

async fn ask(hive: &Hive, inputs: &str) -> Result<Approval, HiveError> {
    hive.request_approval(NewApproval {
        agent: id("ruth"),
        kind: ApprovalKind::UpdateMetaInputs,
        commit_ref: inputs.into(),
        description: None,
    })
    .await
}

#[tokio::test]
async fn an_approved_update_runs_nix_flake_update_commits_the_lock_and_rebuilds_the_agents() {
    let (hive, dir, meta) = nixos_hive(true).await;
    let row = ask(&hive, r#"["nixpkgs"]"#).await.unwrap();
    assert!(!dir.path().join("argv").exists(), "no nix before approval");
    let done = hive.approve(row.id, None).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Approved);
    let argv = std::fs::read_to_string(dir.path().join("argv")).unwrap();
    assert_eq!(
        argv.trim(),
        format!(
            "--extra-experimental-features nix-command flakes flake update --flake {} nixpkgs",
            meta.display()
        )
    );
    // Committed by the hive, in the meta flake's repository.
    let log = git(&meta, &["log", "-1", "--format=%an %s", "--", "flake.lock"]);
    assert_eq!(
        log,
        format!("hive-c0re update_meta_inputs {}: nixpkgs", row.id)
    );
    assert_eq!(git(&meta, &["status", "--porcelain"]), "");
    let head = git(&meta, &["rev-parse", "HEAD"]);
    let note = done.note.unwrap();
    assert!(
        note.starts_with(&format!("flake.lock committed {}", &head[..12])),
        "{note}"
    );
    assert!(note.ends_with("rebuilt: alice"), "{note}");
    // alice was rebuilt against the new lock, and is current again.
    let events = manager_events(&hive, &["\"rebuilt\""]).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(
        events[0].contains(r#""agent":"alice","ok":true"#),
        "{events:?}"
    );
    assert!(!hive.require(&id("alice")).await.unwrap().needs_update);
}

#[tokio::test]
async fn an_update_that_changes_nothing_commits_and_rebuilds_nothing() {
    let (hive, dir, meta) = nixos_hive(true).await;
    // The stand-in already ran once by hand: the lock holds NEW.
    let lock = LOCK.replace("sha256-OLD", "sha256-NEW");
    std::fs::write(meta.join("flake.lock"), &lock).unwrap();
    git(&meta, &["commit", "-q", "-am", "by hand"]);
    let before = git(&meta, &["rev-parse", "HEAD"]);
    let row = ask(&hive, "[]").await.unwrap();
    let done = hive.approve(row.id, None).await.unwrap();
    assert_eq!(
        done.note.as_deref(),
        Some("every input: already current; nothing rebuilt")
    );
    assert_eq!(git(&meta, &["rev-parse", "HEAD"]), before);
    let argv = std::fs::read_to_string(dir.path().join("argv")).unwrap();
    assert!(
        argv.trim()
            .ends_with(&format!("--flake {}", meta.display())),
        "{argv}"
    );
}

#[tokio::test]
async fn a_failed_nix_run_fails_the_row_with_its_error_and_commits_nothing() {
    let (hive, _dir, meta) = nixos_hive(false).await;
    let before = git(&meta, &["rev-parse", "HEAD"]);
    let row = ask(&hive, r#"["nixpkgs"]"#).await.unwrap();
    let err = hive.approve(row.id, None).await.unwrap_err().to_string();
    assert!(err.contains("cannot fetch input 'nixpkgs'"), "{err}");
    assert_eq!(git(&meta, &["rev-parse", "HEAD"]), before);
    assert!(manager_events(&hive, &["\"rebuilt\""]).await.is_empty());
}

#[tokio::test]
async fn without_a_meta_flake_the_request_is_refused_naming_the_key_and_leaves_no_row() {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.profile = crate::containers::Profile::Nixos;
    let (hive, _driver) = hive_at(config, 1000);
    let err = ask(&hive, r#"["nixpkgs"]"#).await.unwrap_err();
    assert!(matches!(err, HiveError::NotOffered(_)), "{err:?}");
    assert!(err.to_string().contains("`meta_flake`"), "{err}");
    assert!(hive.approvals().await.unwrap().is_empty());
}
