use super::*;
use crate::testing::id;

#[test]
fn the_table_shows_each_version_its_state_and_agents_then_the_full_copies() {
    let row = |kind, version: Option<&str>, current, missing, agents: &[&str]| ImageRow {
        kind,
        version: version.map(str::to_owned),
        current,
        missing,
        agents: agents.iter().map(|a| id(a)).collect(),
    };
    let text = table_of(&[
        row(ImageKind::Shared, Some("v1"), false, false, &[]),
        row(
            ImageKind::Shared,
            Some("v2"),
            true,
            false,
            &["alice", "bob"],
        ),
        row(ImageKind::Shared, Some("v0"), false, true, &["carol"]),
        row(ImageKind::FullCopy, None, false, false, &["dave"]),
    ]);
    let lines: Vec<Vec<&str>> = text
        .lines()
        .map(|l| l.split_whitespace().collect())
        .collect();
    assert_eq!(
        lines,
        [
            vec!["IMAGE", "STATE", "AGENTS"],
            vec!["v1", "-", "-"],
            vec!["v2", "current", "alice,bob"],
            vec!["v0", "missing", "carol"],
            vec!["(full", "copy)", "-", "dave"],
        ]
    );
}

#[test]
fn no_images_is_said_in_words() {
    assert!(table_of(&[]).starts_with("no agent images"));
}

#[test]
fn prune_prints_each_version_removed_or_that_would_be() {
    let versions = ["v1".to_owned(), "v2".to_owned()];
    assert_eq!(pruned(&versions, false), "removed v1\nremoved v2\n");
    assert_eq!(
        pruned(&versions, true),
        "would remove v1\nwould remove v2\n"
    );
    assert!(pruned(&[], true).contains("nothing to remove"));
    assert!(pruned(&[], false).contains("nothing removed"));
}
