use super::*;
use crate::store::Store;
use crate::testing::id;

fn cap(text: &str) -> SpendCap {
    text.parse().unwrap()
}

#[test]
fn caps_are_kept_one_per_scope_and_unit_and_unset_per_scope() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let ann = SpendScope::Subtree(id("ann"));
            assert!(set(c, &ann, &cap("1usd/day"), None, 5)?);
            assert!(set(c, &ann, &cap("100tokens/day"), None, 5)?);
            assert!(set(c, &SpendScope::Hive, &cap("20usd/day"), None, 5)?);
            assert!(!set(c, &ann, &cap("1usd/day"), None, 6)?, "the same again");
            assert!(set(c, &ann, &cap("2usd/5h"), Some(7), 6)?, "replaces usd");
            let shown: Vec<(SpendScope, String)> = all(c)?
                .into_iter()
                .map(|(s, c)| (s, c.to_string()))
                .collect();
            assert_eq!(
                shown,
                [
                    (SpendScope::Hive, "20usd/day".into()),
                    (ann.clone(), "100tokens/day".into()),
                    (ann.clone(), "2usd/5h".into()),
                ]
            );
            assert!(from_approval(c, 7)?);
            assert!(!from_approval(c, 8)?);
            assert_eq!(unset(c, &ann)?, 2);
            assert_eq!(unset(c, &ann)?, 0);
            forget(c, &id("ann"))?;
            assert_eq!(all(c)?.len(), 1, "the hive's stays");
            Ok(())
        })
        .unwrap();
}

#[test]
fn caps_survive_a_reopen_of_the_database() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("hive.db");
    {
        let store = Store::open(&path).unwrap();
        store
            .blocking(|c| set(c, &SpendScope::Hive, &cap("5usd/5h"), None, 1).map(drop))
            .unwrap();
    }
    let store = Store::open(&path).unwrap();
    let caps = store.blocking(|c| all(c)).unwrap();
    assert_eq!(caps, [(SpendScope::Hive, cap("5usd/5h"))]);
}
