#[test]
fn an_inbox_at_either_cap_refuses_and_one_below_both_admits() {
    let limits = InboxLimits {
        messages: 3,
        bytes: 100,
    };
    let load = |messages, bytes| InboxLoad { messages, bytes };
    assert!(admit(load(2, 50), 50, limits).is_ok());
    assert!(admit(load(3, 0), 1, limits).is_err());
    assert!(admit(load(2, 60), 41, limits).is_err());
}

use super::*;

use crate::hive::topology::Topology;
use crate::testing::{id, topology};

/// ruth → a → (b, c); root r
fn tree() -> Topology {
    topology(&[
        ("ruth", None),
        ("a", Some("ruth")),
        ("b", Some("a")),
        ("c", Some("a")),
        ("r", None),
    ])
}

fn resolve(t: &Topology, sender: &Ident, to: &str) -> Result<Vec<Recipient>, UnknownRecipient> {
    super::resolve(t, sender, to)
}

fn agents(names: &[&str]) -> Vec<Recipient> {
    names.iter().map(|n| Recipient::Agent(id(n))).collect()
}

#[test]
fn parent_is_the_topology_parent_or_the_operator_for_a_root() {
    let t = tree();
    assert_eq!(resolve(&t, &id("b"), "<parent>"), Ok(agents(&["a"])));
    assert_eq!(resolve(&t, &id("a"), "<parent>"), Ok(agents(&["ruth"])));
    assert_eq!(
        resolve(&t, &id("r"), "<parent>"),
        Ok(vec![Recipient::Operator])
    );
    assert_eq!(
        resolve(&t, &id("ruth"), "<parent>"),
        Ok(vec![Recipient::Operator])
    );
}

#[test]
fn children_are_the_direct_children_only_and_a_leaf_has_none() {
    let t = tree();
    assert_eq!(resolve(&t, &id("a"), "<children>"), Ok(agents(&["b", "c"])));
    assert_eq!(resolve(&t, &id("ruth"), "<children>"), Ok(agents(&["a"])));
    assert_eq!(resolve(&t, &id("b"), "<children>"), Ok(vec![]));
}

#[test]
fn operator_and_managed_agents_are_addressed_by_name() {
    let t = tree();
    assert_eq!(
        resolve(&t, &id("b"), "operator"),
        Ok(vec![Recipient::Operator])
    );
    assert_eq!(resolve(&t, &id("b"), "r"), Ok(agents(&["r"])));
    assert_eq!(resolve(&t, &id("b"), "b"), Ok(agents(&["b"])));
}

#[test]
fn an_unknown_or_malformed_recipient_is_refused_by_name() {
    let t = tree();
    for to in ["zed", "../etc", "", "<parents>", "system", "Ruth"] {
        let err = resolve(&t, &id("b"), to).unwrap_err();
        assert_eq!(err, UnknownRecipient::Local(to.to_owned()));
        assert!(err.to_string().contains("no recipient"), "{err}");
    }
}
