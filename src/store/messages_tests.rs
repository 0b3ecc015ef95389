use super::*;
use crate::store::Store;

use crate::testing::id;

/// Run `f` on a fresh in-memory store's write connection; an error fails
/// the test.
fn on_store(f: impl FnOnce(&mut Connection) -> Result<(), StoreError>) {
    Store::open_in_memory().unwrap().blocking(f).unwrap();
}

/// The ids of the newest `limit` rows `recent` lists for `to`, newest first.
fn recent_ids(c: &Connection, to: &Recipient, limit: u64) -> Result<Vec<i64>, StoreError> {
    Ok(recent(c, to, limit, usize::MAX)?
        .0
        .iter()
        .map(|r| r.id)
        .collect())
}

/// How many rows `message_index` holds.
fn index_rows(c: &Connection) -> Result<i64, StoreError> {
    Ok(c.query_row("SELECT COUNT(*) FROM message_index", [], |r| r.get(0))?)
}

#[test]
fn queued_rows_are_the_agents_pending_ones_in_order_and_popped_ones_say_so() {
    on_store(|c| {
        let a = Recipient::Agent(id("a"));
        let one = insert(c, "x", &a, "one", None, 1)?;
        let two = insert(c, "x", &Recipient::Agent(id("b")), "two!", None, 1)?;
        let three = insert(c, "x", &a, "three", None, 1)?;
        insert(c, "x", &Recipient::Operator, "not queued", None, 1)?;
        mark_popped(c, &[one], 2)?;
        settle(c, &[three], 3)?;
        let rows = queued(c)?;
        let seen: Vec<_> = rows
            .iter()
            .map(|r| (r.id, r.recipient.as_str(), r.len, r.popped))
            .collect();
        assert_eq!(seen, [(one, "a", 3, true), (two, "b", 4, false)]);
        assert_eq!(queued_of(c, &id("b"))?.len(), 1);
        Ok(())
    });
}

#[test]
fn a_requeued_row_is_redelivered_and_no_longer_popped() {
    on_store(|c| {
        let m = insert(c, "alice", &Recipient::Agent(id("bob")), "hi", None, 1)?;
        mark_popped(c, &[m], 2)?;
        assert_eq!(requeue_ids(c, &[m])?, 1);
        let row = &queued_of(c, &id("bob"))?[0];
        assert!(row.redelivered && !row.popped);
        Ok(())
    });
}

#[test]
fn a_settled_row_is_handled_once_and_no_longer_read_or_marked() {
    on_store(|c| {
        let a = Recipient::Agent(id("a"));
        let m = insert(c, "x", &a, "body", Some(7), 1)?;
        let stored = Stored {
            id: m,
            from: "x".into(),
            body: "body".into(),
            in_reply_to: Some(7),
        };
        assert_eq!(bodies(c, &[m])?, [stored]);
        assert_eq!(settle(c, &[m], 2)?, 1);
        assert_eq!(settle(c, &[m], 3)?, 0, "settled twice");
        assert!(bodies(c, &[m])?.is_empty());
        mark_popped(c, &[m], 4)?;
        assert_eq!(requeue_ids(c, &[m])?, 0);
        assert!(queued_of(c, &id("a"))?.is_empty());
        Ok(())
    });
}

/// The plan SQLite picks for `sql` (its `detail` lines).
fn plan(c: &Connection, sql: &str) -> String {
    let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows = stmt.query_map([], |r| r.get::<_, String>(3)).unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join("; ")
}

#[test]
fn the_inbox_queries_search_the_indexes_not_the_table() {
    on_store(|c| {
        let waiting = format!("{QUEUED} ORDER BY id");
        assert!(
            plan(c, &waiting).contains("messages_waiting"),
            "{}",
            plan(c, &waiting)
        );
        let tail = "SELECT id FROM messages
                WHERE id > (SELECT upto FROM message_index_mark) AND recipient = 'a'
                ORDER BY id DESC LIMIT 10";
        assert!(
            plan(c, tail).contains("SEARCH messages USING INTEGER PRIMARY KEY"),
            "{}",
            plan(c, tail)
        );
        let indexed = "SELECT m.id FROM message_index i JOIN messages m ON m.id = i.id
                WHERE i.recipient = 'a' AND i.id <= 5 ORDER BY i.id DESC LIMIT 10";
        assert!(
            plan(c, indexed).contains("SEARCH i USING PRIMARY KEY"),
            "{}",
            plan(c, indexed)
        );
        let settle = "UPDATE messages SET state = 'handled' WHERE id = 1 AND state = 'pending'";
        assert!(
            plan(c, settle).contains("INTEGER PRIMARY KEY"),
            "{}",
            plan(c, settle)
        );
        Ok(())
    });
}

#[test]
fn vacuum_removes_only_handled_rows_older_than_the_cutoff_and_their_index_rows() {
    on_store(|c| {
        let a = Recipient::Agent(id("a"));
        let old = insert(c, "x", &a, "old", None, 1)?;
        settle(c, &[old], 10)?;
        let pending = insert(c, "x", &a, "pending", None, 1)?;
        insert(c, "x", &Recipient::Operator, "for the operator", None, 1)?;
        index_tail(c)?;
        assert_eq!(vacuum(c, 10)?, 0);
        assert_eq!(vacuum(c, 11)?, 1);
        assert_eq!(recent_ids(c, &a, 10)?, [pending]);
        assert_eq!(recent(c, &Recipient::Operator, 10, usize::MAX)?.0.len(), 1);
        assert_eq!(index_rows(c)?, 2, "the vacuumed row's index row");
        Ok(())
    });
}

#[test]
fn recent_stops_at_the_byte_budget_but_always_takes_one() {
    on_store(|c| {
        let a = Recipient::Agent(id("a"));
        for body in ["aaaa", "bbbb", "cccc"] {
            insert(c, "x", &a, body, None, 1)?;
        }
        let (rows, truncated) = recent(c, &a, 10, 5)?;
        assert_eq!((rows.len(), truncated), (1, true));
        assert!(!recent(c, &a, 10, 100)?.1);
        Ok(())
    });
}

#[test]
fn recent_finds_rows_before_and_after_the_index_mark_newest_first_each_once() {
    on_store(|c| {
        let (a, b) = (Recipient::Agent(id("a")), Recipient::Agent(id("b")));
        let old = insert(c, "x", &a, "indexed", None, 1)?;
        insert(c, "x", &b, "not a's", None, 1)?;
        assert_eq!(index_tail(c)?, 2);
        assert_eq!(index_tail(c)?, 0, "indexed twice");
        let new = insert(c, "x", &a, "in the tail", None, 2)?;
        assert_eq!(recent_ids(c, &a, 10)?, [new, old]);
        assert_eq!(recent_ids(c, &a, 1)?, [new]);
        index_tail(c)?;
        assert_eq!(recent_ids(c, &a, 10)?, [new, old]);
        Ok(())
    });
}

#[test]
fn a_purge_deletes_an_agents_rows_on_both_sides_of_the_mark_and_their_index() {
    on_store(|c| {
        let (a, b) = (Recipient::Agent(id("a")), Recipient::Agent(id("b")));
        insert(c, "x", &a, "indexed", None, 1)?;
        index_tail(c)?;
        insert(c, "x", &a, "in the tail", None, 1)?;
        let kept = insert(c, "x", &b, "b's", None, 1)?;
        assert_eq!(delete_to(c, "a")?, 2);
        assert!(recent_ids(c, &a, 10)?.is_empty());
        assert_eq!(index_rows(c)?, 0, "a's index row");
        index_tail(c)?;
        assert_eq!(recent_ids(c, &b, 10)?, [kept]);
        Ok(())
    });
}
