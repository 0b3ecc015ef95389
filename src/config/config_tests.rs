use super::*;

#[test]
fn an_unknown_config_key_is_an_error_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, r#"{"stop_deadline_sec": 5}"#).unwrap();
    let err = Config::load(&path).unwrap_err();
    let chain = format!("{:#}", anyhow::Error::from(err));
    assert!(
        chain.contains("unknown field `stop_deadline_sec`"),
        "{chain}"
    );
}

#[test]
fn a_swarm_section_needs_the_hive_and_swarm_names() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, r#"{"swarm": {"urls": ["nats://127.0.0.1:4222"]}}"#).unwrap();
    let err = Config::load(&path).unwrap_err().to_string();
    assert!(err.contains("no `hive_name`"), "{err}");
    std::fs::write(
            &path,
            r#"{"hive_name": "hive-a", "swarm_name": "s", "swarm": {"urls": ["nats://127.0.0.1:4222"]}}"#,
        )
        .unwrap();
    let c = Config::load(&path).unwrap();
    assert_eq!(c.swarm_hive().map(Ident::as_str), Some("hive-a"));
    assert_eq!(c.swarm.unwrap().replicas, 3);
}

#[test]
fn without_a_swarm_section_the_hive_is_alone_even_with_a_name() {
    let c = Config {
        hive_name: Some(Ident::new("hive-a").unwrap()),
        ..Config::default()
    };
    assert_eq!(c.swarm_hive(), None);
}

#[test]
fn a_partial_config_keeps_the_other_defaults() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, r#"{"domain": "hive.example", "profile": "nixos"}"#).unwrap();
    let c = Config::load(&path).unwrap();
    assert_eq!(c.domain.as_deref(), Some("hive.example"));
    assert_eq!(c.profile, Profile::Nixos);
    assert_eq!(c.stop_deadline_secs, 30);
    assert_eq!(c.host_socket(), PathBuf::from("/run/hyperhive/host.sock"));
}

#[test]
fn flags_override_the_file_and_unset_flags_keep_its_values() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(
        &path,
        r#"{"domain": "hive.example", "state_dir": "/srv/h"}"#,
    )
    .unwrap();
    let c = Config::with_overrides(Overrides {
        file: Some(path),
        runtime_dir: Some("/tmp/rt".into()),
        driver: Some(DriverKind::Fake),
        ..Overrides::default()
    })
    .unwrap();
    assert_eq!(c.domain.as_deref(), Some("hive.example"));
    assert_eq!(c.state_dir, PathBuf::from("/srv/h"));
    assert_eq!(c.runtime_dir, PathBuf::from("/tmp/rt"));
    assert_eq!(c.driver, DriverKind::Fake);
}

#[test]
fn no_agent_may_reach_any_host_by_default_not_even_the_model_past_its_gateway() {
    // Issue 46: the model's API is reached through the model gateway,
    // where the host's credential and the meter are; on the list it would
    // let an agent's own key past both.
    assert_eq!(Config::default().egress_allow, Vec::<EgressPattern>::new());
    assert_eq!(Config::default().model_credential, None);
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, r#"{"model_credential": "anthropic"}"#).unwrap();
    let c = Config::load(&path).unwrap();
    assert_eq!(c.model_credential.unwrap().as_str(), "anthropic");
    std::fs::write(&path, r#"{"model_credential": "../etc/shadow"}"#).unwrap();
    let err = format!(
        "{:#}",
        anyhow::Error::from(Config::load(&path).unwrap_err())
    );
    assert!(err.contains("not a credential name"), "{err}");
}

#[test]
fn a_bad_egress_pattern_is_refused_naming_it() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, r#"{"egress_allow": ["pypi.org:443", "*"]}"#).unwrap();
    let err = format!(
        "{:#}",
        anyhow::Error::from(Config::load(&path).unwrap_err())
    );
    assert!(err.contains(r#"egress pattern "*""#), "{err}");
}

#[test]
fn budget_defaults_are_none_and_a_bad_amount_in_the_file_is_refused_naming_it() {
    let config = Config::default();
    assert!(config.budget_hive.is_empty() && config.budget_each_agent.is_empty());
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(
        &path,
        r#"{"budget_hive": ["100usd/day", "5000000tokens/day"], "budget_each_agent": ["2usd/5h"]}"#,
    )
    .unwrap();
    let c = Config::load(&path).unwrap();
    let hive: Vec<String> = c.budget_hive.iter().map(ToString::to_string).collect();
    assert_eq!(hive, ["100usd/day", "5000000tokens/day"]);
    assert_eq!(c.budget_each_agent[0].to_string(), "2usd/5h");
    std::fs::write(&path, r#"{"budget_hive": ["100 dollars"]}"#).unwrap();
    let err = format!(
        "{:#}",
        anyhow::Error::from(Config::load(&path).unwrap_err())
    );
    assert!(
        err.contains(r#""100 dollars" is not a budget amount"#),
        "{err}"
    );
}

/// Upgrades keep working: a config file of a release whose approvals ran
/// `approval_command` still loads, and the daemon is told to drop the key.
#[test]
fn an_old_config_with_approval_command_loads_and_is_told_the_key_is_deprecated() {
    let old = br#"{"approval_command":["/usr/local/bin/hive-approve"]}"#;
    let config = Config::parse(old, Path::new("/etc/hive-c0re/config.json")).unwrap();
    let said = config.deprecations();
    assert_eq!(said.len(), 1, "{said:?}");
    assert!(
        said[0].starts_with("approval_command is deprecated and ignored"),
        "{said:?}"
    );
    assert!(Config::default().deprecations().is_empty());
    assert_eq!(Config::default().nix_command, ["nix"]);
    assert_eq!(Config::default().meta_flake, None);
}

#[test]
fn agents_get_the_kernels_per_user_inotify_instances_and_room_for_a_repos_watches_by_default() {
    let c = Config::parse(b"{}", Path::new("c.json")).unwrap();
    assert_eq!(c.agent_inotify_instances.get(), 128);
    assert_eq!(c.agent_inotify_watches.get(), 65_536);
    let c = Config::parse(
        br#"{"agent_inotify_instances": 8, "agent_inotify_watches": 2147483647}"#,
        Path::new("c.json"),
    )
    .unwrap();
    assert_eq!(c.agent_inotify_instances.get(), 8);
    assert_eq!(c.agent_inotify_watches.get(), 2_147_483_647);
}

#[test]
fn an_inotify_cap_the_kernel_would_not_take_is_refused_saying_why() {
    // 0 would forbid inotify in the containers; past i32::MAX the sysctl
    // write would fail with EINVAL at every start.
    for (bad, why) in [
        (
            r#"{"agent_inotify_instances": 0}"#,
            "0 is not a count the kernel takes (1 to 2147483647)",
        ),
        (
            r#"{"agent_inotify_watches": 2147483648}"#,
            "2147483648 is not a count the kernel takes",
        ),
        (
            r#"{"agent_inotify_watches": -1}"#,
            "invalid value: integer `-1`",
        ),
    ] {
        let err = Config::parse(bad.as_bytes(), Path::new("c.json")).unwrap_err();
        let said = format!("{:#}", anyhow::Error::from(err));
        assert!(said.contains(why), "{bad}: {said}");
    }
}

#[test]
fn agents_get_a_ten_gib_and_million_inode_disk_quota_not_required_by_default() {
    let c = Config::parse(b"{}", Path::new("c.json")).unwrap();
    assert_eq!(c.agent_disk_quota, Some(10 * 1024 * 1024 * 1024));
    assert_eq!(c.agent_disk_inodes, 1_000_000);
    assert!(!c.agent_disk_quota_required);
    for (text, bytes) in [
        (r#"{"agent_disk_quota": "512M"}"#, Some(512u64 << 20)),
        (r#"{"agent_disk_quota": "2T"}"#, Some(2u64 << 40)),
        (r#"{"agent_disk_quota": 1073741824}"#, Some(1u64 << 30)),
        (r#"{"agent_disk_quota": "1073741824"}"#, Some(1u64 << 30)),
        (r#"{"agent_disk_quota": null}"#, None),
    ] {
        let c = Config::parse(text.as_bytes(), Path::new("c.json")).unwrap();
        assert_eq!(c.agent_disk_quota, bytes, "{text}");
    }
    let c = Config::parse(
        br#"{"agent_disk_inodes": 5000, "agent_disk_quota_required": true}"#,
        Path::new("c.json"),
    )
    .unwrap();
    assert_eq!(
        (c.agent_disk_inodes, c.agent_disk_quota_required),
        (5000, true)
    );
}

#[test]
fn a_disk_quota_that_is_not_a_size_or_is_below_a_mebibyte_is_refused_saying_why() {
    for (bad, why) in [
        (r#"{"agent_disk_quota": "10GB"}"#, r#""10GB" is not a size"#),
        (r#"{"agent_disk_quota": "ten"}"#, r#""ten" is not a size"#),
        (r#"{"agent_disk_quota": 0}"#, "0 bytes is below 1M"),
        (
            r#"{"agent_disk_quota": "512K"}"#,
            "524288 bytes is below 1M",
        ),
        (r#"{"agent_disk_quota": "99999999999T"}"#, "is not a size"),
    ] {
        let err = Config::parse(bad.as_bytes(), Path::new("c.json")).unwrap_err();
        let said = format!("{:#}", anyhow::Error::from(err));
        assert!(said.contains(why), "{bad}: {said}");
    }
}
