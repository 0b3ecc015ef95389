use super::*;

use crate::testing::{id, topology};

/// ruth → a → b → c, ruth → d
fn tree() -> Topology {
    topology(&[
        ("ruth", None),
        ("a", Some("ruth")),
        ("b", Some("a")),
        ("c", Some("b")),
        ("d", Some("ruth")),
    ])
}

#[test]
fn unknown_child_or_parent_is_refused() {
    let t = tree();
    assert_eq!(
        t.check_move(&id("zz"), None),
        Err(TopologyError::UnknownChild(id("zz")))
    );
    assert_eq!(
        t.check_move(&id("a"), Some(&id("zz"))),
        Err(TopologyError::UnknownParent(id("zz")))
    );
}

#[test]
fn self_parenting_and_cycles_are_refused() {
    let t = tree();
    assert_eq!(
        t.check_move(&id("a"), Some(&id("a"))),
        Err(TopologyError::SelfParent(id("a")))
    );
    assert_eq!(
        t.check_move(&id("a"), Some(&id("c"))),
        Err(TopologyError::Cycle {
            child: id("a"),
            parent: id("c")
        })
    );
}

#[test]
fn no_change_is_a_success_and_a_real_move_is_reported() {
    let t = tree();
    assert_eq!(
        t.check_move(&id("b"), Some(&id("a"))),
        Ok(Outcome::AlreadyInState)
    );
    assert_eq!(t.check_move(&id("ruth"), None), Ok(Outcome::AlreadyInState));
    assert_eq!(t.check_move(&id("c"), Some(&id("d"))), Ok(Outcome::Done));
    assert_eq!(t.check_move(&id("c"), None), Ok(Outcome::Done));
}

#[test]
fn descendants_come_parents_first_then_by_name() {
    let t = tree();
    assert_eq!(
        t.descendants(&id("ruth")),
        vec![id("a"), id("d"), id("b"), id("c")]
    );
    assert_eq!(t.children(&id("ruth")), vec![id("a"), id("d")]);
    assert!(t.descendants(&id("c")).is_empty());
}
