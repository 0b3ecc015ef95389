use super::back_to;

#[test]
fn a_successful_action_returns_only_to_a_local_page() {
    assert_eq!(back_to(Some("/agent/alice"), "/"), "/agent/alice");
    assert_eq!(back_to(Some("//evil.example/"), "/"), "/");
    assert_eq!(back_to(Some("/\\evil.example"), "/"), "/");
    assert_eq!(back_to(Some("https://evil.example/"), "/x"), "/x");
    assert_eq!(back_to(None, "/inbox"), "/inbox");
}
