use super::*;

/// The README's block lists exactly the table's subjects (for `S`/`H`).
#[test]
fn the_readmes_permission_block_is_this_table() {
    let readme = include_str!("README.md");
    let block: Vec<String> = readme
        .lines()
        .skip_while(|l| !l.contains("publish: { allow: ["))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("] }"))
        .flat_map(|l| {
            let code = l.split('#').next().unwrap_or_default();
            code.split(',')
                .map(|s| s.trim().trim_matches('"').to_owned())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
        .collect();
    assert_eq!(block, publish_allow("S", "H"));
    assert!(readme.contains(&format!(
        "subscribe: {{ allow: [ \"{}\" ] }}",
        subscribe_allow("S", "H")[0]
    )));
}
