use super::*;
use crate::store::Store;
use crate::testing::new_schedule;

#[test]
fn cancelling_the_last_target_ends_the_schedule() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let id = insert(c, &new_schedule(&["operator", "alice"], None), 1)?;
            assert_eq!(
                cancel(c, id, Some(&["bob".to_owned()]), 5)?,
                Change::NotATarget("bob".into())
            );
            assert_eq!(cancel(c, id, Some(&["alice".to_owned()]), 5)?, Change::Done);
            assert!(get(c, id)?.unwrap().cancelled_at_unix.is_none());
            assert_eq!(
                cancel(c, id, Some(&["operator".to_owned()]), 6)?,
                Change::Done
            );
            assert_eq!(get(c, id)?.unwrap().cancelled_at_unix, Some(6));
            assert!(fire_head(c, id)?.unwrap().ended);
            Ok(())
        })
        .unwrap();
}
