use super::*;

fn caps(instances: u32, watches: u32) -> InotifyCaps {
    InotifyCaps {
        instances: NonZeroU32::new(instances).unwrap(),
        watches: NonZeroU32::new(watches).unwrap(),
    }
}

#[test]
fn a_full_hive_needs_each_agents_cap_and_its_services_plus_the_hosts_reserve() {
    // 1,000 agents at 128 + 16 instances, plus root's own 128; watches
    // likewise.
    assert_eq!(host_needs(1000, caps(128, 65_536)), (144_128, 66_625_536));
    assert_eq!(host_needs(1, caps(1, 1)), (17 + 128, 1025 + 65_536));
}

#[test]
fn sysctl_text_is_read_as_a_number_or_not_at_all() {
    assert_eq!(parse_sysctl("128\n"), Some(128));
    assert_eq!(parse_sysctl(" 66625536 "), Some(66_625_536));
    assert_eq!(parse_sysctl(""), None);
    assert_eq!(parse_sysctl("-1\n"), None);
    assert_eq!(parse_sysctl("abc"), None);
}

#[test]
fn the_kernels_defaults_are_too_low_for_a_full_hive_and_both_limits_are_named() {
    // What a stock kernel has: 128 instances, 8,192+ watches.
    let said = host_shortfalls(Some(128), Some(122_389), 1000, caps(128, 65_536));
    assert_eq!(said.len(), 2, "{said:?}");
    assert!(
        said[0].starts_with("fs.inotify.max_user_instances is 128, below the 144128 needed"),
        "{}",
        said[0]
    );
    assert!(
        said[0].contains("at their inotify caps (1000 x (agent_inotify_instances 128 + 16) + 128")
    );
    assert!(
        said[1].starts_with("fs.inotify.max_user_watches is 122389, below the 66625536 needed"),
        "{}",
        said[1]
    );
}

#[test]
fn limits_that_hold_a_full_hive_say_nothing() {
    let (i, w) = host_needs(1000, caps(128, 65_536));
    assert!(host_shortfalls(Some(i), Some(w), 1000, caps(128, 65_536)).is_empty());
    assert!(
        host_shortfalls(
            Some(u64::MAX),
            Some(u64::MAX),
            usize::MAX,
            caps(128, 65_536)
        )
        .is_empty()
    );
    // One short of it is said.
    assert_eq!(
        host_shortfalls(Some(i - 1), Some(w), 1000, caps(128, 65_536)).len(),
        1
    );
}

#[test]
fn an_unreadable_limit_is_said_not_guessed() {
    let said = host_shortfalls(None, Some(u64::MAX), 10, caps(128, 65_536));
    assert_eq!(
        said,
        [
            "cannot read fs.inotify.max_user_instances: whether the host holds a full hive \
          is unknown"
        ]
    );
}

#[test]
fn the_helper_is_the_hidden_subcommand_with_the_leader_and_both_caps() {
    assert_eq!(
        helper_argv("/usr/local/bin/hive-c0re", 4242, caps(128, 65_536)),
        [
            "/usr/local/bin/hive-c0re",
            "limit-userns",
            "--leader",
            "4242",
            "--inotify-instances",
            "128",
            "--inotify-watches",
            "65536"
        ]
    );
    assert_eq!(helper_unit("h-alice"), "hive-c0re-limits-h-alice.service");
}

#[test]
fn the_helpers_unit_is_a_collected_oneshot_running_that_argv_without_a_network() {
    let argv = helper_argv("/bin/hc", 7, caps(1, 2));
    let props = transient_properties("/bin/hc", argv.clone(), "h-bob");
    let get = |k: &str| {
        props
            .iter()
            .find(|(name, _)| *name == k)
            .map(|(_, v)| v.clone())
            .unwrap()
    };
    assert_eq!(get("Type"), Value::from("oneshot"));
    assert_eq!(get("CollectMode"), Value::from("inactive-or-failed"));
    assert_eq!(get("PrivateNetwork"), Value::from(true));
    assert_eq!(get("NoNewPrivileges"), Value::from(true));
    assert_eq!(get("ProtectSystem"), Value::from("strict"));
    assert_eq!(
        get("ExecStart"),
        Value::from(vec![("/bin/hc".to_owned(), argv, false)])
    );
    // Not among them: ProtectKernelTunables=, which would make /proc/sys
    // read-only for the one write the helper is for.
    assert!(props.iter().all(|(k, _)| *k != "ProtectKernelTunables"));
}

#[test]
fn the_helper_refuses_its_own_user_namespace() {
    // Our own process shares our namespace: writing there would set the
    // host's (or the test runner's) limits, so it is refused before setns.
    let me = std::process::id();
    match apply(me, caps(128, 65_536)) {
        Err(HelperError::SharedNamespace { leader }) => assert_eq!(leader, me),
        other => panic!("expected SharedNamespace, got {other:?}"),
    }
}

#[test]
fn a_leader_that_is_gone_is_named() {
    // pid_max is at most 2^22: this pid never exists.
    match apply(u32::MAX, caps(1, 1)) {
        Err(e @ HelperError::Open { .. }) => {
            assert!(
                e.to_string()
                    .starts_with("cannot open /proc/4294967295/ns/user")
            )
        }
        other => panic!("expected Open, got {other:?}"),
    }
}
