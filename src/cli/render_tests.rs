use super::*;
use crate::wire::host::SessionState;
use crate::wire::host::{ApprovalKind, ApprovalStatus};

fn plain() -> Style {
    Style::default()
}

fn name(n: &str) -> Ident {
    Ident::new(n).unwrap()
}

fn row(n: &str) -> AgentStatusRow {
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
fn the_agent_list_is_one_name_per_line() {
    assert_eq!(agent_list(&[name("a"), name("b-2")]), "a\nb-2\n");
    assert_eq!(agent_list(&[]), "");
}

#[test]
fn the_approvals_table_shows_times_in_utc_and_joins_description_and_note() {
    let pending = Approval {
        id: 7,
        agent: name("alice"),
        kind: ApprovalKind::Spawn,
        commit_ref: String::new(),
        fetched_sha: None,
        requested_at: 1_796_040_000,
        status: ApprovalStatus::Pending,
        resolved_at: None,
        note: None,
        description: Some("spawn helper".into()),
    };
    let failed = Approval {
        id: 12,
        kind: ApprovalKind::ApplyCommit,
        commit_ref: "0123456789abcdef".into(),
        status: ApprovalStatus::Failed,
        note: Some("build failed".into()),
        description: None,
        ..pending.clone()
    };
    assert_eq!(
        approvals_table(
            &[pending.clone(), failed.clone()],
            &Style {
                history: true,
                ..plain()
            }
        ),
        "\
ID  AGENT  KIND          STATUS   REQUESTED             REF               DETAIL
7   alice  spawn         pending  2026-11-30T12:00:00Z  -                 spawn helper
12  alice  apply_commit  failed   2026-11-30T12:00:00Z  0123456789abcdef  note: build failed
"
    );
    assert_eq!(
        approvals_table(
            &[],
            &Style {
                history: true,
                ..plain()
            }
        ),
        "no approvals\n"
    );
    // Without --all, only what waits for the operator.
    assert_eq!(
        approvals_table(&[pending, failed.clone()], &plain()),
        "ID  AGENT  KIND   STATUS   REQUESTED             REF  DETAIL\n\
         7   alice  spawn  pending  2026-11-30T12:00:00Z  -    spawn helper\n"
    );
    assert_eq!(
        approvals_table(&[failed], &plain()),
        "no pending approvals (`hivectl pending --all` shows the history)\n"
    );
}

#[test]
fn unix_seconds_render_as_rfc3339_utc() {
    assert_eq!(crate::clock::rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(crate::clock::rfc3339(951_782_400), "2000-02-29T00:00:00Z");
    assert_eq!(
        crate::clock::rfc3339(1_796_040_000 + 61),
        "2026-11-30T12:01:01Z"
    );
    assert_eq!(crate::clock::rfc3339(-1), "1969-12-31T23:59:59Z");
}

#[test]
fn urls_list_only_what_is_configured() {
    let u = HiveUrls {
        domain: Some("hive.example".into()),
        home: Some("https://hive.example/".into()),
        forge: None,
        matrix: Some("https://chat.hive.example/".into()),
    };
    assert_eq!(
        urls(&u),
        "domain  hive.example\nhome    https://hive.example/\nmatrix  https://chat.hive.example/\n"
    );
    assert_eq!(urls(&HiveUrls::default()), "no domain or URLs configured\n");
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
fn write_verbs_say_what_they_did() {
    let ok = HostResponse::success();
    let said = |req: HostRequest| answer(&req, &ok, &plain());
    assert_eq!(
        said(HostRequest::Approve { id: 3 }),
        "approval 3: approved\n"
    );
    assert_eq!(
        said(HostRequest::SetPaused {
            name: name("a"),
            paused: true
        }),
        "a: paused\n"
    );
    assert_eq!(
        said(HostRequest::Destroy {
            name: name("a"),
            purge: false
        }),
        "a: destroyed (state kept; `destroy --purge a` deletes it)\n"
    );
    assert_eq!(
        said(HostRequest::SetParent {
            child: name("a"),
            new_parent: None
        }),
        "a: now a root agent\n"
    );
}

#[test]
fn journal_entries_print_short_cat_or_json() {
    let e = JournalEntry {
        time_us: Some(0),
        identifier: Some("hive-c0re".into()),
        message: "spawned alice\x1b[2J".into(),
        ..JournalEntry::default()
    };
    let entries = [e];
    assert_eq!(journal(&entries, JournalFormat::Cat), "spawned alice [2J\n");
    let json = journal(&entries, JournalFormat::Json);
    let back: JournalEntry = serde_json::from_str(json.trim_end()).unwrap();
    assert_eq!(back, entries[0]);
    assert!(journal(&entries, JournalFormat::Short).contains("hive-c0re"));
}

#[test]
fn the_answer_of_status_is_the_table_of_its_rows() {
    let resp = HostResponse::agent_statuses(vec![row("a")]);
    assert_eq!(
        answer(&HostRequest::AgentStatus, &resp, &plain()),
        status_table(&[row("a")], &plain())
    );
}

#[test]
fn the_inbox_table_is_newest_first_with_clean_bodies_and_reply_ids() {
    let rows = vec![
        InboxRow {
            id: 9,
            from: "bob".into(),
            body: "done\u{1b}[2J".into(),
            at: 1_796_040_000,
            in_reply_to: Some(4),
        },
        InboxRow {
            id: 4,
            from: "alice".into(),
            body: "hello".into(),
            at: 1_796_040_000,
            in_reply_to: None,
        },
    ];
    assert_eq!(
        inbox_table(&rows),
        "ID  AT                    FROM   REPLY-TO  BODY\n\
         9   2026-11-30T12:00:00Z  bob    4         done [2J\n\
         4   2026-11-30T12:00:00Z  alice  -         hello\n"
    );
    assert_eq!(inbox_table(&[]), "no messages\n");
}

#[test]
fn a_question_asked_by_an_agent_cannot_smuggle_escape_sequences_into_the_table() {
    let q = WireQuestion {
        id: 3,
        asker: "alice".into(),
        target: None,
        question: "ok?\u{1b}[2J\nrm -rf".into(),
        options: vec!["yes".into(), "no".into()],
        multi: false,
        asked_at: 1_796_040_000,
        expires_at: None,
    };
    assert_eq!(
        questions_table(&[q]),
        "ID  ASKER  TO        ASKED                 EXPIRES  OPTIONS   QUESTION\n\
         3   alice  operator  2026-11-30T12:00:00Z  -        yes | no  ok? [2J rm -rf\n"
    );
    assert_eq!(questions_table(&[]), "no open questions\n");
}

#[test]
fn the_schedules_table_shows_the_next_fire_or_the_end_and_cancelled_targets() {
    use crate::wire::agenda::{WireScheduleSource, WireScheduleTarget};
    let target = |t: &str, cancelled: Option<i64>| WireScheduleTarget {
        target: t.into(),
        cancelled_at_unix: cancelled,
        last_fired_at_unix: None,
        last_result: None,
    };
    let live = WireSchedule {
        id: 1,
        owner: "ruth".into(),
        body: "standup".into(),
        interval_seconds: Some(86_400),
        next_fire_at_unix: 1_796_040_000,
        created_at_unix: 0,
        source: WireScheduleSource::Approval { id: 4 },
        cancelled_at_unix: None,
        description: None,
        targets: vec![target("alice", None), target("bob", Some(5))],
    };
    let ended = WireSchedule {
        id: 2,
        interval_seconds: None,
        cancelled_at_unix: Some(1_796_040_000),
        targets: vec![target("operator", Some(1_796_040_000))],
        ..live.clone()
    };
    assert_eq!(
        schedules_table(&[live, ended]),
        "ID  STATE                       REPEAT         TARGETS                 DESCRIPTION  BODY\n\
         1   next 2026-11-30T12:00:00Z   every 86400 s  alice, bob (cancelled)  -            standup\n\
         2   ended 2026-11-30T12:00:00Z  once           operator (cancelled)    -            standup\n"
    );
}

#[test]
fn the_swarm_status_table_names_each_agents_hive_and_quiet_prints_addresses() {
    let rows = [
        crate::wire::host::SwarmAgentRow {
            hive: name("hive-a"),
            published_at: 1,
            row: AgentStatusRow {
                running: true,
                ..row("alice")
            },
        },
        crate::wire::host::SwarmAgentRow {
            hive: name("hive-b"),
            published_at: 1,
            row: row("bob"),
        },
    ];
    let text = swarm_status_table(&rows, &plain());
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
        swarm_status_table(&rows, &quiet),
        "alice@hive-a\nbob@hive-b\n"
    );
    assert_eq!(
        swarm_status_table(&[], &plain()),
        "no agents in the swarm\n"
    );
}
