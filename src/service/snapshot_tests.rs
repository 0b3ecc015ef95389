use super::*;

fn row(name: &str, parent: Option<&str>) -> AgentStatusRow {
    let line = format!(
        r#"{{"name":"{name}","running":true,"failed":false,"needs_update":false,
                "needs_login":false,"pending_reminders":0,"paused":false}}"#
    );
    let mut r: AgentStatusRow = serde_json::from_str(&line).unwrap();
    r.parent = parent.map(|p| Ident::new(p).unwrap());
    r
}

/// The published row of `name`, if any.
fn row_of(rows: &Rows, name: &Ident) -> Option<AgentStatusRow> {
    let current = rows.current();
    current.rows().iter().find(|r| &r.name == name).cloned()
}

#[test]
fn replacing_every_row_reports_only_the_changed_rows_and_the_gone_names() {
    let mut rows = Rows::default();
    let t = rows.ticket();
    let (changed, gone) =
        rows.replace_all([row("a", None), row("b", Some("a")), row("c", None)], t);
    assert_eq!(changed.len(), 3);
    assert!(gone.is_empty());
    // `a` destroyed: `b` moves up to the root, `c` is as it was.
    let t = rows.ticket();
    let (changed, gone) = rows.replace_all([row("b", None), row("c", None)], t);
    assert_eq!(changed, vec![row("b", None)]);
    assert_eq!(gone, vec![Ident::new("a").unwrap()]);
    let current = rows.current();
    let names: Vec<&str> = current.rows().iter().map(|r| r.name.as_str()).collect();
    assert_eq!(names, ["b", "c"]);
}

#[test]
fn removing_a_row_says_whether_there_was_one() {
    let mut rows = Rows::default();
    let t = rows.ticket();
    assert_eq!(rows.put(row("a", None), t), Some(true));
    assert_eq!(
        rows.put(row("a", None), t),
        Some(false),
        "the same row twice is no change"
    );
    assert!(rows.remove(&Ident::new("a").unwrap(), t));
    assert!(!rows.remove(&Ident::new("a").unwrap(), t));
    assert!(rows.current().rows().is_empty());
}

#[test]
fn a_build_that_finishes_after_a_newer_one_changes_nothing() {
    let mut rows = Rows::default();
    let a = Ident::new("a").unwrap();
    let (stale, newer) = (rows.ticket(), rows.ticket());
    assert_eq!(rows.put(row("a", Some("x")), newer), Some(true));
    assert_eq!(
        rows.put(row("a", None), stale),
        None,
        "a stale row does not replace a newer one"
    );
    assert_eq!(row_of(&rows, &a), Some(row("a", Some("x"))));
    // Removed by a newer build: a stale row does not bring it back.
    let (stale, newer) = (rows.ticket(), rows.ticket());
    assert!(rows.remove(&a, newer));
    assert_eq!(rows.put(row("a", None), stale), None);
    assert_eq!(row_of(&rows, &a), None);
}

#[test]
fn a_reload_keeps_rows_newer_builds_set_and_refuses_older_ones_after_it() {
    let mut rows = Rows::default();
    let t = rows.ticket();
    rows.replace_all([row("a", None), row("b", None)], t);
    let (before, reload, after) = (rows.ticket(), rows.ticket(), rows.ticket());
    assert_eq!(rows.put(row("a", Some("b")), after), Some(true));
    // The reload read before `after`'s build: `a` keeps that build's row.
    let (changed, gone) = rows.replace_all([row("b", None)], reload);
    assert!(
        changed.is_empty() && gone.is_empty(),
        "{changed:?} {gone:?}"
    );
    let a = Ident::new("a").unwrap();
    assert_eq!(row_of(&rows, &a), Some(row("a", Some("b"))));
    // A build from before the reload changes nothing, for any name.
    assert_eq!(rows.put(row("b", Some("a")), before), None);
    assert_eq!(rows.put(row("c", None), before), None);
    let t = rows.ticket();
    assert_eq!(rows.put(row("c", None), t), Some(true));
}
