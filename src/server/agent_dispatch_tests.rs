use super::cap_text;

#[test]
fn journal_text_over_the_budget_is_cut_at_a_line_and_says_so() {
    let text = "one\ntwo\nthree\n".to_owned();
    assert_eq!(cap_text(text.clone(), 100), text);
    let cut = cap_text(text, 9);
    assert!(cut.starts_with("one\ntwo\n["), "{cut}");
    assert!(cut.contains("[truncated: 6 of 14 bytes left out"), "{cut}");
}
