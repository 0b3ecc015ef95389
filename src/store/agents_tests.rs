use super::*;
use crate::store::Store;

use crate::testing::id;

#[test]
fn removing_an_agent_moves_its_children_to_its_parent() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            insert(c, &id("ruth"), None, 1)?;
            insert(c, &id("mid"), Some(&id("ruth")), 1)?;
            insert(c, &id("leaf"), Some(&id("mid")), 1)?;
            assert!(remove(c, &id("mid"))?);
            assert_eq!(get(c, &id("leaf"))?.unwrap().parent, Some(id("ruth")));
            assert!(get(c, &id("mid"))?.is_none());
            Ok(())
        })
        .unwrap();
}

#[test]
fn clearing_a_status_clears_its_time_too() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            insert(c, &id("a"), None, 1)?;
            set_status(c, &id("a"), Some("busy"), 50)?;
            let a = get(c, &id("a"))?.unwrap();
            assert_eq!(
                (a.status_text.as_deref(), a.status_set_at),
                (Some("busy"), Some(50))
            );
            set_status(c, &id("a"), None, 60)?;
            let a = get(c, &id("a"))?.unwrap();
            assert_eq!((a.status_text, a.status_set_at), (None, None));
            Ok(())
        })
        .unwrap();
}
