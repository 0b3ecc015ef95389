use super::*;
use crate::testing::id;

#[test]
fn every_name_the_wire_gives_a_meaning_is_refused_for_a_new_agent() {
    let manager = id("ruth");
    for name in ["system", "operator", "ruth"] {
        let err = check_new_agent(&id(name), &manager).unwrap_err();
        assert!(
            err.to_string().contains(&format!("\"{name}\" is reserved")),
            "{err}"
        );
    }
    assert!(check_new_agent(&id("alice"), &manager).is_ok());
    assert!(check_new_agent(&id("systems"), &manager).is_ok());
}

#[test]
fn a_remote_sender_must_be_a_name_and_never_system() {
    for ok in ["alice", "operator", "ruth"] {
        assert_eq!(check_remote_sender(ok), Ok(()), "{ok}");
    }
    for bad in ["system", "", "Bob", "a@b", "<parent>", "x\ny"] {
        let err = check_remote_sender(bad).unwrap_err();
        assert!(err.contains(&format!("{bad:?}")), "{err}");
    }
    assert!(!is_inbox_name(&id("system")));
    assert!(is_inbox_name(&id("operator")));
}

#[test]
fn stored_rows_with_reserved_names_are_found_but_not_the_manager_itself() {
    let names = [id("ruth"), id("alice"), id("system"), id("operator")];
    let found = reserved_among(&names, &id("ruth"));
    assert_eq!(found, vec![&id("system"), &id("operator")]);
}
