use super::*;

#[test]
fn variables_round_trip_through_one_value_without_spaces_quotes_or_commas() {
    let vars = [
        ("ANTHROPIC_BASE_URL", "http://127.0.0.2:47023/v1?a=b"),
        ("GREETING", "hello, world 100% \u{e9}"),
        ("EMPTY", ""),
    ];
    let text = encode(vars);
    assert_eq!(
        text,
        "ANTHROPIC_BASE_URL=http://127.0.0.2:47023/v1%3Fa=b,\
         GREETING=hello%2C%20world%20100%25%20%C3%A9,EMPTY="
    );
    assert!(!text.contains([' ', '"', '\\']));
    let back = decode(&text).unwrap();
    let expected: Vec<(String, String)> = vars
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    assert_eq!(back, expected);
}

#[test]
fn an_empty_value_is_no_variables() {
    assert_eq!(encode([]), "");
    assert_eq!(decode("").unwrap(), Vec::new());
}

#[test]
fn a_malformed_entry_is_refused_by_name() {
    for text in ["NOEQUALS", "1BAD=x", "A=%4", "A=%zz", "A=%FF", "A=1,,B=2"] {
        let e = decode(text).unwrap_err();
        assert!(e.to_string().contains(ENV_CLAUDE_ENV), "{e}");
    }
}
