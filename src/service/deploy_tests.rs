//! The approve → build → switch → record flow on the fake driver.

use std::path::PathBuf;
use std::sync::Arc;

use super::*;
use crate::containers::ContainerDriver as _;
use crate::containers::fake::FakeDriver;
use crate::hive::approvals::NewApproval;
use crate::testing::{commit, config_in, hive_at, id, manager_events};
use crate::wire::egress::EgressPattern;
use crate::wire::host::{ApprovalKind, ApprovalStatus};

async fn ask(hive: &Hive, kind: ApprovalKind, agent: &str, commit_ref: &str) -> Approval {
    hive.request_approval(NewApproval {
        agent: id(agent),
        kind,
        commit_ref: commit_ref.into(),
        description: None,
    })
    .await
    .unwrap()
}

/// A hive with agent `alice` spawned (so seeded, `deployed/0`), running.
async fn running_alice() -> (Hive, Arc<FakeDriver>, tempfile::TempDir, PathBuf) {
    let dir = tempfile::tempdir().unwrap();
    // A hive-wide egress list of the operator's (the default is empty since
    // the model gateway, issue 46).
    let mut config = config_in(dir.path());
    config.egress_allow =
        vec![crate::wire::egress::EgressPattern::new("api.anthropic.com:443").unwrap()];
    let (hive, driver) = hive_at(config, 1000);
    hive.spawn(&id("alice")).await.unwrap();
    let proposed = hive.repos().proposed(&id("alice"));
    (hive, driver, dir, proposed)
}

const NEW_CONFIG: &str = r#"{"memory_max":"2G","cpu_quota":"50%","tasks_max":512,"model":"claude-x","environment":{"TZ":"UTC"}}"#;

#[tokio::test]
async fn an_approved_commit_is_deployed_tagged_recorded_and_announced() {
    let (hive, driver, dir, proposed) = running_alice().await;
    let alice = id("alice");
    let zero = hive.repos().rev(&alice, "deployed/0").await.unwrap();
    assert_eq!(
        hive.require(&alice).await.unwrap().deployed_sha.as_deref(),
        Some(zero.as_str())
    );
    let sha = commit(
        &proposed,
        &[
            ("agent.json", NEW_CONFIG),
            ("CLAUDE.md", "be brief\n"),
            (".claude/commands/hi.md", "say hi\n"),
        ],
    );
    let row = ask(&hive, ApprovalKind::ApplyCommit, "alice", &sha).await;
    let done = hive.approve(row.id, None).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Approved);
    let repos = hive.repos();
    for tag in [Tag::Proposal, Tag::Approved, Tag::Building, Tag::Deployed] {
        assert_eq!(repos.rev(&alice, &tag.name(row.id)).await.unwrap(), sha);
    }
    assert_eq!(repos.rev(&alice, "main").await.unwrap(), sha);
    // The container runs with the new limits and environment.
    let spec = driver.spec_of(&alice).unwrap();
    assert_eq!(
        (spec.memory_max.as_deref(), spec.cpu_quota.as_deref()),
        (Some("2G"), Some("50%"))
    );
    assert_eq!(
        spec.tasks_max,
        Some(512),
        "agent.json's tasks_max over the hive's"
    );
    // For Claude, in the one variable the harness passes on.
    let (_, vars) = spec
        .env
        .iter()
        .find(|(k, _)| k == crate::wire::claude_env::ENV_CLAUDE_ENV)
        .unwrap();
    let vars = crate::wire::claude_env::decode(vars).unwrap();
    assert!(vars.contains(&("TZ".into(), "UTC".into())), "{vars:?}");
    assert!(vars.contains(&("ANTHROPIC_MODEL".into(), "claude-x".into())));
    assert!(driver.state(&alice).unwrap().is_running());
    // Claude's files are in the agent's working directory.
    let work = dir.path().join("state/agents/alice");
    assert_eq!(
        std::fs::read_to_string(work.join("CLAUDE.md")).unwrap(),
        "be brief\n"
    );
    assert!(work.join(".claude/commands/hi.md").is_file());
    // Recorded: the roster shows the first 12 hex digits.
    let record = hive.require(&alice).await.unwrap();
    assert_eq!(record.deployed_sha.as_deref(), Some(sha.as_str()));
    let row_shown = hive.row(&alice).await.unwrap().unwrap();
    assert_eq!(row_shown.deployed_sha.as_deref(), Some(&sha[..12]));
    // The manager hears rebuilt, then approval_resolved, with sha and tag.
    let events = manager_events(&hive, &["\"rebuilt\"", "approval_resolved"]).await;
    let tag = Tag::Deployed.name(row.id);
    assert_eq!(
        events,
        [
            format!(
                r#"{{"event":"rebuilt","agent":"alice","ok":true,"sha":"{sha}","tag":"{tag}"}}"#
            ),
            format!(
                r#"{{"event":"approval_resolved","id":{},"agent":"alice","commit_ref":"{sha}","status":"approved","note":"deployed {} ({tag})","sha":"{sha}","tag":"{tag}"}}"#,
                row.id,
                &sha[..12]
            ),
        ]
    );
}

#[tokio::test]
async fn a_failed_switch_tags_failed_keeps_main_and_puts_the_old_config_back() {
    let (hive, driver, _dir, proposed) = running_alice().await;
    let alice = id("alice");
    let main = hive.repos().rev(&alice, "main").await.unwrap();
    let sha = commit(&proposed, &[("agent.json", NEW_CONFIG)]);
    let row = ask(&hive, ApprovalKind::ApplyCommit, "alice", &sha).await;
    driver.fail_starts(&alice);
    let err = hive.approve(row.id, None).await.unwrap_err();
    assert!(err.to_string().contains("start"), "{err}");
    let repos = hive.repos();
    assert_eq!(repos.rev(&alice, "main").await.unwrap(), main);
    assert!(
        repos
            .has_tag(&alice, &Tag::Failed.name(row.id))
            .await
            .unwrap()
    );
    assert!(
        !repos
            .has_tag(&alice, &Tag::Deployed.name(row.id))
            .await
            .unwrap()
    );
    let spec = driver.spec_of(&alice).unwrap();
    assert_eq!(spec.memory_max.as_deref(), Some("4G"), "the old limits");
    assert_eq!(spec.tasks_max, Some(crate::config::DEFAULT_TASKS_MAX));
    let record = hive.require(&alice).await.unwrap();
    assert_eq!(record.deployed_sha.as_deref(), Some(main.as_str()));
    let events = manager_events(&hive, &["\"rebuilt\""]).await;
    assert_eq!(events.len(), 1);
    assert!(events[0].contains(r#""ok":false"#), "{events:?}");
    assert!(events[0].contains(r#""note":"#), "{events:?}");
}

#[tokio::test]
async fn the_first_approved_commit_of_an_init_config_agent_creates_its_container() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, driver) = hive_at(config_in(dir.path()), 1000);
    let kid = id("kid");
    let init = ask(&hive, ApprovalKind::InitConfig, "kid", "").await;
    hive.approve(init.id, None).await.unwrap();
    assert!(driver.state(&kid).is_none(), "no container yet");
    let proposed = hive.repos().proposed(&kid);
    let sha = commit(&proposed, &[("agent.json", NEW_CONFIG)]);
    let row = ask(&hive, ApprovalKind::ApplyCommit, "kid", &sha).await;
    hive.approve(row.id, None).await.unwrap();
    assert!(driver.state(&kid).unwrap().is_running());
    assert_eq!(
        driver.spec_of(&kid).unwrap().memory_max.as_deref(),
        Some("2G")
    );
    let record = hive.require(&kid).await.unwrap();
    assert_eq!(record.deployed_sha.as_deref(), Some(sha.as_str()));
    let events = manager_events(&hive, &["\"spawned\"", "\"rebuilt\""]).await;
    assert_eq!(
        events,
        [format!(
            r#"{{"event":"spawned","agent":"kid","ok":true,"sha":"{sha}"}}"#
        )]
    );
}

/// A row an approve claimed, its daemon gone before the end.
async fn claim(hive: &Hive, row: &Approval) {
    let id = row.id;
    hive.store()
        .run(move |c| crate::store::approvals::claim(c, id))
        .await
        .unwrap();
}

#[tokio::test]
async fn a_deploy_cut_before_deployed_ends_failed_and_after_it_approved_once_each() {
    let (hive, _driver, _dir, proposed) = running_alice().await;
    let alice = id("alice");
    let one = commit(&proposed, &[("CLAUDE.md", "one\n")]);
    let cut_early = ask(&hive, ApprovalKind::ApplyCommit, "alice", &one).await;
    claim(&hive, &cut_early).await;
    let ended = hive.reconcile_interrupted().await.unwrap();
    assert_eq!(ended.len(), 1);
    assert_eq!(ended[0].status, ApprovalStatus::Failed);
    assert!(
        hive.repos()
            .has_tag(&alice, &Tag::Failed.name(cut_early.id))
            .await
            .unwrap()
    );

    let cut_late = ask(&hive, ApprovalKind::ApplyCommit, "alice", &one).await;
    claim(&hive, &cut_late).await;
    let tag = Tag::Deployed.name(cut_late.id);
    hive.repos().tag(&alice, &tag, &one, None).await.unwrap();
    let ended = hive.reconcile_interrupted().await.unwrap();
    assert_eq!(ended[0].status, ApprovalStatus::Approved);
    assert_eq!(hive.repos().rev(&alice, "main").await.unwrap(), one);
    let record = hive.require(&alice).await.unwrap();
    assert_eq!(record.deployed_sha.as_deref(), Some(one.as_str()));
    for row in [cut_early.id, cut_late.id] {
        let events = manager_events(&hive, &[&format!(r#""id":{row},"#)]).await;
        assert_eq!(events.len(), 1, "{events:?}");
    }
    assert!(hive.reconcile_interrupted().await.unwrap().is_empty());
}

#[tokio::test]
async fn show_flags_and_cleans_the_diff_deny_tags_with_the_note_and_rollback_deploys_a_new_row() {
    let (hive, driver, _dir, proposed) = running_alice().await;
    let alice = id("alice");
    // A proposal with a symlink, a binary file and an escape sequence.
    std::os::unix::fs::symlink("CLAUDE.md", proposed.join("link")).unwrap();
    std::fs::write(proposed.join("blob.bin"), [0u8, 1, 2, 255]).unwrap();
    let sha = commit(&proposed, &[("CLAUDE.md", "be \u{1b}[31mred\u{1b}[0m\n")]);
    let row = ask(&hive, ApprovalKind::ApplyCommit, "alice", &sha).await;
    let review = hive.review(row.id).await.unwrap();
    assert!(review.stat.contains("CLAUDE.md"), "{}", review.stat);
    assert!(
        review.patch.contains("+be ?[31mred?[0m"),
        "{}",
        review.patch
    );
    assert!(!review.patch.contains('\u{1b}'));
    assert_eq!(review.flagged, ["symlink link", "binary blob.bin"]);
    assert!(!review.truncated);
    // Denied with a note: on the row, on the tag, in the event.
    let denied = hive.deny(row.id, Some("no red".into())).await.unwrap();
    assert_eq!(denied.note.as_deref(), Some("no red"));
    let tag = Tag::Denied.name(row.id);
    assert_eq!(hive.repos().rev(&alice, &tag).await.unwrap(), sha);
    let events = manager_events(&hive, &[&format!(r#""id":{},"#, row.id)]).await;
    assert!(events[0].contains(&format!(r#""note":"no red","sha":"{sha}","tag":"{tag}""#)));
    // Deploy one, then roll back to deployed/0.
    let two = commit(&proposed, &[("agent.json", NEW_CONFIG)]);
    let second = ask(&hive, ApprovalKind::ApplyCommit, "alice", &two).await;
    hive.approve(second.id, None).await.unwrap();
    assert_eq!(
        driver.spec_of(&alice).unwrap().memory_max.as_deref(),
        Some("2G")
    );
    let back = hive.rollback(&alice, 0).await.unwrap();
    assert_eq!(back.status, ApprovalStatus::Approved);
    assert_eq!(back.description.as_deref(), Some("rollback to deployed/0"));
    let main = hive.repos().rev(&alice, "main").await.unwrap();
    assert_eq!(back.fetched_sha.as_deref(), Some(main.as_str()));
    assert_eq!(
        hive.repos()
            .rev(&alice, &Tag::Deployed.name(back.id))
            .await
            .unwrap(),
        main
    );
    assert_eq!(
        driver.spec_of(&alice).unwrap().memory_max.as_deref(),
        Some("4G")
    );
    let err = hive.rollback(&alice, 99).await.unwrap_err();
    assert!(err.to_string().contains("no deployed/99"), "{err}");
}

/// Rebuilds, spawns and restarts take turns in the hive's one build queue:
/// with start jobs that take a while, none of them touches a container
/// while another is under way. (Before, a spawn or a restart ran in the
/// middle of a rebuild's stop → rebuild → start.)
#[tokio::test]
async fn a_rebuild_a_spawn_and_a_restart_run_one_after_another_in_the_build_queue() {
    use crate::containers::ActiveState;
    let dir = tempfile::tempdir().unwrap();
    let delay = std::time::Duration::from_millis(200);
    let (hive, driver) = crate::testing::hive_with_slow_starts(config_in(dir.path()), delay);
    for n in ["alice", "carol"] {
        hive.spawn(&id(n)).await.unwrap();
    }
    let mut changes = driver.changes();
    let rebuild = tokio::spawn({
        let hive = hive.clone();
        async move { hive.rebuild(&id("alice")).await }
    });
    let mut seen = Vec::new();
    // Alice's start job is under way: the others ask now.
    loop {
        let change = changes.recv().await.unwrap();
        seen.push(change.agent.clone());
        let activating = change
            .new
            .is_some_and(|u| u.active == ActiveState::Activating);
        if change.agent == id("alice") && activating {
            break;
        }
    }
    let spawn = tokio::spawn({
        let hive = hive.clone();
        async move { hive.spawn(&id("bob")).await }
    });
    let restart = tokio::spawn({
        let hive = hive.clone();
        async move { hive.restart(&id("carol")).await }
    });
    for done in [rebuild, spawn, restart] {
        done.await.unwrap().unwrap();
    }
    while let Ok(change) = changes.try_recv() {
        seen.push(change.agent);
    }
    // Each agent's changes in one run: nothing interleaved.
    seen.dedup();
    assert_eq!(seen.len(), 3, "{seen:?}");
    assert_eq!(seen[0], id("alice"), "{seen:?}");
    assert!(seen.contains(&id("bob")) && seen.contains(&id("carol")));
}

/// Would the egress proxy let `agent` reach `host:port` now? The list the
/// daemon hands the egress service per connection, checked as it checks
/// it (`egress::AllowList::allows`).
async fn egress_allows(hive: &Hive, agent: &str, host: &str, port: u16) -> bool {
    let list = hive.egress_allow(&id(agent)).await.unwrap();
    list.iter().any(|p| p.matches(host, port))
}

#[tokio::test]
async fn a_deployed_agent_json_opens_its_egress_hosts_to_that_agent_until_rolled_back() {
    let (hive, _driver, _dir, proposed) = running_alice().await;
    hive.spawn(&id("bob")).await.unwrap();
    let alice = id("alice");
    assert!(!egress_allows(&hive, "alice", "pypi.org", 443).await);
    let sha = commit(
        &proposed,
        &[(
            "agent.json",
            r#"{"memory_max":"4G","egress":["pypi.org:443","*.files.example.com"]}"#,
        )],
    );
    let row = ask(&hive, ApprovalKind::ApplyCommit, "alice", &sha).await;
    // Proposed, not yet approved: nothing opens.
    assert!(!egress_allows(&hive, "alice", "pypi.org", 443).await);
    let done = hive.approve(row.id, None).await.unwrap();
    assert_eq!(done.status, ApprovalStatus::Approved);
    assert!(egress_allows(&hive, "alice", "pypi.org", 443).await);
    assert!(egress_allows(&hive, "alice", "a.files.example.com", 8443).await);
    assert!(!egress_allows(&hive, "alice", "pypi.org", 80).await);
    assert!(egress_allows(&hive, "alice", "api.anthropic.com", 443).await);
    // The agent's own list, not bob's.
    assert!(!egress_allows(&hive, "bob", "pypi.org", 443).await);
    // A request for a host agent.json already opens is refused as such.
    let err = hive
        .request_egress(&alice, EgressPattern::new("pypi.org:443").unwrap(), "pip")
        .await
        .unwrap_err();
    assert!(err.to_string().contains("pypi.org:443"), "{err}");
    // The rollback deploys the old agent.json: the hosts close again.
    hive.rollback(&alice, 0).await.unwrap();
    assert!(!egress_allows(&hive, "alice", "pypi.org", 443).await);
}

/// A stop that outlives the driver's wait (or loses the bus) leaves the
/// agent's processes alive: a rebuild must not install anything into the
/// state directory they write, where a `.claude` they swapped for a link
/// would lead the install to a host path. (Before, `switch_to` ignored the
/// stop's `Pending` and installed: the planted link was replaced.)
#[tokio::test]
async fn a_rebuild_whose_stop_is_still_pending_installs_nothing_and_says_so() {
    let (hive, driver, dir, proposed) = running_alice().await;
    let alice = id("alice");
    let files = [
        ("agent.json", NEW_CONFIG),
        (".claude/commands/hi.md", "hi\n"),
    ];
    let sha = commit(&proposed, &files);
    let row = ask(&hive, ApprovalKind::ApplyCommit, "alice", &sha).await;
    hive.approve(row.id, None).await.unwrap();
    assert!(hive.deployed_tree(&alice).join(".claude").is_dir());
    let outside = dir.path().join("outside");
    std::fs::create_dir(&outside).unwrap();
    // The agent moves the installed `.claude` away and plants a link.
    let state = hive.config().agent_state_dir(&alice);
    let planted = state.join(".claude");
    std::fs::rename(&planted, state.join("moved")).unwrap();
    std::os::unix::fs::symlink(&outside, &planted).unwrap();
    driver.stall_stops(&alice);
    let err = hive.rebuild(&alice).await.unwrap_err();
    assert_eq!(
        err.code(),
        crate::wire::codes::ErrorCode::InProgress,
        "{err}"
    );
    assert!(err.to_string().contains("stop of alice"), "{err}");
    let link = std::fs::symlink_metadata(&planted).unwrap();
    assert!(link.is_symlink(), "the agent's state was touched");
    assert_eq!(std::fs::read_dir(&outside).unwrap().count(), 0);
    let events = manager_events(&hive, &["\"rebuilt\""]).await;
    assert!(
        events.last().unwrap().contains(r#""ok":false"#),
        "{events:?}"
    );
}
