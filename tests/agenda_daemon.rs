//! The agenda through the real daemon (fake driver): the operator's
//! host.sock verbs and hivectl subcommands, and the catch-up tick at start.
//! Rows an agent socket would create are written into the database before
//! the daemon starts.

#![allow(clippy::disallowed_methods)] // test code runs the binaries and tools under test
#![allow(clippy::unwrap_used, clippy::expect_used)] // a panic is a failed test

#[path = "support/common/mod.rs"]
mod common;

use common::{Daemon, Launch, hivectl};
use hive_c0re::clock::{Clock, SystemClock};
use hive_c0re::store::{Store, agents, questions, reminders};
use hive_c0re::wire::ident::Ident;

/// `(sender, body)` of every message to `to` in the daemon's database.
fn inbox(dir: &std::path::Path, to: &str) -> Vec<(String, String)> {
    let conn = rusqlite::Connection::open(dir.join("state/hive.db")).unwrap();
    let mut stmt = conn
        .prepare("SELECT sender, body FROM messages WHERE recipient = ?1 ORDER BY id")
        .unwrap();
    stmt.query_map([to], |r| Ok((r.get(0)?, r.get(1)?)))
        .unwrap()
        .collect::<Result<_, _>>()
        .unwrap()
}

#[test]
fn a_reminder_due_while_the_daemon_was_down_is_delivered_before_ready_and_a_question_is_answered_with_hivectl()
 {
    let dir = tempfile::tempdir().unwrap();
    let now = SystemClock.now_unix();
    {
        let store = Store::open(&dir.path().join("state/hive.db")).unwrap();
        store
            .blocking(|c| {
                agents::insert(c, &Ident::new("alice").unwrap(), None, now)?;
                reminders::insert(c, "alice", "check CI", now - 60, now - 120)?;
                questions::insert(
                    c,
                    &questions::NewQuestion {
                        asker: "alice".into(),
                        target: None,
                        question: "deploy on friday?".into(),
                        options: vec!["yes".into(), "no".into()],
                        multi: false,
                        expires_at: None,
                    },
                    now,
                )?;
                Ok(())
            })
            .unwrap();
    }
    let d = Daemon::start_in(dir, Launch::Standalone);
    // READY=1 came after the catch-up tick: the reminder is already there.
    assert_eq!(
        inbox(d.dir.path(), "alice"),
        vec![("reminder".to_owned(), "check CI".to_owned())]
    );

    let (code, out, _) = hivectl(&d, &["questions"]);
    assert_eq!(code, 0);
    assert!(
        out.starts_with("ID") && out.contains("deploy on friday?") && out.contains("yes | no"),
        "{out}"
    );
    assert_eq!(hivectl(&d, &["answer", "1", "no"]).0, 0);
    let (code, _, err) = hivectl(&d, &["answer", "1", "yes"]);
    assert_eq!(code, 1);
    assert!(err.contains("question 1 is already closed"), "{err}");
    let answered = inbox(d.dir.path(), "alice");
    assert_eq!(answered.len(), 2);
    assert_eq!(
        answered[1],
        (
            "system".to_owned(),
            r#"{"event":"question_answered","id":1,"question":"deploy on friday?","answer":"no","answerer":"operator"}"#
                .to_owned()
        )
    );
    let (_, out, _) = hivectl(&d, &["--json", "questions"]);
    assert_eq!(out.trim_end(), r#"{"version":1,"ok":true,"questions":[]}"#);
}

#[test]
fn an_operator_grants_and_revokes_capabilities_and_tool_groups() {
    let d = Daemon::start(Launch::Standalone);
    assert_eq!(hivectl(&d, &["spawn", "alice"]).0, 0);
    let (_, out, _) = hivectl(&d, &["--json", "grants", "alice"]);
    assert_eq!(
        out.trim_end(),
        r#"{"version":1,"ok":true,"grants":[{"name":"alice","capabilities":[],"tool_groups":["messaging","meta","inbox","execution"]}]}"#
    );
    let grant = ["grant", "alice", "--capability", "query_agent_state"];
    assert_eq!(hivectl(&d, &grant).0, 0);
    assert_eq!(
        hivectl(&d, &["grant", "alice", "--tool-group", "lifecycle"]).0,
        0
    );
    assert_eq!(
        hivectl(&d, &["revoke", "alice", "--tool-group", "execution"]).0,
        0
    );
    let (_, out, _) = hivectl(&d, &["grants"]);
    assert!(
        out.contains("alice  query_agent_state  messaging,meta,inbox,lifecycle"),
        "{out}"
    );
    let (code, _, err) = hivectl(&d, &["grant", "nobody", "--tool-group", "meta"]);
    assert_eq!(
        (code, err.trim_end()),
        (1, r#"hivectl: agent "nobody" is not managed by this hive"#)
    );
    // Neither or both of capability and tool_group: refused by the daemon.
    let both = d.request(
        r#"{"cmd":"grant","name":"alice","capability":"read_host_journal","tool_group":"meta"}"#,
    );
    assert!(
        both.contains(r#""ok":false"#) && both.contains("exactly one"),
        "{both}"
    );
    let bad = d.request(r#"{"cmd":"grant","name":"alice","capability":"root"}"#);
    assert!(
        bad.contains(r#""ok":false"#) && bad.contains("invalid grant request"),
        "{bad}"
    );
}

#[test]
fn the_operator_sees_no_schedules_and_cannot_cancel_an_unknown_one() {
    let d = Daemon::start(Launch::Standalone);
    let (code, out, _) = hivectl(&d, &["schedules"]);
    assert_eq!((code, out.as_str()), (0, "no schedules\n"));
    let (code, _, err) = hivectl(&d, &["cancel-schedule", "7"]);
    assert_eq!(
        (code, err.trim_end()),
        (
            1,
            "hivectl: schedule 7 does not exist; see `hivectl schedules`"
        )
    );
}
