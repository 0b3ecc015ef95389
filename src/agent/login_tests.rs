use super::*;

#[test]
fn credentials_in_the_config_dir_or_a_token_in_the_env_log_in() {
    let dir = tempfile::tempdir().unwrap();
    let none = |_: &str| None;
    assert!(!logged_in(dir.path(), none));
    std::fs::write(dir.path().join(CREDENTIALS_FILE), "").unwrap();
    assert!(!logged_in(dir.path(), none), "an empty file is no login");
    std::fs::write(dir.path().join(CREDENTIALS_FILE), "{\"x\":1}").unwrap();
    assert!(logged_in(dir.path(), none));
    let other = tempfile::tempdir().unwrap();
    assert!(logged_in(other.path(), |v| (v == "ANTHROPIC_API_KEY")
        .then(|| "sk-1".into())));
    assert!(!logged_in(other.path(), |_| Some("  ".into())));
}
