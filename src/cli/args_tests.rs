//! `hivectl`'s argument rules and the exact request each subcommand sends.

use super::*;
use crate::cli::action::{Action, Lifecycle, Verb, resolve_machine_name};
use clap::CommandFactory;

fn parse(args: &[&str]) -> Result<Cli, clap::Error> {
    Cli::try_parse_from(std::iter::once("hivectl").chain(args.iter().copied()))
}

/// The request line `args` would send, exactly as serde writes it (for a
/// lifecycle verb, to the agents it names).
fn line(args: &[&str]) -> String {
    match parse(args).unwrap().command.action() {
        Action::Call(request) => serde_json::to_string(&request).unwrap(),
        Action::Lifecycle(lc) => {
            let requests = lc.requests(&lc.names);
            assert_eq!(requests.len(), 1, "{args:?}");
            serde_json::to_string(&requests[0].0).unwrap()
        }
        other => panic!("{args:?} is not a call: {other:?}"),
    }
}

fn lifecycle(args: &[&str]) -> Lifecycle {
    match parse(args).unwrap().command.action() {
        Action::Lifecycle(lc) => lc,
        other => panic!("{args:?} is not a lifecycle verb: {other:?}"),
    }
}

#[test]
fn the_command_definition_is_consistent() {
    Cli::command().debug_assert();
}

/// Used to be: the help and the manual page listed 0 to 4 while the code
/// exits with 5 and 6 too.
#[test]
fn the_help_and_the_manual_page_list_every_exit_status_of_the_one_table() {
    use crate::wire::codes::exit;
    let statuses: Vec<u8> = exit::MEANINGS.iter().map(|(s, _)| *s).collect();
    assert_eq!(statuses, (exit::OK..=exit::HIVE_FAILED).collect::<Vec<_>>());
    let help = Cli::command().render_long_help().to_string();
    let page = crate::cli::man::exit_status_section();
    for (status, words) in exit::MEANINGS {
        assert!(
            help.contains(&format!("  {status}  {words}")),
            "{status} in {help}"
        );
        assert!(
            page.contains(&format!(".TP\n\\fB{status}\\fR\n")),
            "{status} in {page}"
        );
    }
    assert!(help.contains("5  not now") && page.contains("journalctl \\-u hive\\-c0re"));
}

#[test]
fn stop_is_graceful_by_default_and_force_or_kill_is_hard() {
    assert_eq!(
        line(&["stop", "alice"]),
        r#"{"cmd":"stop","scope":{"agent_names":["alice"],"agents":false,"ci":false,"forge":false,"gateway":false,"matrix":false},"graceful":true}"#
    );
    for args in [&["stop", "--force", "alice"][..], &["kill", "alice"]] {
        assert_eq!(
            line(args),
            r#"{"cmd":"stop","scope":{"agent_names":["alice"],"agents":false,"ci":false,"forge":false,"gateway":false,"matrix":false},"graceful":false}"#,
            "{args:?}"
        );
    }
    // The old spelling still parses and means the default.
    assert_eq!(
        lifecycle(&["stop", "--all", "--graceful"]).verb,
        Verb::Stop {
            graceful: true,
            deadline_secs: None
        }
    );
    assert!(
        line(&["stop", "-t", "30", "alice"]).ends_with(r#""graceful":true,"deadline_secs":30}"#)
    );
    assert!(parse(&["stop", "-t", "3", "--force", "a"]).is_err());
    assert!(parse(&["stop", "--graceful", "--force", "a"]).is_err());
}

#[test]
fn all_is_resolved_later_and_nothing_is_sent_for_no_targets() {
    let lc = lifecycle(&["stop", "--all"]);
    assert!(lc.all && lc.names.is_empty() && lc.block);
    assert!(lc.requests(&[]).is_empty());
    assert!(!lifecycle(&["start", "a", "--no-block"]).block);
}

/// The lines a lifecycle verb sends to the agents it names, each with the
/// agents it acts on.
fn lines(args: &[&str]) -> Vec<(String, Vec<String>)> {
    let lc = lifecycle(args);
    lc.requests(&lc.names)
        .into_iter()
        .map(|(request, names)| {
            let names = names.iter().map(ToString::to_string).collect();
            (serde_json::to_string(&request).unwrap(), names)
        })
        .collect()
}

#[test]
fn restart_kill_and_destroy_take_several_names_and_send_one_request_each() {
    let two = |a: &str, b: &str| {
        vec![
            (a.to_owned(), vec!["a".into()]),
            (b.to_owned(), vec!["b".into()]),
        ]
    };
    assert_eq!(
        lines(&["restart", "a", "b"]),
        two(
            r#"{"cmd":"restart","name":"a"}"#,
            r#"{"cmd":"restart","name":"b"}"#
        )
    );
    assert_eq!(
        lines(&["kill", "a", "b", "-s", "HUP"]),
        two(
            r#"{"cmd":"signal","name":"a","signal":"HUP"}"#,
            r#"{"cmd":"signal","name":"b","signal":"HUP"}"#
        )
    );
    assert_eq!(
        lines(&["destroy", "a", "b", "--purge"]),
        two(
            r#"{"cmd":"destroy","name":"a","purge":true}"#,
            r#"{"cmd":"destroy","name":"b","purge":true}"#
        )
    );
    // A hard kill of several is one scoped stop, as `stop --force`.
    let kill = lines(&["kill", "a", "b"]);
    assert_eq!(kill.len(), 1);
    assert_eq!(kill[0].1, ["a", "b"]);
    for verb in ["restart", "kill"] {
        let lc = lifecycle(&[verb, "--all"]);
        assert!(
            lc.all && lc.names.is_empty() && lc.verb.takes_all(),
            "{verb}"
        );
    }
}

#[test]
fn destroy_wants_names_and_its_all_is_parsed_only_to_be_refused() {
    assert!(parse(&["destroy"]).is_err(), "no name, no --all");
    assert!(parse(&["destroy", "a", "--all"]).is_err());
    let lc = lifecycle(&["destroy", "--all"]);
    assert!(lc.all && !lc.verb.takes_all());
    for verb in ["restart", "kill"] {
        assert!(parse(&[verb]).is_err(), "{verb} without a name or --all");
    }
}

#[test]
fn start_with_names_selects_only_those_agents() {
    assert_eq!(
        line(&["start", "alice", "bob"]),
        r#"{"cmd":"start","scope":{"agent_names":["alice","bob"],"agents":false,"ci":false,"forge":false,"gateway":false,"matrix":false}}"#
    );
}

#[test]
fn each_single_name_verb_sends_its_cmd_and_name() {
    for (args, want) in [
        (&["restart", "a"][..], r#"{"cmd":"restart","name":"a"}"#),
        (&["restart-all"], r#"{"cmd":"restart_all"}"#),
        (
            &["pause", "a"],
            r#"{"cmd":"set_paused","name":"a","paused":true}"#,
        ),
        (
            &["resume", "a"],
            r#"{"cmd":"set_paused","name":"a","paused":false}"#,
        ),
        (&["spawn", "a"], r#"{"cmd":"spawn","name":"a"}"#),
        (
            &["request-spawn", "a"],
            r#"{"cmd":"request_spawn","name":"a"}"#,
        ),
        (
            &["destroy", "a"],
            r#"{"cmd":"destroy","name":"a","purge":false}"#,
        ),
        (
            &["destroy", "a", "--purge"],
            r#"{"cmd":"destroy","name":"a","purge":true}"#,
        ),
        (&["rebuild", "a"], r#"{"cmd":"rebuild","name":"a"}"#),
        (&["status"], r#"{"cmd":"agent_status"}"#),
        (&["status", "--swarm"], r#"{"cmd":"swarm_status"}"#),
        (&["list"], r#"{"cmd":"list"}"#),
        (&["pending"], r#"{"cmd":"pending"}"#),
        (&["urls"], r#"{"cmd":"urls"}"#),
        (&["approve", "7"], r#"{"cmd":"approve","id":7}"#),
        (&["deny", "8"], r#"{"cmd":"deny","id":8}"#),
        (
            &["deny", "8", "--note", "keep 4G"],
            r#"{"cmd":"deny","id":8,"note":"keep 4G"}"#,
        ),
        (&["show", "8"], r#"{"cmd":"show","id":8}"#),
        (
            &["rollback", "alice", "3"],
            r#"{"cmd":"rollback","name":"alice","id":3}"#,
        ),
        (&["inbox"], r#"{"cmd":"inbox","limit":50}"#),
        (&["inbox", "-n", "3"], r#"{"cmd":"inbox","limit":3}"#),
        (&["inbox", "show", "7"], r#"{"cmd":"inbox","id":7}"#),
        (
            &["send", "alice", "hello there"],
            r#"{"cmd":"send","to":"alice","body":"hello there"}"#,
        ),
        (
            &["send", "bob@hive-b", "hi"],
            r#"{"cmd":"send","to":"bob","body":"hi","hive":"hive-b"}"#,
        ),
    ] {
        assert_eq!(line(args), want, "{args:?}");
    }
}

#[test]
fn agenda_verbs_send_their_cmd_and_fields() {
    for (args, want) in [
        (&["questions"][..], r#"{"cmd":"questions"}"#),
        (
            &["answer", "3", "yes, ship it"],
            r#"{"cmd":"answer","id":3,"answer":"yes, ship it"}"#,
        ),
        (&["schedules"], r#"{"cmd":"schedules"}"#),
        (
            &["cancel-schedule", "4"],
            r#"{"cmd":"cancel_schedule","id":4}"#,
        ),
        (
            &["cancel-schedule", "4", "--target", "alice"],
            r#"{"cmd":"cancel_schedule","id":4,"targets":["alice"]}"#,
        ),
        (&["grants"], r#"{"cmd":"grants"}"#),
        (&["grants", "alice"], r#"{"cmd":"grants","name":"alice"}"#),
        (
            &["grant", "alice", "--capability", "query_agent_state"],
            r#"{"cmd":"grant","name":"alice","capability":"query_agent_state"}"#,
        ),
        (
            &["revoke", "alice", "--tool-group", "web_tools"],
            r#"{"cmd":"revoke","name":"alice","tool_group":"web_tools"}"#,
        ),
        (
            &["grant", "alice", "--egress", "PyPI.org:443", "--for", "2h"],
            r#"{"cmd":"grant","name":"alice","egress":"pypi.org:443","expires_in_secs":7200}"#,
        ),
        (
            &["grant", "alice", "--egress", "*.pypi.org"],
            r#"{"cmd":"grant","name":"alice","egress":"*.pypi.org"}"#,
        ),
        (
            &["revoke", "alice", "--egress", "pypi.org:443"],
            r#"{"cmd":"revoke","name":"alice","egress":"pypi.org:443"}"#,
        ),
    ] {
        assert_eq!(line(args), want, "{args:?}");
    }
}

#[test]
fn grant_needs_exactly_one_known_capability_or_tool_group() {
    assert!(parse(&["grant", "alice"]).is_err());
    assert!(parse(&["grant", "alice", "--capability", "root"]).is_err());
    assert!(
        parse(&[
            "grant",
            "alice",
            "--capability",
            "query_agent_state",
            "--tool-group",
            "meta"
        ])
        .is_err()
    );
}

#[test]
fn an_egress_grant_takes_a_valid_pattern_and_for_only_with_egress() {
    for bad in ["*", "http://pypi.org", "pypi.org:0", "a b"] {
        assert!(
            parse(&["grant", "alice", "--egress", bad]).is_err(),
            "{bad}"
        );
    }
    assert!(parse(&["grant", "alice", "--tool-group", "meta", "--for", "1h"]).is_err());
    assert!(
        parse(&[
            "grant",
            "alice",
            "--egress",
            "x.org",
            "--tool-group",
            "meta"
        ])
        .is_err()
    );
    for (text, secs) in [("90s", 90), ("30m", 1800), ("2h", 7200), ("1d", 86_400)] {
        let args = ["grant", "alice", "--egress", "x.org", "--for", text];
        assert!(
            line(&args).ends_with(&format!(r#""expires_in_secs":{secs}}}"#)),
            "{text}"
        );
    }
    for bad in ["90", "0h", "2w", "h", "-1s"] {
        let args = ["grant", "alice", "--egress", "x.org", "--for", bad];
        assert!(parse(&args).is_err(), "{bad}");
    }
}

#[test]
fn set_parent_sends_the_parent_or_null_for_root() {
    assert_eq!(
        line(&["set-parent", "alice", "ruth"]),
        r#"{"cmd":"set_parent","child":"alice","new_parent":"ruth"}"#
    );
    assert_eq!(
        line(&["set-parent", "alice", "--root"]),
        r#"{"cmd":"set_parent","child":"alice","new_parent":null}"#
    );
}

#[test]
fn set_parent_needs_exactly_one_of_parent_and_root() {
    assert!(parse(&["set-parent", "alice"]).is_err());
    assert!(parse(&["set-parent", "alice", "ruth", "--root"]).is_err());
}

#[test]
fn start_or_stop_without_names_or_all_is_a_usage_error() {
    for args in [&["start"][..], &["stop"], &["stop", "--graceful"]] {
        let err = parse(args).unwrap_err();
        assert_eq!(err.exit_code(), 2, "{args:?}");
    }
}

#[test]
fn names_and_all_together_are_a_usage_error() {
    let err = parse(&["stop", "alice", "--all"]).unwrap_err();
    assert_eq!(err.exit_code(), 2);
}

#[test]
fn a_bad_name_is_a_usage_error_naming_the_value() {
    let err = parse(&["kill", "../etc"]).unwrap_err();
    assert_eq!(err.exit_code(), 2);
    assert!(err.to_string().contains("invalid name \"../etc\""), "{err}");
}

#[test]
fn the_default_socket_is_the_runtime_dirs_host_sock() {
    let cmd = Cli::command();
    let socket = cmd
        .get_arguments()
        .find(|a| a.get_id() == "socket")
        .unwrap();
    assert_eq!(socket.get_default_values(), ["/run/hyperhive/host.sock"]);
    assert_eq!(socket.get_env(), Some(std::ffi::OsStr::new("HIVE_SOCKET")));
}

#[test]
fn global_flags_are_accepted_after_the_subcommand() {
    let cli = parse(&["status", "--json", "--socket", "/tmp/x.sock"]).unwrap();
    assert!(cli.json);
    assert_eq!(cli.socket, PathBuf::from("/tmp/x.sock"));
}

#[test]
fn watch_completions_and_man_are_not_calls() {
    assert_eq!(parse(&["watch"]).unwrap().command.action(), Action::Watch);
    assert_eq!(
        parse(&["version"]).unwrap().command.action(),
        Action::Version
    );
    assert_eq!(
        parse(&["completions", "zsh"]).unwrap().command.action(),
        Action::Completions(clap_complete::Shell::Zsh)
    );
    assert_eq!(
        parse(&["man", "--out", "/tmp/m"]).unwrap().command.action(),
        Action::Man(PathBuf::from("/tmp/m"))
    );
}

#[test]
fn journal_names_an_agent_by_its_name_and_sends_its_machine() {
    for args in [
        &["journal", "--agent", "alice"][..],
        &["journal", "--container", "alice"],
    ] {
        assert!(line(args).contains(r#""container":"h-alice""#), "{args:?}");
    }
}

#[test]
fn a_machine_name_resolves_to_its_agent_unless_an_agent_has_that_name() {
    let n = |s: &str| Ident::new(s).unwrap();
    let managed = [n("alice"), n("h-bob")];
    assert_eq!(resolve_machine_name(&n("h-alice"), &managed), n("alice"));
    assert_eq!(resolve_machine_name(&n("alice"), &managed), n("alice"));
    assert_eq!(resolve_machine_name(&n("h-bob"), &managed), n("h-bob"));
    assert_eq!(resolve_machine_name(&n("h-zed"), &managed), n("h-zed"));
}

#[test]
fn send_refuses_an_address_with_a_bad_half_naming_it() {
    for bad in ["bob@", "@hive-b", "bob@Hive", "bob@a@b"] {
        let err = parse(&["send", bad, "x"]).unwrap_err().to_string();
        assert!(err.contains("invalid name"), "{bad}: {err}");
    }
}
