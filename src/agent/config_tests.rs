use super::*;

#[test]
fn an_unknown_key_is_an_error_naming_it_and_the_file() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(&path, r#"{"turn_timeout": 5}"#).unwrap();
    let err = RunConfig::load(Some(&path), None).unwrap_err().to_string();
    assert!(
        err.contains("c.json") && err.contains("turn_timeout"),
        "{err}"
    );
}

#[test]
fn the_env_command_replaces_the_files_and_must_be_an_argv() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("c.json");
    std::fs::write(
        &path,
        r#"{"claude_command": ["a"], "turn_timeout_seconds": 9}"#,
    )
    .unwrap();
    let c = RunConfig::load(Some(&path), Some(r#"["/bin/stand-in", "-x"]"#)).unwrap();
    assert_eq!(c.claude_command.unwrap(), ["/bin/stand-in", "-x"]);
    assert_eq!(c.turn_timeout_seconds, 9);
    let err = RunConfig::load(Some(&path), Some("/bin/sh -c x")).unwrap_err();
    assert!(err.to_string().contains("HIVE_CLAUDE_COMMAND"), "{err}");
    assert!(matches!(
        RunConfig::load(Some(&path), Some("[]")),
        Err(ConfigError::EmptyCommand)
    ));
}
