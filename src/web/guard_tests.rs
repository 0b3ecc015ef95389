use super::*;

fn headers(pairs: &[(&'static str, &str)]) -> HeaderMap {
    let mut h = HeaderMap::new();
    for (k, v) in pairs {
        h.insert(*k, HeaderValue::from_str(v).unwrap());
    }
    h
}

#[test]
fn a_post_from_the_dashboards_own_origin_passes() {
    let h = headers(&[
        ("host", "127.0.0.1:8080"),
        ("origin", "http://127.0.0.1:8080"),
    ]);
    assert_eq!(same_origin(&h), Ok(()));
    let h = headers(&[
        ("host", "hive.example.org"),
        ("origin", "https://hive.example.org"),
        ("sec-fetch-site", "same-origin"),
    ]);
    assert_eq!(same_origin(&h), Ok(()));
}

#[test]
fn a_post_from_another_origin_is_refused_naming_both() {
    let h = headers(&[
        ("host", "127.0.0.1:8080"),
        ("origin", "http://evil.example"),
    ]);
    let err = same_origin(&h).unwrap_err();
    assert!(matches!(err, Forged::OtherOrigin { .. }));
    assert!(err.to_string().contains("evil.example"), "{err}");
}

#[test]
fn a_post_without_origin_or_marked_cross_site_is_refused() {
    let h = headers(&[("host", "127.0.0.1:8080")]);
    assert_eq!(same_origin(&h), Err(Forged::NoOrigin));
    let h = headers(&[
        ("host", "127.0.0.1:8080"),
        ("origin", "http://127.0.0.1:8080"),
        ("sec-fetch-site", "cross-site"),
    ]);
    assert!(matches!(same_origin(&h), Err(Forged::CrossSite(_))));
}

#[test]
fn the_token_is_found_among_the_form_fields() {
    assert_eq!(form_token(b"to=alice&csrf=ab12&body=hi"), Some("ab12"));
    assert_eq!(form_token(b"to=alice&body=csrf%3Dab12"), None);
    assert_eq!(form_token(b"xcsrf=ab12"), None);
}

#[test]
fn a_token_matches_only_itself() {
    let t = Token::generate().unwrap();
    let u = Token::generate().unwrap();
    assert_eq!(t.as_str().len(), 64);
    assert!(t.matches(t.as_str()));
    assert!(!t.matches(u.as_str()));
    assert!(!t.matches(&t.as_str()[..63]));
    assert!(!t.matches(""));
}
