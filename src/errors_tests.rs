use super::*;

#[derive(Debug, thiserror::Error)]
#[error("cannot read the config")]
struct Outer(#[source] std::io::Error);

#[test]
fn a_chain_names_the_error_then_each_cause_once() {
    let err = Outer(std::io::Error::other("disk on fire"));
    assert_eq!(chain(&err), "cannot read the config: disk on fire");
}

#[test]
fn an_error_without_a_source_is_its_message() {
    assert_eq!(chain(&std::io::Error::other("plain")), "plain");
}
