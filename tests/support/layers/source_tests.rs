//! The reader's own tests: what `tests/layers.rs` relies on it to see.

use std::collections::{BTreeMap, BTreeSet};

use super::{circles, method_calls, rooms};

#[test]
fn the_circle_finder_finds_circles_of_any_length_and_nothing_else() {
    let graph = |edges: &[(&str, &str)]| {
        let mut g: BTreeMap<String, BTreeSet<String>> = BTreeMap::new();
        for (a, b) in edges {
            g.entry((*a).to_owned())
                .or_default()
                .insert((*b).to_owned());
            g.entry((*b).to_owned()).or_default();
        }
        g
    };
    let three = graph(&[
        ("lists", "live"),
        ("live", "pages"),
        ("pages", "lists"),
        ("pages", "views"),
    ]);
    assert_eq!(circles(&three), vec![vec!["lists", "live", "pages"]]);
    let two = graph(&[("approvals", "lifecycle"), ("lifecycle", "approvals")]);
    assert_eq!(circles(&two), vec![vec!["approvals", "lifecycle"]]);
    let tree = graph(&[("a", "b"), ("b", "c"), ("a", "c")]);
    assert!(circles(&tree).is_empty());
}

#[test]
fn a_room_reads_super_crate_and_reexported_paths_as_uses_of_siblings() {
    let dir = std::env::temp_dir().join(format!("layers-{}", std::process::id()));
    let room = dir.join("room");
    std::fs::create_dir_all(&room).unwrap();
    let write = |name: &str, text: &str| std::fs::write(room.join(name), text).unwrap();
    write("mod.rs", "mod a; mod b; mod c; mod d;\npub use d::Thing;\n");
    write(
        "a.rs",
        "use super::b::f;\n#[cfg(test)]\nmod tests { use super::super::c; }\n",
    );
    write("b.rs", "fn g() { crate::room::c::h() }\n");
    write("c.rs", "use super::Thing;\n");
    write("d.rs", "use super::{self, a};\n");
    let rooms = rooms(&dir);
    let _ = std::fs::remove_dir_all(&dir);
    let graph = &rooms[&vec!["room".to_owned()]];
    let edges: Vec<String> = graph
        .iter()
        .flat_map(|(a, to)| to.iter().map(move |b| format!("{a}->{b}")))
        .collect();
    assert_eq!(edges, vec!["a->b", "b->c", "c->d", "d->a"]);
    assert_eq!(circles(graph), vec![vec!["a", "b", "c", "d"]]);
}

#[test]
fn the_call_reader_sees_calls_across_files_and_not_within_one_or_in_tests() {
    let file = |stem: &str, text: &str| (stem.to_owned(), text.to_owned());
    let files = [
        file(
            "a",
            "impl Hive { pub fn f(&self) { self.g(); self.own(); } fn own(&self) {} }",
        ),
        file(
            "b",
            "impl Hive { async fn g(&self) { let h = self.clone(); h.k(); } }",
        ),
        file(
            "c",
            "impl Hive { fn k(&self) { fn inner() {} }\n\
             #[cfg(test)]\nmod tests { fn t(hive: Hive) { hive.f(); } } }",
        ),
    ];
    let graph = method_calls("Hive", &files);
    let edges: Vec<String> = graph
        .iter()
        .flat_map(|(a, to)| to.iter().map(move |b| format!("{a}->{b}")))
        .collect();
    assert_eq!(edges, vec!["a->b", "b->c"]);
}
