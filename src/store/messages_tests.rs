use super::*;
use crate::store::Store;

use crate::testing::id;

#[test]
fn a_pop_stops_at_the_byte_budget_but_always_takes_one() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let a = Recipient::Agent(id("a"));
            for body in ["aaaa", "bbbb", "cccc"] {
                insert(c, "x", &a, body, None, 1)?;
            }
            assert_eq!(pop(c, &id("a"), 10, 6, 2)?.len(), 1);
            assert_eq!(pop(c, &id("a"), 10, 8, 2)?.len(), 2);
            let (rows, truncated) = recent(c, &a, 10, 5)?;
            assert_eq!((rows.len(), truncated), (1, true));
            assert!(!recent(c, &a, 10, 100)?.1);
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_popped_message_is_not_popped_again_until_requeued() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let bob = Recipient::Agent(id("bob"));
            for body in ["one", "two", "three"] {
                insert(c, "alice", &bob, body, None, 1)?;
            }
            let first = pop(c, &id("bob"), 2, usize::MAX, 5)?;
            let bodies: Vec<_> = first.iter().map(|m| m.body.as_str()).collect();
            assert_eq!(bodies, ["one", "two"]);
            let second = pop(c, &id("bob"), 10, usize::MAX, 5)?;
            assert_eq!(second.len(), 1);
            assert_eq!(second[0].body, "three");
            assert!(pop(c, &id("bob"), 10, usize::MAX, 5)?.is_empty());
            assert_eq!(requeue(c, &id("bob"))?, 3);
            let again = pop(c, &id("bob"), 10, usize::MAX, 6)?;
            assert!(again.iter().all(|m| m.redelivered));
            assert_eq!(again.len(), 3);
            Ok(())
        })
        .unwrap();
}

#[test]
fn ack_touches_only_the_acking_agents_inflight_rows() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            insert(c, "x", &Recipient::Agent(id("a")), "for a", None, 1)?;
            insert(c, "x", &Recipient::Agent(id("b")), "for b", None, 1)?;
            pop(c, &id("a"), 10, usize::MAX, 2)?;
            pop(c, &id("b"), 10, usize::MAX, 2)?;
            assert_eq!(ack(c, &id("a"), 3)?, 1);
            assert_eq!(requeue(c, &id("b"))?, 1);
            assert_eq!(pending_count(c, &Recipient::Agent(id("b")))?, 1);
            assert_eq!(pending_count(c, &Recipient::Agent(id("a")))?, 0);
            Ok(())
        })
        .unwrap();
}

/// The plan SQLite picks for `sql` (its `detail` lines).
fn plan(c: &Connection, sql: &str) -> String {
    let mut stmt = c.prepare(&format!("EXPLAIN QUERY PLAN {sql}")).unwrap();
    let rows = stmt.query_map([], |r| r.get::<_, String>(3)).unwrap();
    rows.map(Result::unwrap).collect::<Vec<_>>().join("; ")
}

#[test]
fn the_inbox_queries_search_the_live_row_indexes_not_the_table() {
    let store = Store::open_in_memory().unwrap();
    store
            .blocking(|c| {
                let pending = "SELECT id FROM messages WHERE recipient = 'a' AND state = 'pending' ORDER BY id LIMIT 10";
                assert!(plan(c, pending).contains("messages_pending"), "{}", plan(c, pending));
                let ack = "UPDATE messages SET state = 'handled' WHERE recipient = 'a' AND state = 'inflight'";
                assert!(plan(c, ack).contains("messages_inflight"), "{}", plan(c, ack));
                let recent = "SELECT id FROM messages WHERE recipient = 'a' ORDER BY id DESC LIMIT 10";
                assert!(plan(c, recent).contains("messages_by_recipient"), "{}", plan(c, recent));
                Ok(())
            })
            .unwrap();
}

#[test]
fn popping_for_one_agent_after_another_reuses_the_planned_statement() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            for i in 0..10 {
                let agent = id(&format!("a{}", i % 3));
                insert(c, "x", &Recipient::Agent(agent.clone()), "hi", None, 1)?;
                assert_eq!(pop(c, &agent, 10, usize::MAX, 2)?.len(), 1);
            }
            let planned = c.prepare_cached(POP)?;
            assert_eq!(planned.get_status(rusqlite::StatementStatus::Run), 10);
            assert_eq!(planned.get_status(rusqlite::StatementStatus::RePrepare), 0);
            Ok(())
        })
        .unwrap();
}

#[test]
fn vacuum_removes_only_handled_rows_older_than_the_cutoff() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let a = Recipient::Agent(id("a"));
            insert(c, "x", &a, "old", None, 1)?;
            pop(c, &id("a"), 10, usize::MAX, 1)?;
            ack(c, &id("a"), 10)?;
            insert(c, "x", &a, "pending", None, 1)?;
            insert(c, "x", &Recipient::Operator, "for the operator", None, 1)?;
            assert_eq!(vacuum(c, 10)?, 0);
            assert_eq!(vacuum(c, 11)?, 1);
            assert_eq!(recent(c, &a, 10, usize::MAX)?.0.len(), 1);
            assert_eq!(recent(c, &Recipient::Operator, 10, usize::MAX)?.0.len(), 1);
            Ok(())
        })
        .unwrap();
}
