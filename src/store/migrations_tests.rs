use super::*;

#[test]
fn migrating_twice_is_a_no_op_and_lands_on_the_latest_version() {
    let mut conn = Connection::open_in_memory().unwrap();
    apply(&mut conn).unwrap();
    apply(&mut conn).unwrap();
    let v: i64 = conn
        .pragma_query_value(None, "user_version", |r| r.get(0))
        .unwrap();
    assert_eq!(v, latest());
}

#[test]
fn a_database_from_a_newer_build_is_refused() {
    let mut conn = Connection::open_in_memory().unwrap();
    conn.pragma_update(None, "user_version", latest() + 1)
        .unwrap();
    assert!(matches!(apply(&mut conn), Err(StoreError::TooNew { .. })));
}
