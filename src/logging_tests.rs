use super::*;

#[test]
fn a_journal_stream_naming_stderrs_device_and_inode_selects_the_journal() {
    assert!(stderr_is_journal(Some("8:1234"), Some((8, 1234))));
    assert!(stderr_is_journal(
        Some("64769:98765\n"),
        Some((64769, 98765))
    ));
}

#[test]
fn a_journal_stream_for_another_file_does_not_select_the_journal() {
    // What a child of a journald-logged service sees after its stderr
    // was redirected to a file: the variable is inherited, the fd is not.
    assert!(!stderr_is_journal(Some("8:1234"), Some((8, 1235))));
    assert!(!stderr_is_journal(Some("9:1234"), Some((8, 1234))));
}

#[test]
fn a_missing_or_malformed_journal_stream_does_not_select_the_journal() {
    for value in [
        "", "8", "8:", ":1234", "8:1234:5", "a:b", "-8:1234", "8 1234",
    ] {
        assert!(
            !stderr_is_journal(Some(value), Some((8, 1234))),
            "{value:?}"
        );
    }
    assert!(!stderr_is_journal(None, Some((8, 1234))));
    assert!(!stderr_is_journal(Some("8:1234"), None), "stderr closed");
}

#[test]
fn this_test_process_stderr_has_a_device_and_inode() {
    assert!(stderr_dev_ino().is_some());
}

#[test]
fn an_unset_or_empty_rust_log_means_info() {
    for value in [None, Some(""), Some("  ")] {
        let filter = env_filter(value).unwrap();
        assert_eq!(
            filter.max_level_hint(),
            Some(LevelFilter::INFO),
            "{value:?}"
        );
    }
}

#[test]
fn rust_log_directives_are_honoured() {
    let filter = env_filter(Some("hive_c0re=debug,warn")).unwrap();
    assert_eq!(filter.max_level_hint(), Some(LevelFilter::DEBUG));
}

#[test]
fn a_malformed_rust_log_is_an_error_quoting_it() {
    let err = env_filter(Some("hive_c0re=loud")).unwrap_err();
    assert!(
        err.to_string()
            .starts_with("RUST_LOG=\"hive_c0re=loud\" is not a valid log filter"),
        "{err}"
    );
}
