use super::*;
use crate::store::{Store, immediate};
use crate::testing::id;

#[test]
fn sequence_numbers_count_per_destination_hive_from_one() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let tx = immediate(c)?;
            assert_eq!(enqueue(&tx, &id("b"), "x", "y", "1", 1)?, 1);
            assert_eq!(enqueue(&tx, &id("c"), "x", "y", "2", 1)?, 1);
            assert_eq!(enqueue(&tx, &id("b"), "x", "y", "3", 1)?, 2);
            tx.commit()?;
            let rows = unsent(c, 10)?;
            let seqs: Vec<_> = rows.iter().map(|r| (r.dest_hive.as_str(), r.seq)).collect();
            assert_eq!(seqs, [("b", 1), ("c", 1), ("b", 2)]);
            mark_sent(c, rows[0].id, 5)?;
            assert_eq!(unsent(c, 10)?.len(), 2);
            assert_eq!(unsent_count(c)?, 2);
            assert_eq!(vacuum_sent(c, 5)?, 0);
            assert_eq!(vacuum_sent(c, 6)?, 1);
            Ok(())
        })
        .unwrap();
}

#[test]
fn a_vacuumed_outbox_does_not_reuse_sequence_numbers() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            enqueue(c, &id("b"), "x", "y", "1", 1)?;
            let first = unsent(c, 1)?.remove(0);
            mark_sent(c, first.id, 2)?;
            vacuum_sent(c, 3)?;
            assert_eq!(enqueue(c, &id("b"), "x", "y", "2", 4)?, 2);
            Ok(())
        })
        .unwrap();
}

fn arriving<'a>(
    source: &'a Ident,
    seq: i64,
    id_text: &'a str,
    to: &'a Recipient,
    body: &'a str,
) -> Arriving<'a> {
    Arriving {
        source,
        seq,
        swarm_id: id_text,
        from: "sender@elsewhere",
        to,
        body,
        at: 1,
    }
}

#[test]
fn an_inbound_message_is_stored_once_and_only_after_its_predecessor() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let bob = Recipient::Agent(id("bob"));
            let (a, other) = (id("hive-a"), id("hive-c"));
            let two = arriving(&a, 2, "hive-a.me.2", &bob, "two");
            let one = arriving(&a, 1, "hive-a.me.1", &bob, "one");
            assert_eq!(accept(c, &two)?, Inbound::Gap { expected: 1 });
            assert!(matches!(accept(c, &one)?, Inbound::Inserted(_)));
            assert_eq!(accept(c, &one)?, Inbound::Duplicate);
            assert!(matches!(accept(c, &two)?, Inbound::Inserted(_)));
            // Another source hive counts on its own.
            let c1 = arriving(&other, 1, "hive-c.me.1", &bob, "c1");
            assert!(matches!(accept(c, &c1)?, Inbound::Inserted(_)));
            let queued: Vec<i64> = messages::queued_of(c, &id("bob"))?
                .iter()
                .map(|r| r.id)
                .collect();
            let bodies: Vec<_> = messages::bodies(c, &queued)?
                .into_iter()
                .map(|m| m.body)
                .collect();
            assert_eq!(bodies, ["one", "two", "c1"]);
            let ids: Vec<String> = c
                .prepare("SELECT swarm_id FROM messages ORDER BY id")?
                .query_map([], |r| r.get(0))?
                .collect::<Result<_, _>>()?;
            assert_eq!(ids, ["hive-a.me.1", "hive-a.me.2", "hive-c.me.1"]);
            Ok(())
        })
        .unwrap();
}
