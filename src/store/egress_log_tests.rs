use super::*;
use crate::store::migrations;
use crate::testing::id;

fn db() -> Connection {
    let mut conn = Connection::open_in_memory().unwrap();
    migrations::apply(&mut conn).unwrap();
    conn
}

fn record(agent: &str, verdict: Verdict, target: &str, at_ms: i64) -> EgressRecord {
    EgressRecord {
        agent: id(agent),
        at_ms,
        verdict,
        target: Some(target.to_owned()),
        address: None,
        reason: None,
        up: 1,
        down: 2,
        ms: 3,
        count: 1,
    }
}

fn allowed(agent: &str, n: i64) -> EgressRecord {
    record(agent, Verdict::Allowed, &format!("h{n}.test:443"), n)
}

#[test]
fn one_agents_ten_thousand_rows_leave_another_agents_rows_in_place() {
    let conn = db();
    let bobs: Vec<_> = (0..5).map(|n| allowed("bob", n)).collect();
    write(&conn, &bobs, 2000).unwrap();
    // Alice's flood, in batches as the recorder writes them.
    for batch in 0..40 {
        let rows: Vec<_> = (0..250)
            .map(|n| allowed("alice", batch * 250 + n))
            .collect();
        write(&conn, &rows, 2000).unwrap();
    }
    assert_eq!(rows_of(&conn, "alice").unwrap(), 2000);
    let bob = recent(&conn, &id("bob"), 100).unwrap();
    assert_eq!(bob.len(), 5);
    assert_eq!(bob[0].target.as_deref(), Some("h0.test:443"));
    // Alice keeps her newest 2,000, oldest first.
    let alice = recent(&conn, &id("alice"), 3).unwrap();
    let targets: Vec<_> = alice.iter().map(|r| r.target.clone().unwrap()).collect();
    assert_eq!(
        targets,
        ["h9997.test:443", "h9998.test:443", "h9999.test:443"]
    );
}

#[test]
fn the_bound_holds_within_one_batch_too() {
    let conn = db();
    let rows: Vec<_> = (0..30).map(|n| allowed("alice", n)).collect();
    write(&conn, &rows, 10).unwrap();
    let kept = recent(&conn, &id("alice"), 100).unwrap();
    assert_eq!(kept.len(), 10);
    assert_eq!(kept[0].at_ms, 20);
}

#[test]
fn a_429_flood_in_one_minute_is_one_row_with_its_count_and_earlier_rows_stay() {
    let conn = db();
    write(&conn, &[allowed("alice", 1)], 5).unwrap();
    for batch in 0..40 {
        let rows: Vec<_> = (0..250)
            .map(|n| {
                let mut r = record("alice", Verdict::Limited, "x", 60_000 + batch * 250 + n);
                r.target = None;
                r
            })
            .collect();
        write(&conn, &rows, 5).unwrap();
    }
    let rows = recent(&conn, &id("alice"), 10).unwrap();
    assert_eq!(rows.len(), 2, "{rows:?}");
    assert_eq!(rows[0].verdict, Verdict::Allowed);
    assert_eq!((rows[1].verdict, rows[1].count), (Verdict::Limited, 10_000));
    assert_eq!(
        (rows[1].at_ms, rows[1].up, rows[1].down),
        (60_000, 10_000, 20_000)
    );
}

#[test]
fn refusals_are_counted_per_target_and_minute_whatever_comes_between() {
    let conn = db();
    let refused = |target, at| record("alice", Verdict::Refused, target, at);
    write(
        &conn,
        &[
            refused("a.test:443", 0),
            refused("a.test:443", 59_999),
            refused("b.test:443", 59_999),
            refused("b.test:443", 60_000),
            allowed("alice", 60_001),
            refused("b.test:443", 60_002),
        ],
        100,
    )
    .unwrap();
    // A later batch still counts into the row of its minute.
    write(&conn, &[refused("b.test:443", 119_999)], 100).unwrap();
    let rows: Vec<_> = recent(&conn, &id("alice"), 100)
        .unwrap()
        .into_iter()
        .map(|r| (r.verdict, r.target.unwrap(), r.count))
        .collect();
    let refused = Verdict::Refused;
    assert_eq!(
        rows,
        [
            (refused, "a.test:443".to_owned(), 2),
            (refused, "b.test:443".to_owned(), 1),
            (Verdict::Allowed, "h60001.test:443".to_owned(), 1),
            (refused, "b.test:443".to_owned(), 3),
        ]
    );
}

#[test]
fn another_agents_refusals_never_merge_into_an_agents_rows() {
    let conn = db();
    write(
        &conn,
        &[
            record("alice", Verdict::Refused, "a.test:443", 0),
            record("bob", Verdict::Refused, "a.test:443", 1),
        ],
        100,
    )
    .unwrap();
    assert_eq!(recent(&conn, &id("alice"), 10).unwrap()[0].count, 1);
    assert_eq!(recent(&conn, &id("bob"), 10).unwrap()[0].count, 1);
}

#[test]
fn forgetting_an_agent_deletes_its_rows_alone() {
    let conn = db();
    write(&conn, &[allowed("alice", 1), allowed("bob", 2)], 100).unwrap();
    assert_eq!(forget(&conn, "alice").unwrap(), 1);
    assert_eq!(rows_of(&conn, "alice").unwrap(), 0);
    assert_eq!(rows_of(&conn, "bob").unwrap(), 1);
}

#[test]
fn a_row_still_being_counted_is_never_the_first_its_own_bound_deletes() {
    let conn = db();
    for n in 0..20 {
        let mut limited = record("alice", Verdict::Limited, "x", n);
        limited.target = None;
        let refused = record("alice", Verdict::Refused, &format!("t{n}.test:80"), n);
        write(&conn, &[limited, refused], 5).unwrap();
    }
    let rows = recent(&conn, &id("alice"), 10).unwrap();
    assert_eq!(rows.len(), 5);
    let counted: Vec<_> = rows
        .iter()
        .filter(|r| r.verdict == Verdict::Limited)
        .map(|r| (r.count, r.at_ms))
        .collect();
    assert_eq!(counted, [(20, 0)]);
}
