//! The nixos profile's deploy on the fake driver, with a stand-in
//! `nixos_build_command` (a script that records its argv and the
//! `agent.nix` it was given, and prints a fake system path).

use std::os::unix::fs::PermissionsExt as _;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use super::*;
use crate::containers::ContainerDriver as _;
use crate::containers::fake::FakeDriver;
use crate::hive::approvals::NewApproval;
use crate::hive::proposal::Tag;
use crate::testing::{commit, config_in, hive_at, id, init_config_approved};
use crate::wire::host::{Approval, ApprovalKind, ApprovalStatus};

/// A stand-in build command in `dir`: appends its argv to `dir/argv`,
/// copies the tree's `agent.nix` to `dir/agent.nix`, fails (stderr) when
/// that holds `BROKEN`, else prints `/nix/store/fake-<sha>-system` last.
fn stand_in(dir: &Path) -> PathBuf {
    let script = dir.join("build-system");
    let d = dir.display();
    std::fs::write(
        &script,
        format!(
            "#!/bin/sh\necho \"$*\" >> {d}/argv\n\
             [ -n \"$2\" ] && cat \"$2/agent.nix\" > {d}/agent.nix\n\
             if grep -q BROKEN \"$2/agent.nix\" 2>/dev/null; then\n\
             echo 'evaluating' >&2; echo \"error: undefined variable 'nope'\" >&2; exit 1; fi\n\
             echo building\necho /nix/store/fake-$3-system\n"
        ),
    )
    .unwrap();
    std::fs::set_permissions(&script, std::fs::Permissions::from_mode(0o755)).unwrap();
    script
}

/// A nixos-profile hive with `alice` spawned (seeded `deployed/0`, no
/// `agent.nix`), running; the stand-in's directory.
async fn nixos_alice() -> (Hive, Arc<FakeDriver>, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let mut config = config_in(dir.path());
    config.profile = crate::containers::Profile::Nixos;
    config.nixos_build_command = vec![stand_in(dir.path()).display().to_string()];
    let (hive, driver) = hive_at(config, 1000);
    hive.spawn(&id("alice")).await.unwrap();
    let proposed = hive.repos().proposed(&id("alice"));
    (hive, driver, dir, proposed)
}

async fn apply(hive: &Hive, sha: &str) -> Approval {
    hive.request_approval(NewApproval {
        agent: id("alice"),
        kind: ApprovalKind::ApplyCommit,
        commit_ref: sha.into(),
        description: None,
    })
    .await
    .unwrap()
}

fn argv(dir: &Path) -> Vec<String> {
    std::fs::read_to_string(dir.join("argv"))
        .unwrap_or_default()
        .lines()
        .map(str::to_owned)
        .collect()
}

const AGENT_NIX: &str = "{ pkgs, ... }: { environment.systemPackages = [ pkgs.jq ]; }\n";

#[tokio::test]
async fn an_approved_agent_nix_is_built_from_the_exported_tree_and_the_container_switched_to_it() {
    let (hive, driver, dir, proposed) = nixos_alice().await;
    let alice = id("alice");
    assert!(
        argv(dir.path()).is_empty(),
        "a seeded agent without agent.nix builds nothing of its own"
    );
    let sha = commit(&proposed, &[("agent.nix", AGENT_NIX)]);
    let row = apply(&hive, &sha).await;
    assert!(
        argv(dir.path()).is_empty(),
        "nothing is built before approval"
    );
    let done = hive.approve(row.id, None).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Approved);
    let calls = argv(dir.path());
    assert_eq!(calls.len(), 1, "{calls:?}");
    let args: Vec<&str> = calls[0].split(' ').collect();
    assert_eq!((args[0], args[2]), ("h-alice", sha.as_str()));
    let tree = Path::new(args[1]);
    assert!(
        tree.starts_with(dir.path().join("state/build")),
        "a hive-owned export: {tree:?}"
    );
    assert!(!tree.starts_with(&proposed));
    assert_eq!(
        std::fs::read_to_string(dir.path().join("agent.nix")).unwrap(),
        AGENT_NIX
    );
    let spec = driver.spec_of(&alice).unwrap();
    assert_eq!(
        spec.system,
        Some(PathBuf::from(format!("/nix/store/fake-{sha}-system")))
    );
    assert!(driver.state(&alice).unwrap().is_running());
    assert!(
        hive.repos()
            .has_tag(&alice, &Tag::Deployed.name(row.id))
            .await
            .unwrap()
    );
    // A rebuild builds the deployed commit again, from the deployed tree.
    hive.rebuild(&alice).await.unwrap();
    let calls = argv(dir.path());
    assert_eq!(calls.len(), 2, "{calls:?}");
    assert!(calls[1].starts_with("h-alice "), "{calls:?}");
    assert!(calls[1].ends_with(&format!(" {sha}")), "{calls:?}");
    assert!(calls[1].contains("state/deployed/alice/tree"), "{calls:?}");
}

#[tokio::test]
async fn a_failed_build_tags_failed_with_its_error_and_leaves_main_and_the_container() {
    let (hive, driver, _dir, proposed) = nixos_alice().await;
    let alice = id("alice");
    let main = hive.repos().rev(&alice, "main").await.unwrap();
    let before = driver.spec_of(&alice).unwrap();
    let sha = commit(&proposed, &[("agent.nix", "BROKEN\n")]);
    let row = apply(&hive, &sha).await;
    let err = hive.approve(row.id, None).await.unwrap_err().to_string();
    assert!(err.contains("undefined variable 'nope'"), "{err}");
    let failed = Tag::Failed.name(row.id);
    assert!(hive.repos().has_tag(&alice, &failed).await.unwrap());
    assert_eq!(hive.repos().rev(&alice, "main").await.unwrap(), main);
    assert_eq!(
        driver.spec_of(&alice).unwrap(),
        before,
        "the container is unchanged"
    );
    assert!(driver.state(&alice).unwrap().is_running(), "never stopped");
    let record = hive.require(&alice).await.unwrap();
    assert_eq!(record.deployed_sha.as_deref(), Some(main.as_str()));
}

#[tokio::test]
async fn a_flake_lock_with_a_path_input_fails_validation_by_name_and_nothing_is_built() {
    let (hive, _driver, dir, proposed) = nixos_alice().await;
    let lock = r#"{"nodes":{"root":{"inputs":{"host":"host"}},"host":{"locked":{"narHash":"sha256-A","path":"/etc","type":"path"},"original":{"path":"/etc","type":"path"}}},"root":"root","version":7}"#;
    let sha = commit(&proposed, &[("agent.nix", AGENT_NIX), ("flake.lock", lock)]);
    let row = hive
        .request_approval(NewApproval {
            agent: id("alice"),
            kind: ApprovalKind::ApplyCommit,
            commit_ref: sha,
            description: None,
        })
        .await;
    let note = match row {
        Ok(row) => row.note.unwrap_or_default(),
        Err(e) => e.to_string(),
    };
    assert!(
        note.contains("flake.lock: input \"host\" is a path: or file: input"),
        "{note}"
    );
    assert!(argv(dir.path()).is_empty());
}

#[tokio::test]
async fn init_config_seeds_a_working_agent_nix_in_the_nixos_profile() {
    let (hive, _driver, _dir, _) = nixos_alice().await;
    let proposed = init_config_approved(&hive, "kid").await;
    let nix = std::fs::read_to_string(proposed.join("agent.nix")).unwrap();
    assert!(nix.contains("{ pkgs, ... }:"), "{nix}");
}
