use super::*;

use crate::testing::id;

fn entry(mode: u32, size: u64, path: &str) -> TreeEntry {
    TreeEntry {
        kind: EntryKind::of_mode(mode),
        object: "0".repeat(40),
        size: (mode != 0o160000).then_some(size),
        path: path.as_bytes().to_vec(),
    }
}

fn base() -> Vec<TreeEntry> {
    vec![
        entry(0o100644, 40, "agent.json"),
        entry(0o100644, 10, "CLAUDE.md"),
    ]
}

fn refused(extra: TreeEntry) -> String {
    let mut entries = base();
    entries.push(extra);
    check_tree(&entries).unwrap_err().to_string()
}

#[test]
fn an_agent_json_with_an_unknown_key_fails_naming_the_key() {
    let err = AgentConfig::parse(br#"{"model":"m","memory_limit":"4G"}"#).unwrap_err();
    assert!(err.to_string().contains("memory_limit"), "{err}");
    let ok = AgentConfig::parse(
        br#"{"model":"m","cpu_quota":"150%","memory_max":"2G","environment":{"A":"b"}}"#,
    )
    .unwrap();
    assert_eq!(ok.memory_max.as_deref(), Some("2G"));
    assert_eq!(AgentConfig::parse(&ok.to_text().into_bytes()).unwrap(), ok);
}

#[test]
fn agent_json_values_must_have_the_shapes_systemd_takes() {
    for bad in [
        r#"{"cpu_quota":"200"}"#,
        r#"{"cpu_quota":"0%"}"#,
        r#"{"memory_max":"4GB"}"#,
        r#"{"memory_max":"-1"}"#,
        r#"{"tasks_max":0}"#,
        r#"{"tasks_max":-5}"#,
        r#"{"tasks_max":"4096"}"#,
        r#"{"environment":{"HIVE_CAPABILITIES":"all"}}"#,
        r#"{"environment":{"A":"x\ny"}}"#,
        r#"{"environment":{"1A":"x"}}"#,
        r#"{"model":""}"#,
        r#"[]"#,
    ] {
        assert!(AgentConfig::parse(bad.as_bytes()).is_err(), "{bad}");
    }
    assert!(AgentConfig::parse(br#"{"memory_max":"infinity","cpu_quota":"12.5%"}"#).is_ok());
    let zero = AgentConfig::parse(br#"{"tasks_max":0}"#).unwrap_err();
    assert!(zero.to_string().contains("\"tasks_max\" is 0"), "{zero}");
    assert_eq!(
        AgentConfig::parse(br#"{"tasks_max":512}"#)
            .unwrap()
            .tasks_max,
        Some(512)
    );
}

#[test]
fn a_tree_with_agent_json_and_claude_files_passes() {
    let mut entries = base();
    entries.push(entry(0o100644, 3, ".claude/settings.json"));
    entries.push(entry(0o120000, 9, "link"));
    entries.push(entry(0o100755, 9, ".claude/commands/x.sh"));
    assert_eq!(check_tree(&entries), Ok(()));
}

#[test]
fn gitlinks_gitmodules_and_escaping_paths_are_refused_by_name() {
    assert!(refused(entry(0o160000, 0, "sub")).contains("gitlink"));
    assert!(refused(entry(0o100644, 1, ".gitmodules")).contains("submodules"));
    assert!(refused(entry(0o100644, 1, "a/.GitModules")).contains("submodules"));
    for bad in [
        ".git/config",
        "a/.GIT/hooks/x",
        "../x",
        "a/../b",
        "/etc/x",
        "a//b",
        ".git. /x",
    ] {
        assert!(
            refused(entry(0o100644, 1, bad)).contains("escapes"),
            "{bad}"
        );
    }
    assert!(refused(entry(0o100644, 1, "a\nb")).contains("control"));
    assert!(refused(entry(0o040000, 1, "dir")).contains("mode"));
}

#[test]
fn files_and_trees_over_their_caps_are_refused() {
    let err = refused(entry(0o100644, MAX_FILE_BYTES + 1, "huge.bin"));
    assert!(err.contains("huge.bin") && err.contains("cap"), "{err}");
    let mut many = base();
    for i in 0..9 {
        many.push(entry(0o100644, MAX_FILE_BYTES, &format!("f{i}")));
    }
    assert!(
        check_tree(&many)
            .unwrap_err()
            .to_string()
            .contains("the tree is")
    );
    let mut lots = base();
    lots.extend((0..MAX_ENTRIES).map(|i| entry(0o100644, 1, &format!("f{i}"))));
    assert!(
        check_tree(&lots)
            .unwrap_err()
            .to_string()
            .contains("entries")
    );
}

#[test]
fn a_tree_without_agent_json_is_refused() {
    let err = check_tree(&[entry(0o100644, 1, "CLAUDE.md")]).unwrap_err();
    assert!(err.to_string().contains("agent.json is missing"), "{err}");
    let err = check_tree(&[entry(0o120000, 1, "agent.json")]).unwrap_err();
    assert!(err.to_string().contains("agent.json"), "{err}");
}

#[test]
fn a_symlink_may_point_only_inside_the_tree() {
    let link = entry(0o120000, 1, "l");
    for good in ["CLAUDE.md", "./a/b", ".claude/settings.json"] {
        assert_eq!(check_symlink(&link, good.as_bytes()), Ok(()), "{good}");
    }
    for bad in ["/etc/shadow", "../x", "a/../../x", ".git/config", ""] {
        assert!(check_symlink(&link, bad.as_bytes()).is_err(), "{bad}");
    }
}

#[test]
fn ls_tree_output_is_read_with_modes_sizes_and_raw_paths() {
    let out = b"100644 blob aaaa      12\tagent.json\x00160000 commit bbbb       -\tsub\x00\
120000 blob cccc       3\ta b\x00";
    let entries = parse_ls_tree(out).unwrap();
    assert_eq!(entries.len(), 3);
    assert_eq!(
        (entries[0].kind, entries[0].size),
        (EntryKind::File, Some(12))
    );
    assert_eq!(
        (entries[1].kind, entries[1].size),
        (EntryKind::Gitlink, None)
    );
    assert_eq!(entries[2].path, b"a b");
    assert!(parse_ls_tree(b"garbage\0").is_err());
}

#[test]
fn the_template_holds_a_valid_agent_json_and_passes_the_tree_rules() {
    let config = AgentConfig {
        memory_max: Some("4G".into()),
        ..AgentConfig::default()
    };
    let files = template(&id("kid"), &config, false);
    let json = &files.iter().find(|(p, _)| p == AGENT_JSON).unwrap().1;
    assert_eq!(AgentConfig::parse(json).unwrap(), config);
    let entries: Vec<TreeEntry> = files
        .iter()
        .map(|(p, b)| entry(0o100644, b.len() as u64, p))
        .collect();
    assert_eq!(check_tree(&entries), Ok(()));
    assert_eq!(Tag::Deployed.name(0), "deployed/0");
    assert_eq!(incoming_ref(7), "refs/hive/incoming/7");
}

#[test]
fn the_nixos_template_adds_a_documented_agent_nix_that_the_nspawn_one_lacks() {
    let config = AgentConfig::default();
    let nixos = template(&id("kid"), &config, true);
    let nix = &nixos.iter().find(|(p, _)| p == AGENT_NIX).unwrap().1;
    let nix = String::from_utf8_lossy(nix);
    assert!(nix.contains("{ pkgs, ... }:"), "{nix}");
    let readme = &nixos.iter().find(|(p, _)| p == "README.md").unwrap().1;
    assert!(String::from_utf8_lossy(readme).contains("## agent.nix"));
    let plain = template(&id("kid"), &config, false);
    assert!(plain.iter().all(|(p, _)| p != AGENT_NIX));
    let readme = &plain.iter().find(|(p, _)| p == "README.md").unwrap().1;
    assert!(!String::from_utf8_lossy(readme).contains("agent.nix"));
}

#[test]
fn agent_json_egress_patterns_are_checked_by_the_egress_validator_and_capped() {
    let ok = AgentConfig::parse(br#"{"egress":["PyPI.org:443","*.example.com"]}"#).unwrap();
    let names: Vec<String> = ok.egress.iter().map(|p| p.to_string()).collect();
    assert_eq!(names, ["pypi.org:443", "*.example.com"]);
    assert_eq!(AgentConfig::parse(&ok.to_text().into_bytes()).unwrap(), ok);
    for bad in ["*", "http://pypi.org", "pypi.org:0", "a b"] {
        let text = format!(r#"{{"egress":["{bad}"]}}"#);
        let err = AgentConfig::parse(text.as_bytes()).unwrap_err().to_string();
        assert!(
            err.contains(AGENT_JSON) && err.contains("host[:port]"),
            "{bad}: {err}"
        );
    }
    let many: Vec<String> = (0..=MAX_EGRESS)
        .map(|i| format!("\"h{i}.example\""))
        .collect();
    let text = format!(r#"{{"egress":[{}]}}"#, many.join(","));
    let err = AgentConfig::parse(text.as_bytes()).unwrap_err().to_string();
    assert!(err.contains("at most 100"), "{err}");
    // An agent.json without the key is written without it.
    assert!(!AgentConfig::default().to_text().contains("egress"));
}
