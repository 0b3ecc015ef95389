use super::*;

#[test]
fn lowercase_digits_and_dashes_are_names() {
    for ok in ["a", "alice", "agent-7", "0", &"x".repeat(63)] {
        assert_eq!(Ident::new(ok).map(|i| i.to_string()), Ok(ok.to_string()));
    }
}

#[test]
fn anything_that_could_reach_a_path_or_unit_name_is_refused() {
    for bad in [
        "",
        "Alice",
        "a/b",
        "..",
        "a.b",
        "a b",
        "a@b",
        "a;b",
        "<parent>",
        "é",
        &"x".repeat(64),
    ] {
        assert!(Ident::new(bad).is_err(), "{bad:?} was accepted");
    }
}

#[test]
fn the_manager_constant_is_a_valid_name() {
    assert!(Ident::new(crate::config::MANAGER).is_ok());
}

#[test]
fn a_bad_name_is_refused_at_deserialization_with_the_value_in_the_message() {
    let err = serde_json::from_str::<Ident>("\"../etc\"").unwrap_err();
    assert!(err.to_string().contains("invalid name \"../etc\""), "{err}");
}
