use super::*;

fn strings(args: &[OsString]) -> Vec<String> {
    args.iter()
        .map(|a| a.to_string_lossy().into_owned())
        .collect()
}

fn host_args(query: &JournalQuery) -> Vec<String> {
    strings(&query.args(&JournalSource::Host, false))
}

fn agent(name: &str) -> Ident {
    Ident::new(name).unwrap()
}

#[test]
fn an_empty_query_reads_the_host_journal_as_json_without_filters() {
    assert_eq!(
        host_args(&JournalQuery::default()),
        ["--no-pager", "--quiet", "--output=json"]
    );
}

#[test]
fn every_filter_becomes_one_option_equals_value_element() {
    let query = JournalQuery {
        machine: Some(agent("iris")),
        unit: Some(UnitFilter::new("hive-c0re.service").unwrap()),
        priority: Some(JournalPriority::Warning),
        grep: Some(GrepPattern::new("spawn(ed)? [a-z]+").unwrap()),
        since: Some(TimeSpec::new("since", "2026-11-30 12:00:00").unwrap()),
        until: Some(TimeSpec::new("until", "now").unwrap()),
        lines: Some(7),
    };
    assert_eq!(
        strings(&query.args(&JournalSource::Host, true)),
        [
            "--no-pager",
            "--quiet",
            "--output=json",
            "--machine=h-iris",
            "--unit=hive-c0re.service",
            "--priority=warning",
            "--grep=spawn(ed)? [a-z]+",
            "--since=2026-11-30 12:00:00",
            "--until=now",
            "--lines=7",
            "--follow",
        ]
    );
}

#[test]
fn a_grep_that_looks_like_an_option_stays_the_value_of_grep() {
    // The attack: a pattern that journalctl would read as `--output=json`
    // (or any option) if it were its own argv element.
    let query = JournalQuery {
        grep: Some(GrepPattern::new("--output=json").unwrap()),
        ..JournalQuery::default()
    };
    let args = host_args(&query);
    assert_eq!(
        args.last().map(String::as_str),
        Some("--grep=--output=json")
    );
    assert_eq!(args.iter().filter(|a| a.starts_with("--output")).count(), 1);
}

#[test]
fn a_since_that_starts_with_a_dash_is_accepted_inside_its_option() {
    let query = JournalQuery {
        since: Some(TimeSpec::new("since", "-1h").unwrap()),
        until: Some(TimeSpec::new("until", "-5min").unwrap()),
        ..JournalQuery::default()
    };
    let args = host_args(&query);
    assert!(args.contains(&"--since=-1h".to_owned()), "{args:?}");
    assert!(args.contains(&"--until=-5min".to_owned()), "{args:?}");
    assert!(!args.contains(&"-1h".to_owned()), "never a bare element");
}

#[test]
fn units_with_spaces_semicolons_or_a_leading_dash_are_refused_naming_the_filter() {
    for bad in [
        "x y.service",
        "a;rm -rf /",
        "-o",
        "--output=export",
        "a\nb",
        "",
        "$(id)",
        "a/b.service",
        &"u".repeat(257),
    ] {
        let err = UnitFilter::new(bad).unwrap_err();
        assert_eq!(err.filter, "unit");
        assert!(
            err.to_string().starts_with("invalid journal filter unit"),
            "{err}"
        );
    }
}

#[test]
fn unit_names_templates_and_globs_are_accepted() {
    for ok in [
        "hive-c0re.service",
        "hive-c0re",
        "systemd-nspawn@h-iris.service",
        "container@h-a.service",
        "dev-disk-by\\x2duuid.device",
        "systemd-*",
        "user@[0-9]?.service",
    ] {
        assert_eq!(UnitFilter::new(ok).unwrap().as_str(), ok);
    }
}

#[test]
fn grep_patterns_with_control_characters_or_too_long_are_refused() {
    for bad in ["", "a\nb", "a\0b", "\u{1b}[31m", &"g".repeat(513)] {
        assert_eq!(GrepPattern::new(bad).unwrap_err().filter, "grep");
    }
    assert!(GrepPattern::new("^error: .*(timeout|refused)$").is_ok());
}

#[test]
fn times_outside_journalctls_vocabulary_are_refused_with_the_filters_name() {
    for bad in [
        "",
        "   ",
        "1h; reboot",
        "now\n",
        "$(date)",
        "a'b",
        &"1".repeat(65),
    ] {
        let err = TimeSpec::new("until", bad).unwrap_err();
        assert_eq!(err.filter, "until", "{bad:?}");
    }
    for ok in [
        "-1h",
        "+5min",
        "yesterday",
        "@1764500000",
        "2026-11-30T12:00:00Z",
    ] {
        assert!(TimeSpec::new("since", ok).is_ok(), "{ok}");
    }
}

#[test]
fn a_container_must_be_h_dash_an_agent_name() {
    assert_eq!(agent_of_container("h-iris").unwrap(), agent("iris"));
    for bad in [
        "iris",
        "h-",
        "h-Iris",
        "h-../x",
        "--machine=x",
        "h-a b",
        "host",
    ] {
        let err = agent_of_container(bad).unwrap_err();
        assert_eq!(err.filter, "container", "{bad:?}");
    }
}

#[test]
fn host_journal_requests_default_to_thirty_lines_and_are_clamped_to_a_hundred() {
    let default = JournalQuery::host_journal(&HostJournalRequest::default()).unwrap();
    assert_eq!(default.lines, Some(30));
    let big = HostJournalRequest {
        lines: Some(5000),
        ..HostJournalRequest::default()
    };
    assert_eq!(JournalQuery::host_journal(&big).unwrap().lines, Some(100));
    let small = HostJournalRequest {
        lines: Some(3),
        ..HostJournalRequest::default()
    };
    assert_eq!(JournalQuery::host_journal(&small).unwrap().lines, Some(3));
}

#[test]
fn a_host_journal_request_is_refused_at_its_first_bad_filter() {
    let request = HostJournalRequest {
        container: Some("h-iris"),
        unit: Some("bad unit"),
        ..HostJournalRequest::default()
    };
    assert_eq!(
        JournalQuery::host_journal(&request).unwrap_err().filter,
        "unit"
    );
    let request = HostJournalRequest {
        container: Some("h-iris"),
        unit: Some("sshd.service"),
        priority: Some(JournalPriority::Err),
        grep: Some("oom"),
        since: Some("-1h"),
        until: Some("now"),
        lines: None,
    };
    let query = JournalQuery::host_journal(&request).unwrap();
    assert_eq!(query.machine, Some(agent("iris")));
    assert_eq!(query.priority, Some(JournalPriority::Err));
}

#[test]
fn agent_logs_read_the_agents_machine_with_default_and_clamped_lines() {
    let query = JournalQuery::agent_logs(agent("iris"), None);
    assert_eq!(
        host_args(&query),
        [
            "--no-pager",
            "--quiet",
            "--output=json",
            "--machine=h-iris",
            "--lines=30"
        ]
    );
    assert_eq!(
        JournalQuery::agent_logs(agent("iris"), Some(1_000_000)).lines,
        Some(1000)
    );
}

#[test]
fn a_directory_source_reads_that_directory_and_a_machine_from_its_subdirectory() {
    let dir = JournalSource::from_config(Some(Path::new("/tmp/j dir")));
    let args = strings(&JournalQuery::default().args(&dir, false));
    assert_eq!(args[3], "--directory=/tmp/j dir");
    let args = strings(&JournalQuery::agent_logs(agent("iris"), None).args(&dir, false));
    assert_eq!(args[3], "--directory=/tmp/j dir/h-iris");
    assert!(!args.iter().any(|a| a.starts_with("--machine")), "{args:?}");
    assert_eq!(JournalSource::from_config(None), JournalSource::Host);
}

#[test]
fn a_follow_with_an_until_is_refused_naming_until_and_one_without_passes() {
    let request = HostJournalRequest {
        until: Some("-1h"),
        ..HostJournalRequest::default()
    };
    let err = JournalQuery::host_journal(&request)
        .unwrap()
        .followed()
        .unwrap_err();
    assert_eq!(err.filter, "until");
    assert!(err.to_string().contains("drop \"until\""), "{err}");
    let request = HostJournalRequest {
        since: Some("-1h"),
        ..HostJournalRequest::default()
    };
    let query = JournalQuery::host_journal(&request).unwrap();
    assert_eq!(query.clone().followed().unwrap(), query);
}

#[test]
fn a_machine_id_is_32_lowercase_hex_digits_and_makes_a_merge_and_one_match() {
    let id = MachineId::parse("0123456789abcdef0123456789abcdef\n").unwrap();
    assert_eq!(
        strings(&id.host_follow_args()),
        ["--merge", "_MACHINE_ID=0123456789abcdef0123456789abcdef"]
    );
    for bad in [
        "",
        "0123456789abcdef0123456789abcde",
        "0123456789ABCDEF0123456789abcdef",
        "0123456789abcdef0123456789abcdef0",
        "--follow=0123456789abcdef0123456",
        "uninitialized",
    ] {
        assert_eq!(MachineId::parse(bad), None, "{bad:?}");
    }
}
