use super::*;

use crate::testing::id;

#[tokio::test]
async fn the_command_gets_the_machine_name_and_its_last_line_is_the_path() {
    let b = CommandBuilder::new(vec![
        "sh".into(),
        "-c".into(),
        "echo building; echo /nix/store/x-$0".into(),
    ]);
    assert_eq!(
        b.build(&id("alice")).await.unwrap(),
        PathBuf::from("/nix/store/x-h-alice")
    );
}

#[tokio::test]
async fn a_failing_build_reports_its_stderr() {
    let b = CommandBuilder::new(vec![
        "sh".into(),
        "-c".into(),
        "echo no such flake >&2; exit 3".into(),
    ]);
    let err = b.build(&id("a")).await.unwrap_err().to_string();
    assert!(
        err.contains("no such flake") && err.contains("h-a"),
        "{err}"
    );
    let b = CommandBuilder::new(vec!["echo".into()]);
    assert!(matches!(
        b.build(&id("a")).await,
        Err(BuildError::NoPath { .. })
    ));
    assert!(matches!(
        CommandBuilder::new(vec![]).build(&id("a")).await,
        Err(BuildError::Command {
            cause: CommandError::NotConfigured { .. },
            ..
        })
    ));
}
