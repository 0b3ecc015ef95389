use super::*;
use crate::store::Store;

#[test]
fn a_reminder_leaves_the_pending_set_once_delivered_or_cancelled() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let a = insert(c, "alice", "one", 100, 10)?;
            let b = insert(c, "alice", "two", 200, 20)?;
            insert(c, "bob", "three", 300, 30)?;
            assert_eq!(due(c, 150)?.len(), 1);
            assert!(mark_sent(c, a, 150)?);
            assert!(!mark_sent(c, a, 151)?);
            assert!(cancel(c, b, 160)?);
            assert!(!mark_sent(c, b, 250)?);
            assert_eq!(count_pending(c, Some("alice"))?, 0);
            assert_eq!(count_pending(c, None)?, 1);
            assert_eq!(pending_counts(c)?.get("bob"), Some(&1));
            assert_eq!(
                rollup(c, Some("alice"), None)?,
                ReminderStats {
                    scheduled: 2,
                    delivered: 1,
                    pending: 0
                }
            );
            assert_eq!(rollup(c, None, Some(20))?.scheduled, 2);
            Ok(())
        })
        .unwrap();
}
