use super::*;
use crate::wire::host::{ApprovalKind, ApprovalStatus};

fn name(n: &str) -> Ident {
    Ident::new(n).unwrap()
}

fn row(n: &str) -> AgentStatusRow {
    AgentStatusRow {
        name: name(n),
        running: false,
        failed: false,
        needs_update: false,
        needs_login: false,
        deployed_sha: None,
        pending_reminders: 0,
        paused: false,
        parent: None,
        active_model: None,
        status_text: None,
        status_set_at: None,
        url: None,
    }
}

#[test]
fn the_status_table_aligns_columns_and_shows_dashes_for_absent_values() {
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
        status_table(&[alice, ruth]),
        "\
NAME   RUNNING  FAILED  PAUSED  NEEDS         REMINDERS  PARENT  MODEL  STATUS
alice  yes      no      no      update,login  2          ruth    opus   triaging
ruth   no       yes     yes     -             0          -       -      -
"
    );
}

#[test]
fn an_empty_roster_says_so_instead_of_printing_a_bare_header() {
    assert_eq!(status_table(&[]), "no managed agents\n");
}

#[test]
fn control_characters_in_agent_text_cannot_reach_the_terminal() {
    let sneaky = AgentStatusRow {
        status_text: Some("ok\n\x1b[2Jfake row\tx\u{9b}y".into()),
        ..row("mallory")
    };
    let out = status_table(&[sneaky]);
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
    let out = status_table(&[chatty]);
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
        approvals_table(&[pending, failed]),
        "\
ID  AGENT  KIND          STATUS   REQUESTED             REF               DETAIL
7   alice  spawn         pending  2026-11-30T12:00:00Z  -                 spawn helper
12  alice  apply_commit  failed   2026-11-30T12:00:00Z  0123456789abcdef  note: build failed
"
    );
    assert_eq!(approvals_table(&[]), "no approvals\n");
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
        "alice: running, paused, needs update and login, 3 reminders, parent ruth \
         — \"on it \" since 2026-11-30T12:00:00Z\n"
    );
    let crashed = AgentStatusRow {
        failed: true,
        ..row("bob")
    };
    assert_eq!(status_line(&crashed), "bob: stopped, failed\n");
}

#[test]
fn write_verbs_print_nothing_on_success() {
    let req = HostRequest::Kill { name: name("a") };
    assert_eq!(answer(&req, &HostResponse::success()), "");
}

#[test]
fn the_answer_of_status_is_the_table_of_its_rows() {
    let resp = HostResponse::agent_statuses(vec![row("a")]);
    assert_eq!(
        answer(&HostRequest::AgentStatus, &resp),
        status_table(&[row("a")])
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
