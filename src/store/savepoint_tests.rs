use super::*;

fn count(conn: &Connection) -> i64 {
    conn.query_row("SELECT COUNT(*) FROM t", [], |r| r.get(0))
        .unwrap()
}

#[test]
fn a_released_savepoint_keeps_its_rows_and_a_dropped_one_undoes_only_its_own() {
    let conn = Connection::open_in_memory().unwrap();
    conn.execute_batch("CREATE TABLE t (x); BEGIN").unwrap();
    let outer = Savepoint::open(&conn, JOB).unwrap();
    outer.execute("INSERT INTO t VALUES (1)", []).unwrap();
    {
        let inner = Savepoint::open(&outer, NESTED).unwrap();
        inner.execute("INSERT INTO t VALUES (2)", []).unwrap();
        let innermost = Savepoint::open(&inner, NESTED).unwrap();
        innermost.execute("INSERT INTO t VALUES (3)", []).unwrap();
        drop(innermost);
        assert_eq!(count(&conn), 2, "the innermost insert is undone");
        inner.release().unwrap();
    }
    outer.release().unwrap();
    conn.execute_batch("COMMIT").unwrap();
    assert_eq!(count(&conn), 2);
    assert!(conn.is_autocommit(), "every savepoint was closed");
}
