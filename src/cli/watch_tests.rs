//! `watch`'s screen: each row once, times on changes, removed agents.

use super::*;
use crate::clock::ManualClock;

fn row(name: &str, running: bool) -> AgentStatusRow {
    AgentStatusRow {
        running,
        ..crate::testing::status_row(name)
    }
}

#[test]
fn the_first_roster_is_printed_in_natural_order_without_times_and_changes_with_times() {
    let clock = ManualClock::new(1_780_000_000);
    let mut screen = Screen {
        last: BTreeMap::new(),
        clock: &clock,
        stamped: false,
    };
    let first = screen.roster(vec![row("a10", true), row("a2", false)]);
    assert_eq!(first, "a2: stopped\na10: running\n");
    screen.stamped = true;
    assert_eq!(
        screen.row(row("a2", true)),
        format!("{} a2: running\n", rfc3339(1_780_000_000))
    );
}

#[test]
fn an_unchanged_row_is_not_printed_twice() {
    let clock = ManualClock::new(0);
    let mut screen = Screen {
        last: BTreeMap::new(),
        clock: &clock,
        stamped: true,
    };
    assert!(!screen.row(row("alice", false)).is_empty());
    assert_eq!(screen.row(row("alice", false)), "");
    assert_eq!(screen.roster(vec![row("alice", false)]), "");
}

#[test]
fn an_agent_missing_from_the_roster_is_reported_removed_once() {
    let clock = ManualClock::new(0);
    let mut screen = Screen {
        last: BTreeMap::new(),
        clock: &clock,
        stamped: true,
    };
    screen.roster(vec![row("alice", true), row("bob", true)]);
    assert_eq!(
        screen.roster(vec![row("bob", true)]),
        "1970-01-01T00:00:00Z alice: removed\n"
    );
    assert_eq!(screen.roster(vec![row("bob", true)]), "");
}
