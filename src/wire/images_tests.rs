//! Golden lines of `images`' answer (host.sock; beside `host_tests.rs`).

use super::*;
use crate::testing::id;
use crate::wire::host::HostResponse;

#[test]
fn the_images_answer_has_its_golden_line_and_parses_back() {
    let rows = vec![
        ImageRow {
            kind: ImageKind::Shared,
            version: Some("20261207-120000".into()),
            current: true,
            missing: false,
            agents: vec![id("alice"), id("bob")],
        },
        ImageRow {
            kind: ImageKind::Shared,
            version: Some("v0".into()),
            current: false,
            missing: true,
            agents: vec![id("carol")],
        },
        ImageRow {
            kind: ImageKind::FullCopy,
            version: None,
            current: false,
            missing: false,
            agents: vec![id("dave")],
        },
    ];
    let response = HostResponse::images(rows);
    let line = r#"{"version":1,"ok":true,"images":[{"kind":"shared","version":"20261207-120000","current":true,"agents":["alice","bob"]},{"kind":"shared","version":"v0","missing":true,"agents":["carol"]},{"kind":"full_copy","agents":["dave"]}]}"#;
    assert_eq!(response.to_line(), line);
    assert_eq!(
        serde_json::from_str::<HostResponse>(line).unwrap(),
        response
    );
}

#[test]
fn the_prune_answer_names_the_versions_and_a_plain_prune_omits_dry_run() {
    let response = HostResponse::pruned(vec!["v1".into(), "v2".into()]);
    let line = r#"{"version":1,"ok":true,"pruned":["v1","v2"]}"#;
    assert_eq!(response.to_line(), line);
    assert_eq!(
        serde_json::from_str::<HostResponse>(line).unwrap(),
        response
    );
    let request = crate::wire::host::HostRequest::PruneImages { dry_run: false };
    assert_eq!(
        serde_json::to_string(&request).unwrap(),
        r#"{"cmd":"prune_images"}"#
    );
}
