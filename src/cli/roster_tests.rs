//! The roster's words: STATE, uptime, natural order, the status tables
//! and `watch`'s lines.

use super::*;
use crate::cli::args::TableView;
use crate::wire::host::SessionState;

pub(crate) fn plain() -> Style {
    Style::default()
}

pub(crate) fn name(n: &str) -> Ident {
    Ident::new(n).unwrap()
}

pub(crate) fn row(n: &str) -> AgentStatusRow {
    crate::testing::status_row(n)
}

#[test]
fn the_status_table_has_one_state_column_and_dashes_for_absent_values() {
    let alice = AgentStatusRow {
        running: true,
        needs_update: true,
        needs_login: true,
        pending_reminders: 2,
        parent: Some(name("ruth")),
        active_model: Some("opus".into()),
        status_text: Some("triaging".into()),
        status_set_at: Some("2026-11-30T12:00:00Z".into()),
        ..row("alice")
    };
    let ruth = AgentStatusRow {
        failed: true,
        paused: true,
        ..row("ruth")
    };
    assert_eq!(
        status_table(&[alice, ruth], &plain()),
        "\
NAME   STATE    NEEDS         REMINDERS  PARENT  MODEL  STATUS
alice  running  update,login  2          ruth    opus   triaging
ruth   failed   -             -          -       -      -
"
    );
}

#[test]
fn columns_empty_in_every_row_are_left_out_and_names_sort_naturally() {
    let rows = [
        row("a10"),
        row("a2"),
        AgentStatusRow {
            running: true,
            ..row("a1")
        },
    ];
    assert_eq!(
        status_table(&rows, &plain()),
        "NAME  STATE\na1    running\na2    stopped\na10   stopped\n"
    );
}

#[test]
fn quiet_prints_names_only_and_no_legend_drops_the_header() {
    let rows = [row("b"), row("a")];
    let quiet = Style {
        view: TableView {
            quiet: true,
            no_legend: false,
        },
        ..plain()
    };
    assert_eq!(status_table(&rows, &quiet), "a\nb\n");
    let bare = Style {
        view: TableView {
            quiet: false,
            no_legend: true,
        },
        ..plain()
    };
    assert_eq!(status_table(&rows, &bare), "a  stopped\nb  stopped\n");
    assert_eq!(status_table(&[], &bare), "");
}

#[test]
fn the_state_is_coloured_only_when_asked_and_widths_ignore_the_codes() {
    let rows = [
        AgentStatusRow {
            running: true,
            ..row("alice")
        },
        row("bo"),
    ];
    let colour = Style {
        colour: true,
        ..plain()
    };
    assert_eq!(
        status_table(&rows, &colour),
        "NAME   STATE\nalice  \x1b[32mrunning\x1b[0m\nbo     stopped\n"
    );
    assert!(!status_table(&rows, &plain()).contains('\x1b'));
}

#[test]
fn each_state_reads_as_one_word() {
    let r = |running, failed, paused| AgentStatusRow {
        running,
        failed,
        paused,
        ..row("a")
    };
    assert_eq!(state(&r(true, false, false)), "running");
    assert_eq!(state(&r(true, false, true)), "paused");
    assert_eq!(state(&r(false, true, false)), "failed");
    let killed = AgentStatusRow {
        failed: true,
        failure: Some("signal".into()),
        ..row("a")
    };
    assert_eq!(state(&killed), "failed (signal)");
    assert_eq!(state(&r(false, false, false)), "stopped");
    assert_eq!(state(&r(false, false, true)), "stopped, paused");
    // A crash is not an operator's stop, nor a failed start.
    let crashed = AgentStatusRow {
        crashed: true,
        ..killed.clone()
    };
    assert_eq!(state(&crashed), "crashed (signal)");
    let ended = AgentStatusRow {
        crashed: true,
        ..row("a")
    };
    assert_eq!(state(&ended), "crashed");
}

#[test]
fn uptime_is_a_column_of_its_own_only_when_some_agent_has_one() {
    let up = |name: &str, since: &str| AgentStatusRow {
        running: true,
        running_since: Some(since.into()),
        ..row(name)
    };
    let style = Style {
        now: 1_796_040_000 + 3 * 3600 + 5 * 60 + 7,
        ..plain()
    };
    let rows = [
        up("a", "2026-11-30T12:00:00Z"),
        up("b", "2026-11-30T15:04:20Z"),
        up("c", "2026-11-28T11:00:00Z"),
        row("d"),
    ];
    assert_eq!(
        status_table(&rows, &style),
        "NAME  STATE    UPTIME\n\
         a     running  3h 5m\n\
         b     running  47s\n\
         c     running  2d 4h\n\
         d     stopped  -\n"
    );
    // Not known (an older daemon, a unit systemd did not stamp): no column.
    let unknown = [AgentStatusRow {
        running: true,
        ..row("a")
    }];
    assert_eq!(
        status_table(&unknown, &style),
        "NAME  STATE\na     running\n"
    );
}

#[test]
fn natural_order_compares_digit_runs_by_value() {
    let mut names = vec!["a10", "a2", "b", "a1", "a02x", "a", "a2b"];
    names.sort_by(|a, b| natural_cmp(a, b));
    assert_eq!(names, ["a", "a1", "a2", "a2b", "a02x", "a10", "b"]);
}

#[test]
fn an_empty_roster_says_so_instead_of_printing_a_bare_header() {
    assert_eq!(status_table(&[], &plain()), "no managed agents\n");
}

#[test]
fn control_characters_in_agent_text_cannot_reach_the_terminal() {
    let sneaky = AgentStatusRow {
        status_text: Some("ok\n\x1b[2Jfake row\tx\u{9b}y".into()),
        ..row("mallory")
    };
    let out = status_table(&[sneaky], &plain());
    assert!(out.ends_with("ok  [2Jfake row x y\n"), "{out:?}");
    assert!(!out.chars().any(|c| c.is_control() && c != '\n'), "{out:?}");
    assert_eq!(out.lines().count(), 2, "{out:?}");
}

#[test]
fn long_status_text_is_shortened_in_the_table() {
    let chatty = AgentStatusRow {
        status_text: Some("x".repeat(200)),
        ..row("a")
    };
    let out = status_table(&[chatty], &plain());
    let last = out.lines().nth(1).unwrap();
    assert!(last.ends_with(&format!("{}…", "x".repeat(79))), "{last}");
}

#[test]
fn an_agent_waiting_on_a_person_says_needs_you_and_why_in_its_state() {
    let alice = AgentStatusRow {
        running: true,
        session_state: Some(SessionState::NeedsPermission),
        session_message: Some("Claude needs your permission to use Edit\n".into()),
        session_since: Some("2026-11-30T12:00:00Z".into()),
        ..row("alice")
    };
    let bob = AgentStatusRow {
        session_state: Some(SessionState::AwaitingReview),
        ..row("bob")
    };
    assert_eq!(
        state(&alice),
        "running, needs you: permission: Claude needs your permission to use Edit"
    );
    assert_eq!(
        status_line(&alice),
        "alice: running, needs you: permission: Claude needs your permission to use Edit\n"
    );
    assert_eq!(status_line(&bob), "bob: stopped, turn done\n");
}

#[test]
fn an_agent_held_by_a_budget_reads_paused_with_the_budgets_figures_and_needs_the_operator() {
    let alice = AgentStatusRow {
        running: true,
        budget: Some("$1.00 of $1.00 today for the hive".into()),
        ..row("alice")
    };
    assert_eq!(
        state(&alice),
        "running, paused: budget reached ($1.00 of $1.00 today for the hive)"
    );
    assert!(alice.needs_person(), "status --needs-me lists it");
}

#[test]
fn a_watched_row_reads_as_one_line() {
    let r = AgentStatusRow {
        running: true,
        paused: true,
        needs_update: true,
        needs_login: true,
        pending_reminders: 3,
        parent: Some(name("ruth")),
        status_text: Some("on it\n".into()),
        status_set_at: Some("2026-11-30T12:00:00Z".into()),
        ..row("alice")
    };
    assert_eq!(
        status_line(&r),
        "alice: paused, needs update and login, 3 reminders, parent ruth \
         — \"on it \" since 2026-11-30T12:00:00Z\n"
    );
    let crashed = AgentStatusRow {
        failed: true,
        ..row("bob")
    };
    assert_eq!(status_line(&crashed), "bob: failed\n");
}

#[test]
fn the_swarm_status_table_names_each_agents_hive_and_quiet_prints_addresses() {
    let rows = [
        crate::wire::host::SwarmAgentRow {
            hive: name("hive-a"),
            published_at: 1,
            stale: false,
            row: AgentStatusRow {
                running: true,
                ..row("alice")
            },
        },
        crate::wire::host::SwarmAgentRow {
            hive: name("hive-b"),
            published_at: 1,
            stale: false,
            row: row("bob"),
        },
    ];
    let text = swarm_status_table(&rows, None, &plain());
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].starts_with("HIVE"), "{text}");
    assert!(
        lines[1].starts_with("hive-a")
            && lines[1].contains("alice")
            && lines[1].contains("running"),
        "{text}"
    );
    assert!(
        lines[2].starts_with("hive-b") && lines[2].contains("bob") && lines[2].contains("stopped"),
        "{text}"
    );
    let quiet = Style {
        view: TableView {
            quiet: true,
            no_legend: false,
        },
        ..plain()
    };
    assert_eq!(
        swarm_status_table(&rows, None, &quiet),
        "alice@hive-a\nbob@hive-b\n"
    );
    assert_eq!(
        swarm_status_table(&[], None, &plain()),
        "no agents in the swarm\n"
    );
}

#[test]
fn a_stale_swarm_row_says_so_with_when_it_was_heard_and_the_bus_error_follows() {
    let rows = [crate::wire::host::SwarmAgentRow {
        hive: name("hive-b"),
        published_at: 1000,
        stale: true,
        row: AgentStatusRow {
            running: true,
            ..row("bob")
        },
    }];
    let style = Style {
        now: 1000 + 300,
        ..plain()
    };
    let error = crate::wire::host::BusError {
        at: 1000 + 240,
        error: "server error: Permissions Violation for Subscription to \"x\"".into(),
    };
    let text = swarm_status_table(&rows, Some(&error), &style);
    let lines: Vec<&str> = text.lines().collect();
    assert!(lines[0].contains("HEARD"), "{text}");
    assert!(
        lines[1].contains("stale: running") && lines[1].contains("5m ago"),
        "{text}"
    );
    assert_eq!(
        lines[2],
        "bus error 1m ago: server error: Permissions Violation for Subscription to \"x\""
    );
}

#[test]
fn the_status_table_says_what_each_agent_spent_today_when_one_did() {
    let alice = AgentStatusRow {
        running: true,
        spent_today_micro_usd: Some(1_250_000),
        ..row("alice")
    };
    assert_eq!(
        status_table(&[alice, row("bob")], &plain()),
        "NAME   STATE    TODAY\nalice  running  $1.25\nbob    stopped  -\n"
    );
}

/// Used to be: a booting agent read `stopped`, and a row that needs a
/// person was painted green like a healthy one.
#[test]
fn a_booting_agent_reads_starting_and_a_row_that_needs_you_is_not_green() {
    use crate::wire::roster::Transition;
    let booting = AgentStatusRow {
        transition: Some(Transition::Starting),
        ..row("alice")
    };
    assert_eq!(state(&booting), "starting");
    let going = AgentStatusRow {
        transition: Some(Transition::Stopping),
        paused: true,
        ..row("alice")
    };
    assert_eq!(state(&going), "stopping, paused");
    let waiting = AgentStatusRow {
        running: true,
        session_state: Some(SessionState::NeedsPermission),
        ..row("bob")
    };
    let colour = Style {
        colour: true,
        ..plain()
    };
    let table = status_table(&[booting, waiting], &colour);
    assert!(table.contains("\x1b[33mstarting"), "{table:?}");
    assert!(table.contains("\x1b[33mrunning, needs you"), "{table:?}");
    assert!(!table.contains("\x1b[32m"), "{table:?}");
}
