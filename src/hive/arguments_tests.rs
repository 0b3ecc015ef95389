use super::*;

#[test]
fn a_commit_ref_is_seven_to_forty_hex_digits() {
    for good in ["0123456", "abcdefABCDEF0123", &"f".repeat(40)] {
        assert!(check_commit_ref(good).is_ok(), "{good}");
    }
    for bad in [
        "012345",
        &"a".repeat(41),
        "0123456g",
        "--force",
        "HEAD~1",
        "",
    ] {
        let err = check_commit_ref(bad).unwrap_err().to_string();
        assert!(err.contains("7-40 hex digits"), "{err}");
    }
}

#[test]
fn an_input_name_cannot_look_like_an_option() {
    for good in ["nixpkgs", "home-manager", "hive_c0re"] {
        assert!(check_input(good).is_ok(), "{good}");
    }
    for bad in ["", "-x", "--override-input", "a b", "a/b", "a;b"] {
        assert!(check_input(bad).is_err(), "{bad:?}");
    }
    assert!(check_inputs(r#"["nixpkgs","home-manager"]"#).is_ok());
    assert!(check_inputs("[]").is_ok());
    let err = check_inputs(r#"["nixpkgs","--override-input"]"#).unwrap_err();
    assert!(err.to_string().contains("\"--override-input\""), "{err}");
    assert!(check_inputs("nixpkgs").is_err());
}

#[test]
fn a_wake_sender_and_a_model_are_short_lines() {
    assert!(check_wake_from("ci").is_ok());
    assert!(check_wake_from("operator").is_ok());
    for bad in ["", "a\nb", &"x".repeat(MAX_WAKE_FROM + 1)] {
        assert!(check_wake_from(bad).is_err(), "{bad:?}");
    }
    assert!(check_model(None).is_ok());
    assert!(check_model(Some("claude-opus-4")).is_ok());
    for bad in ["", "a\u{7}", &"m".repeat(MAX_MODEL + 1)] {
        assert!(check_model(Some(bad)).is_err(), "{bad:?}");
    }
}
