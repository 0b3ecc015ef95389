use super::*;

#[test]
fn migrating_twice_is_a_no_op_and_lands_on_the_latest_version() {
    let mut conn = Connection::open_in_memory().unwrap();
    apply(&mut conn).unwrap();
    apply(&mut conn).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, latest());
}

#[test]
fn a_database_from_a_newer_build_is_refused() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "user_version", latest() + 1)
        .unwrap();
    assert!(matches!(apply(&mut conn), Err(StoreError::TooNew { .. })));
}

/// A database as a build of schema `version` left it.
fn at_version(version: usize) -> Connection {
    let conn = Connection::open_in_memory().unwrap();
    for (index, sql) in STEPS.iter().enumerate().take(version) {
        conn.execute_batch(sql).unwrap();
        conn.pragma_update(None, "user_version", index as i64 + 1)
            .unwrap();
    }
    conn
}

#[test]
fn turns_kept_before_the_day_sums_existed_are_summed_and_counted_on_upgrade() {
    // A database of the build before: schema 11, two turns of one agent.
    let mut conn = at_version(11);
    for (ended, usd) in [(86_400_000_i64 + 5, 7), (86_400_000 + 9, 3)] {
        conn.execute(
            "INSERT INTO turns (agent, started_at_ms, ended_at_ms, outcome, model, input_tokens,
                 output_tokens, cache_read_tokens, cache_creation_tokens, cost_micro_usd, report)
             VALUES ('alice', 0, ?1, 'ok', NULL, 1, 2, 3, 4, ?2, '{}')",
            rusqlite::params![ended, usd],
        )
        .unwrap();
    }
    apply(&mut conn).unwrap();
    let day: (i64, String, i64, i64) = conn
        .query_row(
            "SELECT day, model, turns, cost_micro_usd FROM turn_days WHERE agent = 'alice'",
            [],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
        )
        .unwrap();
    assert_eq!(day, (1, "-".into(), 2, 10));
    let kept: i64 = conn
        .query_row(
            "SELECT kept FROM turn_counts WHERE agent = 'alice'",
            [],
            |r| r.get(0),
        )
        .unwrap();
    assert_eq!(kept, 2);
}

#[test]
fn messages_kept_before_the_deferred_index_are_indexed_on_upgrade() {
    // A database of the build before: schema 14, two messages to bob.
    let mut conn = at_version(14);
    for body in ["one", "two"] {
        conn.execute(
            "INSERT INTO messages (sender, recipient, body, at) VALUES ('alice', 'bob', ?1, 1)",
            [body],
        )
        .unwrap();
    }
    apply(&mut conn).unwrap();
    let bob = crate::hive::Recipient::Agent(crate::testing::id("bob"));
    let (rows, _) = super::super::messages::recent(&conn, &bob, 10, usize::MAX).unwrap();
    let bodies: Vec<_> = rows.iter().map(|r| r.body.as_str()).collect();
    assert_eq!(bodies, ["two", "one"]);
    let (indexed, upto): (i64, i64) = conn
        .query_row(
            "SELECT (SELECT COUNT(*) FROM message_index), upto FROM message_index_mark",
            [],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .unwrap();
    assert_eq!((indexed, upto), (2, 2), "both rows behind the mark");
}
