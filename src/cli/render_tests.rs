use super::*;
use crate::cli::roster::tests::{name, plain, row};
use crate::wire::host::{ApprovalKind, ApprovalStatus};

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
fn write_verbs_say_what_they_did() {
    let ok = HostResponse::success();
    let said = |req: HostRequest| answer(&req, &ok, &plain());
    assert_eq!(
        said(HostRequest::Approve {
            id: 3,
            expires_in_secs: None
        }),
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

/// Used to be: a journal read that matched nothing printed nothing.
#[test]
fn a_journal_read_that_matches_nothing_says_so_except_to_scripts() {
    assert_eq!(journal(&[], JournalFormat::Short), "-- No entries --\n");
    assert_eq!(journal(&[], JournalFormat::Cat), "");
    assert_eq!(journal(&[], JournalFormat::Json), "");
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

use crate::testing::inbox_message as message;

#[test]
fn a_whole_message_keeps_its_lines_and_loses_its_control_characters() {
    let long = "x".repeat(300);
    let body = format!("first line\x1b[2J\n{long}\r\nlast");
    let rows = [message(3, "other", None), message(7, &body, Some(2))];
    assert_eq!(
        inbox_message(&rows, 7),
        format!(
            "id:        7\nfrom:      alice\nat:        1970-01-02T00:00:00Z\nreply to:  2\n\n\
             first line [2J\n{long}\nlast\n"
        )
    );
    assert!(!inbox_message(&rows, 3).contains("reply to"));
}
