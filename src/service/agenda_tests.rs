//! Questions, reminders, loose ends and grants against a real SQLite file, the fake driver and a manual
//! clock: time moves by `ManualClock::advance` and `Hive::tick`, never by
//! sleeping. A "restart" is a new `Hive` on the same database file.

use crate::testing::config_in;
use std::path::Path;
use std::sync::Arc;

use super::{Hive, HiveError};
use crate::clock::ManualClock;
use crate::hive::agenda::{AgendaError, Answerer, Caller};
use crate::store::Store;
use crate::wire::agenda::ReminderTiming;
use crate::wire::events::HelperEvent;

pub(super) use crate::testing::id;

pub(super) const T0: i64 = 1_796_040_000; // 2026-11-30T12:00:00Z

/// A hive on the database and state under `dir`, at the clock's time.
fn hive_on(dir: &Path, clock: &Arc<ManualClock>) -> Hive {
    let config = config_in(dir);
    let store = Store::open(&config.database()).unwrap();
    crate::testing::hive_on(config, store, clock.clone()).0
}

pub(super) struct World {
    pub(super) hive: Hive,
    pub(super) clock: Arc<ManualClock>,
    dir: tempfile::TempDir,
}

impl World {
    /// A hive with `alice` and `bob` under the manager and `kid` under alice.
    pub(super) async fn new() -> Self {
        let dir = tempfile::tempdir().unwrap();
        let clock = Arc::new(ManualClock::new(T0));
        let hive = hive_on(dir.path(), &clock);
        for name in ["alice", "bob", "kid"] {
            hive.spawn(&id(name)).await.unwrap();
        }
        hive.set_parent(&id("kid"), Some(&id("alice")))
            .await
            .unwrap();
        Self { hive, clock, dir }
    }

    /// Drop the hive and start a new one on the same file.
    pub(super) fn restart(&mut self) {
        self.hive = hive_on(self.dir.path(), &self.clock);
    }

    /// `(sender, body)` of every message to `to`, oldest first.
    pub(super) async fn inbox(&self, to: &str) -> Vec<(String, String)> {
        let to = to.to_owned();
        self.hive
            .store()
            .run(move |c| {
                let mut stmt = c.prepare(
                    "SELECT sender, body FROM messages WHERE recipient = ?1 ORDER BY id",
                )?;
                let rows = stmt.query_map([to], |r| Ok((r.get(0)?, r.get(1)?)))?;
                Ok(rows.collect::<Result<Vec<_>, _>>()?)
            })
            .await
            .unwrap()
    }

    /// Bodies `to` got from `from`.
    pub(super) async fn from(&self, to: &str, from: &str) -> Vec<String> {
        self.inbox(to)
            .await
            .into_iter()
            .filter(|(f, _)| f == from)
            .map(|(_, b)| b)
            .collect()
    }

    pub(super) fn state(&self, agent: &str) -> std::path::PathBuf {
        self.dir.path().join("state/agents").join(agent)
    }
}

pub(super) fn agenda(err: HiveError) -> AgendaError {
    match err {
        HiveError::Agenda(e) => e,
        other => panic!("expected an agenda error, got {other:?}"),
    }
}

pub(super) async fn ask(w: &World, asker: &str, to: Option<&str>, ttl: Option<u64>) -> i64 {
    w.hive
        .ask(
            &id(asker),
            "ship it?".into(),
            vec!["yes".into(), "no".into()],
            false,
            ttl,
            to.map(id),
        )
        .await
        .unwrap()
}

fn answered(id: i64, answer: &str, answerer: &str) -> String {
    HelperEvent::QuestionAnswered {
        id,
        question: "ship it?".into(),
        answer: answer.into(),
        answerer: answerer.into(),
    }
    .to_body()
}

#[tokio::test]
async fn a_question_to_the_operator_is_listed_answered_once_and_reaches_the_asker() {
    let w = World::new().await;
    let q = ask(&w, "alice", None, None).await;
    let open = w.hive.open_questions().await.unwrap();
    assert_eq!(
        (open.len(), open[0].id, open[0].target.as_deref()),
        (1, q, None)
    );
    // The operator's inbox shows it too (`hivectl inbox`).
    let asked = w.from("operator", "system").await;
    assert_eq!(asked.len(), 1, "{asked:?}");
    assert!(
        asked[0].starts_with(r#"{"event":"question_asked","id":"#),
        "{asked:?}"
    );
    w.hive
        .answer(Answerer::Operator, q, "yes".into())
        .await
        .unwrap();
    assert_eq!(
        w.from("alice", "system").await,
        vec![answered(q, "yes", "operator")]
    );
    assert!(w.hive.open_questions().await.unwrap().is_empty());
    let again = w.hive.answer(Answerer::Operator, q, "no".into()).await;
    assert_eq!(
        agenda(again.unwrap_err()),
        AgendaError::QuestionClosed {
            id: q,
            by: "operator".into()
        }
    );
    // Still one answer in the asker's inbox.
    assert_eq!(w.from("alice", "system").await.len(), 1);
}

#[tokio::test]
async fn a_question_to_an_agent_reaches_it_and_only_it_may_answer() {
    let w = World::new().await;
    let q = ask(&w, "alice", Some("bob"), None).await;
    let asked = HelperEvent::QuestionAsked {
        id: q,
        asker: "alice".into(),
        question: "ship it?".into(),
        options: vec!["yes".into(), "no".into()],
        multi: false,
    };
    assert_eq!(w.from("bob", "system").await, vec![asked.to_body()]);
    let stranger = w
        .hive
        .answer(Answerer::Agent(id("kid")), q, "no".into())
        .await;
    assert!(matches!(
        agenda(stranger.unwrap_err()),
        AgendaError::NotTheTarget { .. }
    ));
    w.hive
        .answer(Answerer::Agent(id("bob")), q, "yes".into())
        .await
        .unwrap();
    assert_eq!(
        w.from("alice", "system").await,
        vec![answered(q, "yes", "bob")]
    );
    let second = w
        .hive
        .answer(Answerer::Agent(id("bob")), q, "no".into())
        .await;
    assert!(matches!(
        agenda(second.unwrap_err()),
        AgendaError::QuestionClosed { .. }
    ));
    let unknown = w.hive.answer(Answerer::Operator, 999, "x".into()).await;
    assert_eq!(
        agenda(unknown.unwrap_err()),
        AgendaError::UnknownQuestion(999)
    );
}

#[tokio::test]
async fn a_question_to_an_unknown_agent_is_refused() {
    let w = World::new().await;
    let err = w
        .hive
        .ask(
            &id("alice"),
            "q".into(),
            vec![],
            false,
            None,
            Some(id("ghost")),
        )
        .await
        .unwrap_err();
    assert!(matches!(err, HiveError::UnknownAgent(_)), "{err:?}");
}

#[tokio::test]
async fn a_question_whose_ttl_runs_out_is_answered_by_the_ttl_watchdog_once() {
    let w = World::new().await;
    let q = ask(&w, "alice", Some("bob"), Some(60)).await;
    w.clock.advance(59);
    assert_eq!(w.hive.tick().await.unwrap().questions_expired, 0);
    w.clock.advance(1);
    assert_eq!(w.hive.tick().await.unwrap().questions_expired, 1);
    assert_eq!(w.hive.tick().await.unwrap().questions_expired, 0);
    let got = w.from("alice", "system").await;
    assert_eq!(got.len(), 1);
    assert!(
        got[0].contains(r#""answerer":"ttl-watchdog""#) && got[0].contains(&format!(r#""id":{q}"#)),
        "{got:?}"
    );
    let late = w
        .hive
        .answer(Answerer::Agent(id("bob")), q, "yes".into())
        .await;
    assert_eq!(
        agenda(late.unwrap_err()),
        AgendaError::QuestionClosed {
            id: q,
            by: "ttl-watchdog".into()
        }
    );
}

#[tokio::test]
async fn a_reminder_fires_at_its_due_time_once_from_reminder() {
    let w = World::new().await;
    w.hive
        .remind(
            &id("alice"),
            "check CI".into(),
            ReminderTiming::InSeconds { seconds: 30 },
            None,
        )
        .await
        .unwrap();
    let row = w.hive.row(&id("alice")).await.unwrap().unwrap();
    assert_eq!(row.pending_reminders, 1);
    w.clock.advance(29);
    w.hive.tick().await.unwrap();
    assert!(w.from("alice", "reminder").await.is_empty());
    w.clock.advance(1);
    assert_eq!(w.hive.tick().await.unwrap().reminders, 1);
    w.hive.tick().await.unwrap();
    assert_eq!(
        w.from("alice", "reminder").await,
        vec!["check CI".to_owned()]
    );
    let rows = w.hive.agent_status().await.unwrap();
    assert!(rows.iter().all(|r| r.pending_reminders == 0), "{rows:?}");
}

#[tokio::test]
async fn reminders_due_across_a_restart_fire_once() {
    let mut w = World::new().await;
    for (msg, at) in [("early", T0 + 10), ("late", T0 + 1000)] {
        w.hive
            .remind(
                &id("alice"),
                msg.into(),
                ReminderTiming::At { unix_timestamp: at },
                None,
            )
            .await
            .unwrap();
    }
    // The daemon is down while "early" falls due.
    w.clock.advance(100);
    w.restart();
    assert_eq!(w.hive.tick().await.unwrap().reminders, 1);
    w.restart();
    assert_eq!(w.hive.tick().await.unwrap().reminders, 0);
    assert_eq!(w.from("alice", "reminder").await, vec!["early".to_owned()]);
    w.clock.advance(1000);
    w.restart();
    w.hive.tick().await.unwrap();
    w.hive.tick().await.unwrap();
    assert_eq!(
        w.from("alice", "reminder").await,
        vec!["early".to_owned(), "late".to_owned()]
    );
}

#[tokio::test]
async fn a_long_reminder_goes_to_a_file_in_the_state_directory_and_the_inbox_gets_its_path() {
    let w = World::new().await;
    let long = "x".repeat(10_000);
    let inline = w
        .hive
        .remind(
            &id("alice"),
            long.clone(),
            ReminderTiming::InSeconds { seconds: 0 },
            None,
        )
        .await;
    assert!(
        matches!(
            agenda(inline.unwrap_err()),
            AgendaError::TooLong { max: 4096, .. }
        ),
        "inline messages are capped"
    );
    w.hive
        .remind(
            &id("alice"),
            long.clone(),
            ReminderTiming::InSeconds { seconds: 0 },
            Some("notes/today.md".into()),
        )
        .await
        .unwrap();
    let written = std::fs::read_to_string(w.state("alice").join("notes/today.md")).unwrap();
    assert_eq!(written, long);
    w.hive.tick().await.unwrap();
    let got = w.from("alice", "reminder").await;
    assert_eq!(got.len(), 1);
    assert!(got[0].contains("\"notes/today.md\""), "{got:?}");
    let huge = w
        .hive
        .remind(
            &id("alice"),
            "y".repeat(1024 * 1024 + 1),
            ReminderTiming::InSeconds { seconds: 0 },
            Some("big".into()),
        )
        .await;
    assert!(matches!(
        agenda(huge.unwrap_err()),
        AgendaError::TooLong { .. }
    ));
}

#[tokio::test]
async fn reminder_file_paths_that_escape_the_state_directory_are_refused() {
    let w = World::new().await;
    let outside = w.dir.path().join("outside");
    std::fs::create_dir_all(&outside).unwrap();
    std::fs::write(outside.join("secret"), "keep").unwrap();
    let state = w.state("alice");
    std::fs::create_dir_all(&state).unwrap();
    // A symlink to a file outside, and one to a directory outside.
    std::os::unix::fs::symlink(outside.join("secret"), state.join("link")).unwrap();
    std::os::unix::fs::symlink(&outside, state.join("dirlink")).unwrap();
    // A hard link to a file elsewhere on the same filesystem.
    std::fs::hard_link(outside.join("secret"), state.join("hard")).unwrap();
    // A FIFO, which a blocking open for writing would wait on forever.
    nix::unistd::mkfifo(
        &state.join("fifo"),
        nix::sys::stat::Mode::from_bits_truncate(0o644),
    )
    .unwrap();
    for path in [
        "fifo",
        "../x",
        "/etc/passwd",
        "a/../../x",
        "link",
        "dirlink/secret",
        "dirlink/new",
        "hard",
    ] {
        let alice = id("alice");
        let remind = w.hive.remind(
            &alice,
            "pwned".into(),
            ReminderTiming::InSeconds { seconds: 0 },
            Some(path.into()),
        );
        let r = tokio::time::timeout(std::time::Duration::from_secs(10), remind)
            .await
            .unwrap_or_else(|_| panic!("remind with {path:?} hung"));
        assert!(
            matches!(agenda(r.unwrap_err()), AgendaError::BadPath { .. }),
            "{path}"
        );
    }
    assert_eq!(
        std::fs::read_to_string(outside.join("secret")).unwrap(),
        "keep"
    );
    assert!(!outside.join("new").exists());
    assert!(!w.dir.path().join("state/agents/x").exists());
    // Nothing was scheduled by the refused requests.
    let n = w
        .hive
        .count_pending_reminders(&Caller::Agent(id("alice")), None)
        .await
        .unwrap();
    assert_eq!(n, 0);
}
