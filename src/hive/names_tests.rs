use super::*;
use crate::testing::id;

#[test]
fn every_name_the_wire_gives_a_meaning_is_refused_for_a_new_agent() {
    let manager = id("ruth");
    for name in ["system", "operator", "ruth"] {
        let err = check_new_agent(&id(name), &manager).unwrap_err();
        assert!(
            err.to_string().contains(&format!(
                "\"{name}\" cannot be a new agent's: it is reserved"
            )),
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
    let found: Vec<_> = reserved_among(&names, &id("ruth"))
        .into_iter()
        .map(|(name, _)| name)
        .collect();
    assert_eq!(found, vec![&id("system"), &id("operator")]);
}

#[test]
fn a_new_name_must_start_and_end_with_a_letter_or_digit() {
    let manager = id("ruth");
    for name in ["-", "-x", "x-", "-x-", "--"] {
        let err = check_new_agent(&id(name), &manager).unwrap_err();
        let text = err.to_string();
        assert!(text.contains(&format!("\"{name}\"")), "{text}");
        assert!(
            text.contains("start and end with a letter or a digit"),
            "{text}"
        );
    }
    for name in ["x", "a-b", "0", "a--b", "9x-1"] {
        assert_eq!(check_new_agent(&id(name), &manager), Ok(()), "{name}");
    }
}

#[test]
fn a_stored_name_with_an_edge_hyphen_is_reported_with_a_destroy_hint_that_parses() {
    let names = [id("alice"), id("-x"), id("y-")];
    let found = reserved_among(&names, &id("ruth"));
    let names: Vec<_> = found.iter().map(|(n, _)| n.as_str()).collect();
    assert_eq!(names, vec!["-x", "y-"]);
    assert_eq!(id("-x").as_argument(), "-- -x");
    assert_eq!(id("y-").as_argument(), "y-");
}
