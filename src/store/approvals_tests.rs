use super::*;
use crate::store::Store;
use crate::testing::new_approval;

#[test]
fn a_claimed_row_is_found_as_interrupted_and_an_unclaimed_one_is_not() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let a = insert(c, &new_approval("x"), 10)?;
            insert(c, &new_approval("y"), 10)?;
            claim(c, a.id)?;
            let found = interrupted(c)?;
            assert_eq!(found.len(), 1);
            assert_eq!(
                (found[0].id, found[0].status),
                (a.id, ApprovalStatus::Pending)
            );
            Ok(())
        })
        .unwrap();
}

#[test]
fn list_shows_pending_rows_and_recent_resolved_ones_in_id_order() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let a = insert(c, &new_approval("a"), 1)?;
            let b = insert(c, &new_approval("b"), 2)?;
            end(c, a.id, ApprovalStatus::Denied, None, 3)?;
            let ids: Vec<i64> = list(c)?.iter().map(|r| r.id).collect();
            assert_eq!(ids, vec![a.id, b.id]);
            assert_eq!(pending(c)?.len(), 1);
            Ok(())
        })
        .unwrap();
}
