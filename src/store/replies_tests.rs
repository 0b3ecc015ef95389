use super::*;
use crate::store::Store;
use crate::testing::id;

#[test]
fn a_kept_answer_is_found_by_its_agent_and_key_and_the_first_answer_stands() {
    let store = Store::open_in_memory().unwrap();
    let (alice, bob) = (id("alice"), id("bob"));
    store
        .blocking(|c| {
            remember(c, &alice, "k1", r#"{"kind":"ok","delivered":1}"#, 1_000)?;
            remember(c, &alice, "k1", r#"{"kind":"ok","delivered":9}"#, 2_000)?;
            assert_eq!(
                recall(c, &alice, "k1", 3_000)?.as_deref(),
                Some(r#"{"kind":"ok","delivered":1}"#)
            );
            // Another agent's same key finds nothing.
            assert_eq!(recall(c, &bob, "k1", 3_000)?, None);
            assert_eq!(recall(c, &alice, "k2", 3_000)?, None);
            Ok(())
        })
        .unwrap();
}

#[test]
fn an_agent_keeps_its_newest_answers_within_the_bound_and_none_older_than_a_day_answers() {
    let store = Store::open_in_memory().unwrap();
    let (alice, bob) = (id("alice"), id("bob"));
    store
        .blocking(|c| {
            remember(c, &bob, "old", "{}", 0)?;
            for n in 0..(KEEP + 10) {
                remember(c, &alice, &format!("k{n}"), "{}", 1_000 + i64::from(n))?;
            }
            assert_eq!(count(c, &alice)?, u64::from(KEEP));
            assert_eq!(recall(c, &alice, "k0", 2_000)?, None);
            assert!(recall(c, &alice, &format!("k{}", KEEP + 9), 2_000)?.is_some());
            // Bob's row is bob's: alice's writes never push it out.
            assert_eq!(count(c, &bob)?, 1);
            // A day later it is not an answer any more.
            assert!(recall(c, &bob, "old", MAX_AGE_MS)?.is_some());
            assert_eq!(recall(c, &bob, "old", MAX_AGE_MS + 1)?, None);
            Ok(())
        })
        .unwrap();
}
