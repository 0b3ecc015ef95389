use super::*;
use crate::cli::action::Action;
use crate::cli::args::Cli;
use clap::Parser;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(
        ["hivectl", "budget"]
            .into_iter()
            .chain(args.iter().copied()),
    )
}

/// The request line `hivectl budget ARGS` sends.
fn line(args: &[&str]) -> String {
    match parse(args).unwrap().command.action() {
        Action::Call(request) => serde_json::to_string(&request).unwrap(),
        other => panic!("{args:?} is not a call: {other:?}"),
    }
}

#[test]
fn budget_lists_sets_on_an_agent_or_the_hive_and_unsets() {
    assert_eq!(line(&[]), r#"{"cmd":"budgets"}"#);
    assert_eq!(
        line(&["set", "alice", "20usd/day"]),
        r#"{"cmd":"set_budget","name":"alice","amount":"20usd/day"}"#
    );
    assert_eq!(
        line(&["set", "--hive", "5usd/5h"]),
        r#"{"cmd":"set_budget","hive":true,"amount":"5usd/5h"}"#
    );
    assert_eq!(
        line(&["unset", "alice"]),
        r#"{"cmd":"unset_budget","name":"alice"}"#
    );
    assert_eq!(
        line(&["unset", "--hive"]),
        r#"{"cmd":"unset_budget","hive":true}"#
    );
}

#[test]
fn a_bad_amount_or_a_missing_or_double_target_is_a_usage_error_naming_it() {
    let err = parse(&["set", "alice", "20dollars"])
        .unwrap_err()
        .to_string();
    assert!(
        err.contains(r#""20dollars" is not a budget amount"#) && err.contains("5usd/5h"),
        "{err}"
    );
    for args in [
        &["set", "alice"][..],
        &["set"],
        &["set", "alice", "1usd/day", "--hive", "1usd/day"],
        &["unset"],
        &["unset", "alice", "--hive"],
    ] {
        let err = parse(args).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{args:?}: {err}");
    }
}

#[test]
fn set_and_unset_say_what_they_did() {
    let set = HostRequest::SetBudget {
        name: None,
        hive: true,
        amount: "5usd/5h".parse().unwrap(),
    };
    assert_eq!(done(&set), "budget on the hive: 5usd/5h\n");
    let unset = HostRequest::UnsetBudget {
        name: Some(Ident::new("ann").unwrap()),
        hive: false,
    };
    assert_eq!(done(&unset), "budgets on ann and under unset\n");
}
