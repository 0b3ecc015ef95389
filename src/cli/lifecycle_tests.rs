//! Which agents `--all` picks, when waiting ends, and the daemon's "still
//! in progress" answer.

use super::*;
use crate::service::HiveError;

fn row(running: bool, failed: bool) -> AgentStatusRow {
    AgentStatusRow {
        running,
        failed,
        ..crate::testing::status_row("a")
    }
}

#[test]
fn the_daemons_still_running_answer_is_recognised_by_its_code_and_nothing_else_is() {
    // What used to break: a spawn past the 4 s answer budget exited 1; then
    // hivectl matched the message's words, which any rewording broke.
    let err = HiveError::StillRunning {
        verb: "spawn",
        agents: vec!["alice".into()],
    };
    assert!(still_in_progress(&HostResponse::error(
        err.code(),
        "reworded at will"
    )));
    let unknown = HiveError::UnknownAgent(Ident::new("zed").unwrap());
    assert!(!still_in_progress(&HostResponse::error(
        unknown.code(),
        "zed is still in progress"
    )));
    assert!(!still_in_progress(&HostResponse::success()));
}

#[test]
fn all_stops_the_running_and_starts_the_stopped() {
    let stop = Verb::Stop {
        graceful: true,
        deadline_secs: None,
    };
    assert!(applies(stop, &row(true, false)));
    assert!(!applies(stop, &row(false, false)));
    assert!(!applies(stop, &row(false, true)));
    assert!(applies(Verb::Start, &row(false, true)));
    assert!(!applies(Verb::Start, &row(true, false)));
}

#[test]
fn waiting_ends_when_the_agent_is_there_failed_or_gone() {
    let stop = Verb::Stop {
        graceful: false,
        deadline_secs: None,
    };
    assert_eq!(progress(stop, Some(&row(true, false))), Progress::Pending);
    assert_eq!(progress(stop, Some(&row(false, false))), Progress::Done);
    assert_eq!(
        progress(Verb::Spawn, Some(&row(false, false))),
        Progress::Pending
    );
    assert_eq!(
        progress(Verb::Spawn, Some(&row(true, false))),
        Progress::Done
    );
    assert_eq!(
        progress(Verb::Start, Some(&row(false, true))),
        Progress::Failed
    );
    assert_eq!(progress(Verb::Restart, None), Progress::Gone);
}

/// Used to be: `restart` took one name and restarted whatever it was
/// given; `--all` now restarts (and signals) what runs, as `restart-all`.
#[test]
fn all_restarts_and_signals_only_what_runs_and_destroy_never_takes_all() {
    let hup = Verb::Signal(crate::wire::host::Signal::Hup);
    for verb in [Verb::Restart, hup] {
        assert!(applies(verb, &row(true, false)), "{verb:?}");
        assert!(!applies(verb, &row(false, false)), "{verb:?}");
        assert!(verb.takes_all() && verb.names_managed_agents());
    }
    assert!(!Verb::Destroy { purge: false }.takes_all());
    assert!(Verb::Destroy { purge: false }.names_managed_agents());
    assert!(
        !Verb::Destroy { purge: true }.names_managed_agents(),
        "--purge deletes a destroyed agent's leftovers"
    );
}

#[test]
fn a_destroy_is_done_when_the_agent_leaves_the_roster_and_a_signal_once_sent() {
    let destroy = Verb::Destroy { purge: false };
    assert_eq!(progress(destroy, None), Progress::Done);
    assert_eq!(
        progress(destroy, Some(&row(false, false))),
        Progress::Pending
    );
    let hup = Verb::Signal(crate::wire::host::Signal::Hup);
    assert_eq!(progress(hup, Some(&row(true, false))), Progress::Done);
    assert_eq!(progress(hup, None), Progress::Gone);
}
