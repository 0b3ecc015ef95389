use super::*;
use crate::testing::id;

fn store(versions: &[&str], current: Option<&str>) -> Store {
    Store {
        versions: versions.iter().map(|v| v.to_string()).collect(),
        current: current.map(str::to_owned),
    }
}

#[test]
fn rows_list_every_version_with_its_agents_then_the_full_copies_and_the_host_usr() {
    let agents = [
        (id("bob"), AgentImage::Shared("v1".into())),
        (id("alice"), AgentImage::Shared("v1".into())),
        (id("carol"), AgentImage::FullCopy),
        (id("dave"), AgentImage::Host),
    ];
    let rows = rows(&store(&["v2", "v1", "v0"], Some("v2")), agents);
    let said: Vec<_> = rows
        .iter()
        .map(|r| (r.kind, r.version.as_deref(), r.current, r.agents.clone()))
        .collect();
    assert_eq!(
        said,
        [
            (ImageKind::Shared, Some("v0"), false, vec![]),
            (
                ImageKind::Shared,
                Some("v1"),
                false,
                vec![id("alice"), id("bob")]
            ),
            (ImageKind::Shared, Some("v2"), true, vec![]),
            (ImageKind::FullCopy, None, false, vec![id("carol")]),
            (ImageKind::Host, None, false, vec![id("dave")]),
        ]
    );
    assert!(rows.iter().all(|r| !r.missing));
}

#[test]
fn a_version_an_agent_names_that_the_store_lacks_is_listed_as_missing() {
    let rows = rows(
        &store(&["v2"], Some("v2")),
        [(id("alice"), AgentImage::Shared("v1".into()))],
    );
    assert_eq!(rows.len(), 2);
    assert_eq!(rows[0].version.as_deref(), Some("v1"));
    assert!(rows[0].missing && !rows[0].current);
    assert_eq!(rows[0].agents, [id("alice")]);
    assert!(!rows[1].missing && rows[1].current);
}

#[test]
fn a_version_name_is_a_bare_visible_directory_name() {
    for good in ["v1", "20261207-120000", "a.b_c-D"] {
        assert!(is_version_name(good), "{good}");
    }
    for bad in [
        "",
        ".",
        "..",
        ".v1.part",
        "a/b",
        "../etc",
        "v 1",
        "current\n",
        "é",
    ] {
        assert!(!is_version_name(bad), "{bad:?}");
    }
}
