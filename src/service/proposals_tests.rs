//! Config proposals from the manager's side, on the fake driver (no
//! sandbox: every other rule applies). The manager is the attacker here:
//! it writes the proposed repo, and the tests write it as it could.

use std::path::{Path, PathBuf};

use super::*;
use crate::testing::{config_in, hive_at, id, init_config_approved, manager_events};
use crate::wire::codes::ErrorCode;
use crate::wire::host::{ApprovalKind, ApprovalStatus};

/// git as the manager runs it in its own repo (hooks off for the
/// fixture's own commits, so a marker can only be run by the hive).
#[allow(clippy::disallowed_methods)] // the test plays the manager, who runs git itself
fn git(repo: &Path, args: &[&str]) -> String {
    let out = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args([
            "-c",
            "core.hooksPath=/dev/null",
            "-c",
            "core.fsmonitor=false",
            "-c",
            "user.name=ruth",
            "-c",
            "user.email=ruth@hive",
        ])
        .args(args)
        .env("GIT_CONFIG_NOSYSTEM", "1")
        .output()
        .unwrap();
    assert!(
        out.status.success(),
        "git {args:?}: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// `git` with bytes on stdin.
#[allow(clippy::disallowed_methods)] // the test plays the manager
fn git_in(repo: &Path, args: &[&str], input: &[u8]) -> String {
    use std::io::Write as _;
    let mut child = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .args(args)
        .stdin(std::process::Stdio::piped())
        .stdout(std::process::Stdio::piped())
        .spawn()
        .unwrap();
    child.stdin.take().unwrap().write_all(input).unwrap();
    let out = child.wait_with_output().unwrap();
    assert!(out.status.success(), "git {args:?}");
    String::from_utf8_lossy(&out.stdout).trim().to_owned()
}

/// A commit on top of HEAD whose root tree is HEAD's with `line` (a
/// `git mktree` line) in place of the entry of the same name. HEAD stays.
fn commit_with(repo: &Path, line: &str) -> String {
    let name = line.split('\t').nth(1).unwrap();
    let mut lines: Vec<String> = git(repo, &["ls-tree", "HEAD"])
        .lines()
        .filter(|l| l.split('\t').nth(1) != Some(name))
        .map(str::to_owned)
        .collect();
    lines.push(line.to_owned());
    let tree = git_in(repo, &["mktree"], (lines.join("\n") + "\n").as_bytes());
    git(
        repo,
        &["commit-tree", "-p", "HEAD", "-m", "proposal", &tree],
    )
}

fn blob(repo: &Path, bytes: &[u8]) -> String {
    git_in(repo, &["hash-object", "-w", "--stdin"], bytes)
}

/// A hive whose manager has had `kid`'s config seeded (an approved
/// `init_config`); its proposed repo's path.
async fn seeded() -> (Hive, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    let (hive, _driver) = hive_at(config_in(dir.path()), 1000);
    let proposed = init_config_approved(&hive, "kid").await;
    (hive, dir, proposed)
}

async fn apply(hive: &Hive, sha: &str) -> Result<Approval, HiveError> {
    hive.request_approval(NewApproval {
        agent: id("kid"),
        kind: ApprovalKind::ApplyCommit,
        commit_ref: sha.to_owned(),
        description: None,
    })
    .await
}

use crate::hive::approvals::NewApproval;

#[tokio::test]
async fn init_config_seeds_both_repos_tells_the_manager_and_refuses_a_second_time() {
    let (hive, _dir, proposed) = seeded().await;
    let applied = hive.repos().applied(&id("kid"));
    assert!(proposed.join(".git").is_dir() && applied.join("HEAD").is_file());
    let json = std::fs::read(proposed.join("agent.json")).unwrap();
    let config = AgentConfig::parse(&json).unwrap();
    assert_eq!(config.memory_max.as_deref(), Some("4G"));
    assert!(proposed.join("CLAUDE.md").is_file() && proposed.join("README.md").is_file());
    assert_eq!(
        git(&proposed, &["config", "remote.origin.url"]),
        "/hive/applied/kid.git"
    );
    let events = manager_events(&hive, &["config_ready", "approval_resolved"]).await;
    assert_eq!(events.len(), 2, "{events:?}");
    assert_eq!(events[0], r#"{"event":"config_ready","agent":"kid"}"#);
    assert!(events[1].contains(r#""status":"approved""#), "{events:?}");
    let again = hive
        .request_approval(NewApproval {
            agent: id("kid"),
            kind: ApprovalKind::InitConfig,
            commit_ref: String::new(),
            description: None,
        })
        .await
        .unwrap_err();
    assert_eq!(again.code(), ErrorCode::AlreadyExists, "{again}");
}

#[tokio::test]
async fn a_commit_is_fetched_tagged_and_pending_and_a_later_amend_changes_nothing() {
    let (hive, _dir, proposed) = seeded().await;
    std::fs::write(proposed.join("CLAUDE.md"), "be brief\n").unwrap();
    git(&proposed, &["commit", "-q", "-am", "brief"]);
    let sha = git(&proposed, &["rev-parse", "HEAD"]);
    let row = apply(&hive, &sha[..8]).await.unwrap();
    assert_eq!(row.status, ApprovalStatus::Pending);
    assert_eq!(row.fetched_sha.as_deref(), Some(sha.as_str()));
    let repos = hive.repos();
    let tag = Tag::Proposal.name(row.id);
    assert_eq!(repos.rev(&id("kid"), &tag).await.unwrap(), sha);
    // The manager amends: the row still stands for what was fetched.
    std::fs::write(proposed.join("CLAUDE.md"), "be verbose\n").unwrap();
    git(
        &proposed,
        &["commit", "-q", "-a", "--amend", "-m", "verbose"],
    );
    let rows = hive.approvals().await.unwrap();
    let same = rows.iter().find(|r| r.id == row.id).unwrap();
    assert_eq!(same.fetched_sha.as_deref(), Some(sha.as_str()));
    assert_eq!(repos.rev(&id("kid"), &tag).await.unwrap(), sha);
    // Decisions may be taken on it (it is not held).
    hive.deny(row.id, None).await.unwrap();
}

#[tokio::test]
async fn a_request_that_breaks_a_rule_before_the_fetch_leaves_no_row() {
    let (hive, _dir, proposed) = seeded().await;
    let before = hive.approvals().await.unwrap().len();
    let err = apply(&hive, "0123456789abcdef").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ProposalRefused, "{err}");
    assert!(
        err.to_string().contains("not in the proposed repo"),
        "{err}"
    );
    let err = apply(&hive, "HEAD").await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::BadRequest, "{err}");
    let err = hive
        .request_approval(NewApproval {
            agent: id("ghost"),
            kind: ApprovalKind::ApplyCommit,
            commit_ref: "0123abc".into(),
            description: None,
        })
        .await
        .unwrap_err();
    assert_eq!(err.code(), ErrorCode::UnknownAgent, "{err}");
    let ruth = hive
        .request_approval(NewApproval {
            agent: id("ruth"),
            kind: ApprovalKind::ApplyCommit,
            commit_ref: "0123abc".into(),
            description: None,
        })
        .await
        .unwrap_err();
    assert_eq!(ruth.code(), ErrorCode::ProposalRefused, "{ruth}");
    assert!(proposed.is_dir());
    assert_eq!(hive.approvals().await.unwrap().len(), before);
}

/// The row ends `failed` at once, its reason in the note and in the one
/// `approval_resolved`, and `failed/<id>` is annotated with it.
async fn fails_with(hive: &Hive, sha: &str, words: &str) -> Approval {
    let err = apply(hive, sha).await.unwrap_err();
    assert_eq!(err.code(), ErrorCode::ApprovalFailed, "{err}");
    assert!(err.to_string().contains(words), "{err}");
    let rows = hive.approvals().await.unwrap();
    let row = rows.last().unwrap().clone();
    assert_eq!(row.status, ApprovalStatus::Failed);
    assert!(row.note.as_deref().unwrap().contains(words), "{row:?}");
    let events = manager_events(hive, &[&format!(r#""id":{},"#, row.id)]).await;
    assert_eq!(events.len(), 1, "{events:?}");
    assert!(events[0].contains(r#""status":"failed""#), "{events:?}");
    row
}

#[tokio::test]
async fn an_unknown_key_in_agent_json_fails_the_row_at_once_naming_the_key() {
    let (hive, _dir, proposed) = seeded().await;
    let json = blob(&proposed, br#"{"memory_max":"2G","memroy_max":"1G"}"#);
    let sha = commit_with(&proposed, &format!("100644 blob {json}\tagent.json"));
    let row = fails_with(&hive, &sha, "memroy_max").await;
    assert_eq!(row.fetched_sha.as_deref(), Some(sha.as_str()));
    let tag = Tag::Failed.name(row.id);
    assert_eq!(hive.repos().rev(&id("kid"), &tag).await.unwrap(), sha);
}

#[tokio::test]
async fn a_proposal_that_does_not_descend_from_main_fails_saying_rebase_on_main() {
    let (hive, _dir, proposed) = seeded().await;
    let json = blob(&proposed, b"{}");
    let tree = git_in(
        &proposed,
        &["mktree"],
        format!("100644 blob {json}\tagent.json\n").as_bytes(),
    );
    let orphan = git(&proposed, &["commit-tree", "-m", "orphan", &tree]);
    fails_with(&hive, &orphan, "rebase on main").await;
}

/// Every hook git knows, each a marker script.
const HOOKS: &[&str] = &[
    "applypatch-msg",
    "pre-applypatch",
    "post-applypatch",
    "pre-commit",
    "pre-merge-commit",
    "prepare-commit-msg",
    "commit-msg",
    "post-commit",
    "pre-rebase",
    "post-checkout",
    "post-merge",
    "pre-push",
    "pre-receive",
    "update",
    "proc-receive",
    "post-receive",
    "post-update",
    "reference-transaction",
    "push-to-checkout",
    "pre-auto-gc",
    "post-rewrite",
    "sendemail-validate",
    "fsmonitor-watchman",
    "p4-changelist",
    "p4-prepare-changelist",
    "p4-post-changelist",
    "p4-pre-submit",
    "post-index-change",
    "pre-upload-pack",
];

/// Config keys of the proposed repo that name a program.
const PROGRAM_KEYS: &[&str] = &[
    "core.fsmonitor",
    "core.sshCommand",
    "core.pager",
    "core.editor",
    "core.askPass",
    "core.gitProxy",
    "core.alternateRefsCommand",
    "diff.external",
    "credential.helper",
    "gpg.program",
    "sequence.editor",
    "uploadpack.packObjectsHook",
    "filter.x.clean",
    "filter.x.smudge",
    "filter.x.process",
    "remote.origin.uploadpack",
    "remote.origin.receivepack",
];

/// Arm `repo` as a hostile manager would: a marker script for every hook
/// (in `.git/hooks` and in a `core.hooksPath` of its own) and for every
/// program-naming config key, and `.gitattributes` asking for filter `x`.
fn arm(repo: &Path, markers: &Path) {
    use std::os::unix::fs::PermissionsExt as _;
    let script = |name: &str| {
        let dir = repo.join(".git").join("markers");
        std::fs::create_dir_all(&dir).unwrap();
        let path = dir.join(name.replace('.', "_"));
        let body = format!("#!/bin/sh\ntouch {}/{name}\n", markers.display());
        std::fs::write(&path, body).unwrap();
        std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        path
    };
    let own_hooks = repo.join(".git").join("own-hooks");
    std::fs::create_dir_all(&own_hooks).unwrap();
    for hook in HOOKS {
        let path = script(hook);
        std::fs::copy(&path, repo.join(".git").join("hooks").join(hook)).unwrap();
        std::fs::copy(&path, own_hooks.join(hook)).unwrap();
    }
    for key in PROGRAM_KEYS {
        let path = script(key);
        git(repo, &["config", key, path.to_str().unwrap()]);
    }
    git(
        repo,
        &["config", "core.hooksPath", own_hooks.to_str().unwrap()],
    );
    std::fs::write(repo.join(".gitattributes"), "* filter=x\n").unwrap();
}

#[tokio::test]
async fn a_hostile_proposed_repo_runs_nothing_imports_nothing_and_fails_with_reasons() {
    let (hive, dir, proposed) = seeded().await;
    let kid = id("kid");
    let markers = dir.path().join("markers");
    std::fs::create_dir_all(&markers).unwrap();
    // A root-only repo with a secret commit.
    let secret = dir.path().join("secret");
    std::fs::create_dir_all(&secret).unwrap();
    git(&secret, &["init", "-q"]);
    std::fs::write(secret.join("key"), "s3cret\n").unwrap();
    git(&secret, &["add", "key"]);
    git(&secret, &["commit", "-q", "-m", "secret"]);
    let secret_sha = git(&secret, &["rev-parse", "HEAD"]);
    {
        use std::os::unix::fs::PermissionsExt as _;
        let mode = std::fs::Permissions::from_mode(0o700);
        std::fs::set_permissions(&secret, mode).unwrap();
    }
    // The manager's proposals, made before the repo is armed.
    let gitlink = commit_with(&proposed, &format!("160000 commit {secret_sha}\tsub"));
    let huge = blob(&proposed, &vec![b'x'; 2 << 20]);
    let huge = commit_with(&proposed, &format!("100644 blob {huge}\thuge.bin"));
    let readme = blob(&proposed, b"hi\n");
    let dotgit = commit_with(&proposed, &format!("100644 blob {readme}\t.git"));
    let gitmodules = blob(
        &proposed,
        b"[submodule \"a\"]\n\tpath = a\n\turl = https://example.com/a\n",
    );
    let modules = commit_with(&proposed, &format!("100644 blob {gitmodules}\t.gitmodules"));
    arm(&proposed, &markers);

    fails_with(&hive, &gitlink, "gitlink").await;
    fails_with(&hive, &huge, "over the cap").await;
    fails_with(&hive, &dotgit, "fetching the proposal failed").await;
    fails_with(&hive, &modules, "submodules").await;

    // Alternates to the secret repo: refused before any fetch, no row.
    let rows = hive.approvals().await.unwrap().len();
    let alternates = proposed.join(".git/objects/info/alternates");
    std::fs::write(&alternates, format!("{}/.git/objects\n", secret.display())).unwrap();
    for sha in [&secret_sha, &gitlink] {
        let err = apply(&hive, sha).await.unwrap_err();
        assert_eq!(err.code(), ErrorCode::ProposalRefused, "{err}");
        assert!(err.to_string().contains("alternates"), "{err}");
    }
    std::fs::remove_file(&alternates).unwrap();
    // A .git that is a file pointing at the secret repo: refused too.
    let real = dir.path().join("real-dotgit");
    std::fs::rename(proposed.join(".git"), &real).unwrap();
    let gitfile = format!("gitdir: {}/.git\n", secret.display());
    std::fs::write(proposed.join(".git"), gitfile).unwrap();
    let err = apply(&hive, &secret_sha).await.unwrap_err();
    assert!(err.to_string().contains(".git is a file"), "{err}");
    std::fs::remove_file(proposed.join(".git")).unwrap();
    std::os::unix::fs::symlink(secret.join(".git"), proposed.join(".git")).unwrap();
    let err = apply(&hive, &secret_sha).await.unwrap_err();
    assert!(err.to_string().contains(".git is a symlink"), "{err}");
    std::fs::remove_file(proposed.join(".git")).unwrap();
    std::fs::rename(&real, proposed.join(".git")).unwrap();
    assert_eq!(hive.approvals().await.unwrap().len(), rows, "no row");

    assert!(!hive.repos().has_object(&kid, &secret_sha).await.unwrap());
    let ran: Vec<_> = std::fs::read_dir(&markers).unwrap().collect();
    assert!(ran.is_empty(), "markers ran: {ran:?}");
    // The fixture is armed: a naive `git status` there runs its fsmonitor.
    naive_status(&proposed);
    assert!(
        markers.join("core.fsmonitor").exists(),
        "the fixture is not armed"
    );
}

/// `git status` as a careless hive would run it in the proposed repo.
#[allow(clippy::disallowed_methods)] // the probe the hive must never be
fn naive_status(repo: &Path) {
    let _ = std::process::Command::new("git")
        .arg("-C")
        .arg(repo)
        .arg("status")
        .output();
}

/// Files and directories under `dir` that others cannot read (or enter).
fn unreadable_by_others(dir: &Path) -> Vec<PathBuf> {
    use std::os::unix::fs::PermissionsExt as _;
    let mut out = Vec::new();
    let mut stack = vec![dir.to_path_buf()];
    while let Some(p) = stack.pop() {
        let meta = std::fs::symlink_metadata(&p).unwrap();
        let need = if meta.is_dir() { 0o005 } else { 0o004 };
        if meta.permissions().mode() & need != need {
            out.push(p.clone());
        }
        if meta.is_dir() {
            stack.extend(std::fs::read_dir(&p).unwrap().map(|e| e.unwrap().path()));
        }
    }
    out
}

#[tokio::test]
async fn an_applied_repo_stays_readable_to_the_manager_and_one_from_before_is_made_so_at_start() {
    use std::os::unix::fs::PermissionsExt as _;
    let (hive, _dir, proposed) = seeded().await;
    let kid = id("kid");
    let applied = hive.repos().applied(&kid);
    // What git writes later gets the repo's shared mode, whatever the umask.
    assert_eq!(git(&applied, &["config", "core.sharedRepository"]), "0604");
    std::fs::write(proposed.join("CLAUDE.md"), "be brief\n").unwrap();
    git(&proposed, &["commit", "-q", "-am", "brief"]);
    let sha = git(&proposed, &["rev-parse", "HEAD"]);
    let row = apply(&hive, &sha).await.unwrap();
    hive.approve(row.id, None).await.unwrap();
    assert_eq!(unreadable_by_others(&applied), Vec::<PathBuf>::new());
    // A repo made before the shared mode: a private file, no setting.
    git(&applied, &["config", "--unset", "core.sharedRepository"]);
    let head = applied.join("HEAD");
    std::fs::set_permissions(&head, std::fs::Permissions::from_mode(0o600)).unwrap();
    hive.seed_missing_configs().await.unwrap();
    assert_eq!(git(&applied, &["config", "core.sharedRepository"]), "0604");
    assert_eq!(unreadable_by_others(&applied), Vec::<PathBuf>::new());
}

#[tokio::test]
async fn a_bad_egress_pattern_in_agent_json_fails_the_row_naming_the_pattern_and_the_rule() {
    let (hive, _dir, proposed) = seeded().await;
    let json = blob(
        &proposed,
        br#"{"egress":["pypi.org:443","pypi.org:99999"]}"#,
    );
    let sha = commit_with(&proposed, &format!("100644 blob {json}\tagent.json"));
    let row = fails_with(&hive, &sha, "pypi.org:99999").await;
    assert!(row.note.unwrap().contains("host[:port]"));
}
