use super::*;

fn argv(v: &[&str]) -> Vec<String> {
    v.iter().map(|s| (*s).to_owned()).collect()
}

#[tokio::test]
async fn appended_values_are_arguments_never_shell_syntax() {
    let out = run("x", &argv(&["/bin/echo"]), &["a;b", "$(id)", "--x"])
        .await
        .unwrap();
    assert_eq!(out, "a;b $(id) --x\n");
}

#[tokio::test]
async fn a_failing_command_reports_its_status_and_stderr_tail() {
    let err = run("x", &argv(&["/bin/ls", "/nonexistent-dir"]), &[])
        .await
        .unwrap_err();
    let text = err.to_string();
    assert!(
        text.starts_with("/bin/ls failed (exit status: 2): "),
        "{text}"
    );
    assert!(text.contains("nonexistent-dir"), "{text}");
}

#[tokio::test]
async fn an_empty_argv_names_the_setting_to_fill_in() {
    let err = run("approval_command", &[], &[]).await.unwrap_err();
    assert_eq!(
        err.to_string(),
        "no command is configured for this; set `approval_command` in the config"
    );
}

#[test]
fn the_last_line_skips_trailing_blank_lines() {
    assert_eq!(
        last_line("a\n/nix/store/x-system\n\n"),
        "/nix/store/x-system"
    );
}

#[tokio::test]
async fn input_reaches_the_commands_stdin_and_one_that_ignores_it_still_succeeds() {
    let out = run_fed("x", &argv(&["/bin/cat"]), &[], Some(b"{\"event\":1}\n"))
        .await
        .unwrap();
    assert_eq!(out, "{\"event\":1}\n");
    let big = vec![b'x'; 1 << 20];
    run_fed("x", &argv(&["/bin/true"]), &[], Some(&big))
        .await
        .unwrap();
}
