use super::*;
use crate::store::Store;
use crate::testing::id;

fn cursor(offset: u64, ids: &[&str]) -> Cursor {
    Cursor {
        offset,
        skipping: false,
        recent: ids.iter().map(|s| (*s).to_owned()).collect(),
    }
}

#[tokio::test]
async fn a_cursor_moves_only_from_where_it_was_read() {
    let store = Store::open_in_memory().unwrap();
    store
        .run(|c| {
            let a = id("alice");
            assert_eq!(get(c, &a, "t.jsonl")?, None);
            let first = cursor(10, &["m1"]);
            assert!(advance(c, &a, "t.jsonl", Some("s"), None, &first, 1)?);
            // A second first read of the same file lost the race.
            assert!(!advance(
                c,
                &a,
                "t.jsonl",
                Some("s"),
                None,
                &cursor(99, &[]),
                1
            )?);
            assert_eq!(get(c, &a, "t.jsonl")?, Some(first.clone()));
            let second = cursor(20, &["m1", "m2"]);
            assert!(advance(c, &a, "t.jsonl", None, Some(&first), &second, 2)?);
            // A read that started from the first cursor is too late now.
            assert!(!advance(
                c,
                &a,
                "t.jsonl",
                None,
                Some(&first),
                &cursor(30, &[]),
                3
            )?);
            assert_eq!(get(c, &a, "t.jsonl")?, Some(second));
            assert_eq!(get(c, &id("bob"), "t.jsonl")?, None);
            Ok(())
        })
        .await
        .unwrap();
}

#[tokio::test]
async fn the_least_recently_read_cursors_go_past_the_bound() {
    let store = Store::open_in_memory().unwrap();
    store
        .run(|c| {
            let a = id("alice");
            for i in 0..=MAX_CURSORS_PER_AGENT {
                advance(c, &a, &format!("t{i}"), None, None, &cursor(1, &[]), i)?;
            }
            let kept: i64 = c.query_row(
                "SELECT COUNT(*) FROM transcript_cursors WHERE agent = 'alice'",
                [],
                |r| r.get(0),
            )?;
            assert_eq!(kept, MAX_CURSORS_PER_AGENT);
            assert_eq!(get(c, &a, "t0")?, None);
            assert!(get(c, &a, &format!("t{MAX_CURSORS_PER_AGENT}"))?.is_some());
            Ok(())
        })
        .await
        .unwrap();
}
