use super::*;

use crate::containers::RepoBinds;
use crate::testing::id;

fn spec() -> ContainerSpec {
    ContainerSpec {
        runtime_dir: "/run/hyperhive/agents/alice".into(),
        state_dir: "/var/lib/hyperhive/agents/alice".into(),
        cpu_quota: None,
        memory_max: None,
        tasks_max: None,
        env: vec![("HIVE_CAPABILITIES".into(), "spawn, ask".into())],
        repos: None,
        system: None,
    }
}

#[test]
fn the_nspawn_file_binds_the_agent_dirs_and_sets_its_environment() {
    let text = render_nspawn(&id("alice"), &spec(), 0x0012_0000, &Usr::Host).unwrap();
    let expected = "# Written by hive-c0re for agent alice; rewritten on rebuild.\n\
            [Exec]\nPrivateUsers=1179648:65536\n\
            DropCapability=CAP_NET_RAW CAP_MKNOD CAP_LINUX_IMMUTABLE CAP_SYS_TTY_CONFIG \
            CAP_AUDIT_CONTROL CAP_AUDIT_WRITE\n\
            Environment=\"HIVE_CAPABILITIES=spawn, ask\"\n\n\
            [Files]\nPrivateUsersOwnership=chown\nBindReadOnly=/usr\n\
            Bind=/run/hyperhive/agents/alice:/run/hive\n\
            Bind=/var/lib/hyperhive/agents/alice:/var/lib/hive\n\n\
            [Network]\nPrivate=yes\nVirtualEthernet=no\n";
    assert_eq!(text, expected);
    let file = NspawnFile {
        spec: spec(),
        base: Some(0x0012_0000),
        usr: Usr::Host,
    };
    assert_eq!(parse_nspawn(&text), Some(file));
}

/// A container of a self-contained image (`bind_host_usr: false`) gets
/// nothing of the host's `/usr`, and reads back as such.
#[test]
fn the_nspawn_file_of_an_image_agent_binds_no_host_usr() {
    let text = render_nspawn(&id("alice"), &spec(), 0x0012_0000, &Usr::Own).unwrap();
    assert!(!text.contains("/usr"), "{text}");
    assert!(text.contains("Bind=/var/lib/hyperhive/agents/alice:/var/lib/hive\n"));
    let file = parse_nspawn(&text).unwrap();
    assert_eq!(file.usr, Usr::Own);
    assert_eq!(file.spec, spec());
}

/// An agent of the shared image binds its version's `usr` read-only on
/// `/usr`, and the file reads back that version: the record of what it
/// runs.
#[test]
fn the_nspawn_file_of_a_shared_image_agent_binds_its_version_read_only() {
    let usr = Usr::Shared("/var/lib/hive-images/20261207-1/usr".into());
    let text = render_nspawn(&id("alice"), &spec(), 0x0012_0000, &usr).unwrap();
    assert!(
        text.contains("\nBindReadOnly=/var/lib/hive-images/20261207-1/usr:/usr\n"),
        "{text}"
    );
    let file = parse_nspawn(&text).unwrap();
    assert_eq!((file.usr, file.spec), (usr, spec()));
    let odd = Usr::Shared("/var/lib/hive images/usr".into());
    assert!(render_nspawn(&id("alice"), &spec(), 0x0012_0000, &odd).is_err());
}

/// The file an earlier version wrote (no user namespace, host network)
/// still yields its binds and environment, so the first start after
/// the upgrade can rewrite it; an installation's own file is not ours.
#[test]
fn a_file_of_the_version_before_user_ranges_is_read_back_and_others_are_not_ours() {
    let old = "# Written by hive-c0re for agent alice; rewritten on rebuild.\n\
            [Exec]\nPrivateUsers=no\nEnvironment=\"HIVE_CAPABILITIES=spawn, ask\"\n\n\
            [Files]\nBindReadOnly=/usr\n\
            Bind=/run/hyperhive/agents/alice:/run/hive\n\
            Bind=/var/lib/hyperhive/agents/alice:/var/lib/hive\n\n\
            [Network]\nVirtualEthernet=no\n";
    let file = NspawnFile {
        spec: spec(),
        base: None,
        usr: Usr::Host,
    };
    assert_eq!(parse_nspawn(old), Some(file));
    assert_eq!(parse_nspawn("[Exec]\nPrivateUsers=no\n"), None);
    let no_binds = "# Written by hive-c0re for agent a; rewritten on rebuild.\n[Exec]\n";
    assert_eq!(parse_nspawn(no_binds), None);
}

#[test]
fn a_bind_path_with_a_colon_or_dotdot_is_refused_by_name() {
    for bad in ["/run/a:b", "/run/../etc", "relative/dir", "/run/a b"] {
        let mut s = spec();
        s.runtime_dir = bad.into();
        let err = render_nspawn(&id("a"), &s, 0x8_0000, &Usr::Host)
            .unwrap_err()
            .to_string();
        assert!(err.contains(bad), "{err}");
    }
}

#[test]
fn an_environment_value_that_would_break_the_file_is_refused() {
    for (k, v) in [
        ("A", "x\ny"),
        ("A", "say \"hi\""),
        ("1A", "x"),
        ("A-B", "x"),
    ] {
        let mut s = spec();
        s.env = vec![(k.into(), v.into())];
        assert!(
            render_nspawn(&id("a"), &s, 0x8_0000, &Usr::Host).is_err(),
            "{k}={v:?}"
        );
    }
}

/// alice's nixos container config for `s`, system `abc-system`, her user
/// range at 0x100000.
fn alice_nixos_conf(s: &ContainerSpec) -> String {
    render_nixos_conf(
        &id("alice"),
        Path::new("/nix/store/abc-system"),
        s,
        0x0010_0000,
    )
    .unwrap()
}

#[test]
fn the_nixos_conf_names_the_system_and_passes_binds_as_flags() {
    let mut s = spec();
    s.env = vec![("HIVE_X".into(), "1".into())];
    let text = alice_nixos_conf(&s);
    assert!(
        text.contains("SYSTEM_PATH=/nix/store/abc-system\n"),
        "{text}"
    );
    assert!(text.contains(
        " --bind=/run/hyperhive/agents/alice:/run/hive \
             --bind=/var/lib/hyperhive/agents/alice:/var/lib/hive --setenv=HIVE_X=1\"\n"
    ));
    assert!(render_nixos_conf(&id("alice"), Path::new("/nix/store/x"), &spec(), 0).is_err());
}

/// Issue 27: the nixos profile's containers are isolated as the nspawn
/// profile's are (same range, no network but loopback, fewer capabilities).
#[test]
fn the_nixos_conf_gives_the_container_its_user_range_and_no_network_but_loopback() {
    let mut s = spec();
    s.env.clear();
    let text = alice_nixos_conf(&s);
    let line = |key: &str| {
        text.lines()
            .find_map(|l| l.strip_prefix(key))
            .unwrap_or_else(|| panic!("no {key} in {text}"))
            .to_owned()
    };
    assert_eq!(line("PRIVATE_NETWORK="), "1");
    assert!(!text.contains("HOST_ADDRESS") && !text.contains("LOCAL_ADDRESS"));
    assert!(!text.contains("PRIVATE_USERS="), "{text}");
    let flags = line("EXTRA_NSPAWN_FLAGS=");
    let flags: Vec<&str> = flags.trim_matches('"').split(' ').collect();
    assert!(
        flags.contains(&"--private-users=1048576:65536"),
        "{flags:?}"
    );
    assert!(
        flags.contains(&"--private-users-ownership=chown"),
        "{flags:?}"
    );
    assert!(
        flags.contains(
            &"--drop-capability=CAP_NET_RAW,CAP_MKNOD,CAP_LINUX_IMMUTABLE,\
              CAP_SYS_TTY_CONFIG,CAP_AUDIT_CONTROL,CAP_AUDIT_WRITE"
        ),
        "{flags:?}"
    );
    assert!(text.starts_with(HEADER), "{text}");
}

#[test]
fn files_are_named_after_the_machine_and_replaced_whole() {
    let dir = tempfile::tempdir().unwrap();
    let path = nspawn_path(&dir.path().join("nspawn"), &id("alice"));
    assert!(path.ends_with("nspawn/h-alice.nspawn"));
    write_atomically(&path, "one").unwrap();
    write_atomically(&path, "two").unwrap();
    assert_eq!(std::fs::read_to_string(&path).unwrap(), "two");
    let names: Vec<_> = std::fs::read_dir(path.parent().unwrap()).unwrap().collect();
    assert_eq!(names.len(), 1, "no temporary file is left behind");
    remove(&path).unwrap();
    remove(&path).unwrap();
    assert!(!path.exists());
    assert!(nixos_conf_path(dir.path(), &id("bob")).ends_with("h-bob.conf"));
}

/// The manager's file binds the proposed repos read-write at
/// `/hive/proposed` and the applied ones read-only at `/hive/applied`,
/// and reads back with them; an agent's file has neither.
#[test]
fn the_managers_file_binds_the_proposed_repos_read_write_and_the_applied_read_only() {
    let mut s = spec();
    s.repos = Some(RepoBinds {
        proposed: "/var/lib/hyperhive/proposed".into(),
        applied: "/var/lib/hyperhive/applied".into(),
    });
    let text = render_nspawn(&id("ruth"), &s, 0x0012_0000, &Usr::Own).unwrap();
    let files = text.split("[Files]\n").nth(1).unwrap();
    assert!(
        files.starts_with(
            "PrivateUsersOwnership=chown\n\
             Bind=/run/hyperhive/agents/alice:/run/hive\n\
             Bind=/var/lib/hyperhive/agents/alice:/var/lib/hive\n\
             Bind=/var/lib/hyperhive/proposed:/hive/proposed\n\
             BindReadOnly=/var/lib/hyperhive/applied:/hive/applied\n\n"
        ),
        "{text}"
    );
    assert_eq!(parse_nspawn(&text).unwrap().spec, s);
    let agent = render_nspawn(&id("alice"), &spec(), 0x0012_0000, &Usr::Own).unwrap();
    assert!(!agent.contains("/hive/"), "{agent}");
    assert_eq!(parse_nspawn(&agent).unwrap().spec.repos, None);
}

#[test]
fn a_repo_bind_path_that_would_break_the_file_is_refused_by_name() {
    for (proposed, applied) in [("/var/a:b", "/var/c"), ("/var/a", "/var/../etc")] {
        let mut s = spec();
        s.repos = Some(RepoBinds {
            proposed: proposed.into(),
            applied: applied.into(),
        });
        let err = render_nspawn(&id("ruth"), &s, 0x8_0000, &Usr::Own)
            .unwrap_err()
            .to_string();
        assert!(err.contains("repos directory"), "{err}");
    }
}

/// An agent of the nixos profile made before user ranges moves into its
/// range on its first start after the upgrade, its system and binds kept.
#[test]
fn an_old_nixos_conf_is_moved_into_a_user_range_with_its_system_and_binds() {
    let old = "# Written by hive-c0re for agent alice; rewritten on rebuild.\n\
        SYSTEM_PATH=/nix/store/abc-system\nPRIVATE_NETWORK=0\nAUTO_START=0\n\
        EXTRA_NSPAWN_FLAGS=\"--bind=/run/hyperhive/agents/alice:/run/hive \
        --bind=/var/lib/hyperhive/agents/alice:/var/lib/hive --setenv=HIVE_X=1\"\n";
    let (text, state, runtime) = isolate_nixos_conf(old, 0x0010_0000).unwrap();
    assert_eq!(state, Path::new("/var/lib/hyperhive/agents/alice"));
    assert_eq!(runtime, Path::new("/run/hyperhive/agents/alice"));
    let mut s = spec();
    s.env = vec![("HIVE_X".into(), "1".into())];
    let fresh = alice_nixos_conf(&s);
    assert_eq!(text, fresh);
    assert_eq!(isolate_nixos_conf(&text, 0x0010_0000), None, "done once");
    assert_eq!(isolate_nixos_conf("SYSTEM_PATH=/x\n", 0), None, "not ours");
}

/// Issue 28: the nixos profile's manager sees the config repos as the
/// nspawn profile's does, and the driver reads the binds back (a manager
/// container made before them gets them at its next start).
#[test]
fn the_managers_nixos_conf_binds_the_repos_and_reads_them_back() {
    let mut s = spec();
    s.env.clear();
    s.repos = Some(RepoBinds {
        proposed: "/var/lib/hyperhive/proposed".into(),
        applied: "/var/lib/hyperhive/applied".into(),
    });
    let text = alice_nixos_conf(&s);
    assert!(
        text.contains(
            " --bind=/var/lib/hyperhive/proposed:/hive/proposed \
             --bind-ro=/var/lib/hyperhive/applied:/hive/applied\"\n"
        ),
        "{text}"
    );
    let (state, runtime, repos) = nixos_conf_binds(&text).unwrap();
    assert_eq!(state, s.state_dir);
    assert_eq!(runtime, s.runtime_dir);
    assert_eq!(repos, s.repos);
    s.repos = None;
    let agent = alice_nixos_conf(&s);
    assert!(!agent.contains("/hive/"), "{agent}");
    assert_eq!(nixos_conf_binds(&agent).unwrap().2, None);
    assert_eq!(nixos_conf_binds("SYSTEM_PATH=/x\n"), None, "not ours");
}
