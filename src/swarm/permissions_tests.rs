use super::*;

/// The subjects of the README's `<what>: { allow: [` block (for `S`/`H`).
fn readme_block(what: &str) -> Vec<String> {
    include_str!("README.md")
        .lines()
        .skip_while(|l| !l.contains(&format!("{what}: {{ allow: [")))
        .skip(1)
        .take_while(|l| !l.trim_start().starts_with("] }"))
        .flat_map(|l| {
            let code = l.split('#').next().unwrap_or_default();
            code.split(',')
                .map(|s| s.trim().trim_matches('"').to_owned())
                .filter(|s| !s.is_empty())
                .collect::<Vec<_>>()
        })
        .collect()
}

/// The README's blocks list exactly the table's subjects.
#[test]
fn the_readmes_permission_block_is_this_table() {
    assert_eq!(readme_block("publish"), publish_allow("S", "H"));
    assert_eq!(readme_block("subscribe"), subscribe_allow("S", "H"));
}
