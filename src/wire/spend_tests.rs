use super::*;

fn cap(text: &str) -> SpendCap {
    text.parse().unwrap()
}

#[test]
fn the_three_forms_parse_and_print_back_the_same() {
    let day = cap("20usd/day");
    assert_eq!(
        (day.limit, day.unit, day.window),
        (20_000_000, SpendUnit::Usd, SpendWindow::Day)
    );
    let tokens = cap("2000000tokens/day");
    assert_eq!((tokens.limit, tokens.unit), (2_000_000, SpendUnit::Tokens));
    let rolling = cap("5usd/5h");
    assert_eq!(rolling.window, SpendWindow::Rolling(5 * 3600));
    assert_eq!(cap("0.5usd/90m").limit, 500_000);
    assert_eq!(cap("2.50usd/7d").to_string(), "2.5usd/7d");
    for text in [
        "20usd/day",
        "2000000tokens/day",
        "5usd/5h",
        "0.000001usd/30m",
        "1usd/1d",
    ] {
        assert_eq!(cap(text).to_string(), text);
    }
    assert_eq!(
        cap("1usd/120m").to_string(),
        "1usd/2h",
        "largest exact unit"
    );
}

#[test]
fn anything_else_is_refused_naming_what_was_passed_and_the_forms() {
    for text in [
        "",
        "20",
        "20usd",
        "usd/day",
        "20 usd/day",
        "20usd/week",
        "20USD/day",
        "$20/day",
        "-1usd/day",
        "+1usd/day",
        "1.usd/day",
        "0.0000001usd/day",
        "1.5tokens/day",
        "20usd/0h",
        "20usd/59s",
        "20usd/90s",
        "20usd/400d",
        "20eur/day",
        "20usd/day/day",
        "99999999999999999999usd/day",
    ] {
        let err = text.parse::<SpendCap>().unwrap_err().to_string();
        assert!(
            err.starts_with(&format!("{text:?} is not a budget amount")),
            "{err}"
        );
        assert!(
            err.contains("20usd/day, 2000000tokens/day, 5usd/5h"),
            "{err}"
        );
    }
}

#[test]
fn a_cap_travels_as_its_text_and_a_bad_one_is_refused_on_the_way_in() {
    let json = serde_json::to_string(&cap("5usd/5h")).unwrap();
    assert_eq!(json, r#""5usd/5h""#);
    assert_eq!(
        serde_json::from_str::<SpendCap>(&json).unwrap(),
        cap("5usd/5h")
    );
    let err = serde_json::from_str::<SpendCap>(r#""5usd""#).unwrap_err();
    assert!(err.to_string().contains("not a budget amount"), "{err}");
}

#[test]
fn the_day_window_starts_at_utc_midnight_and_a_rolling_one_that_far_back() {
    let noon = 86_400 * 3 + 12 * 3600;
    assert_eq!(SpendWindow::Day.start(noon), 86_400 * 3);
    assert_eq!(SpendWindow::Day.start(86_400 * 3), 86_400 * 3);
    assert_eq!(SpendWindow::Day.start(86_400 * 3 - 1), 86_400 * 2);
    assert_eq!(SpendWindow::Rolling(5 * 3600).start(noon), noon - 5 * 3600);
}

#[test]
fn the_words_say_spent_of_limit_in_the_window() {
    assert_eq!(cap("20usd/day").words(20_000_000), "$20.00 of $20.00 today");
    assert_eq!(cap("5usd/5h").words(4_100_000), "$4.10 of $5.00 in 5h");
    assert_eq!(
        cap("2000000tokens/day").words(1_500_000),
        "1,500,000 of 2,000,000 tokens today"
    );
    assert!(cap("1usd/day").reached_by(1_000_000));
    assert!(!cap("1usd/day").reached_by(999_999));
    assert!(cap("0usd/day").reached_by(0), "a zero cap holds at once");
}

#[test]
fn a_scope_is_tagged_on_the_wire() {
    let row = BudgetRow {
        scope: SpendScope::Subtree(Ident::new("ruth").unwrap()),
        amount: cap("20usd/day"),
        source: SpendSource::Operator,
        spent: 5,
        since: 86_400,
        reached: false,
    };
    assert_eq!(
        serde_json::to_string(&row).unwrap(),
        r#"{"scope":"subtree","agent":"ruth","amount":"20usd/day","source":"operator","spent":5,"since":86400,"reached":false}"#
    );
    let hive = serde_json::to_string(&SpendScope::Hive).unwrap();
    assert_eq!(hive, r#"{"scope":"hive"}"#);
    let back: BudgetRow = serde_json::from_str(&serde_json::to_string(&row).unwrap()).unwrap();
    assert_eq!(back, row);
}

#[test]
fn money_reads_in_cents_from_a_cent_up_and_in_two_significant_digits_below() {
    assert_eq!(dollars(0), "$0.00");
    assert_eq!(dollars(250_000), "$0.25");
    assert_eq!(dollars(247_000), "$0.25", "rounded to the cent, half up");
    assert_eq!(dollars(244_999), "$0.24");
    assert_eq!(dollars(12_000_000), "$12.00");
    assert_eq!(dollars(1_234_500_000), "$1,234.50");
    assert_eq!(dollars(10_000), "$0.01");
    assert_eq!(dollars(4_200), "$0.0042");
    assert_eq!(dollars(4_237), "$0.0042");
    assert_eq!(dollars(1_108), "$0.0011");
    assert_eq!(dollars(554), "$0.00055");
    assert_eq!(dollars(5), "$0.000005");
    assert_eq!(
        dollars(9_960),
        "$0.01",
        "a rounding that makes a cent reads as one"
    );
}

#[test]
fn tokens_read_with_thousands_separators() {
    assert_eq!(tokens(0), "0");
    assert_eq!(tokens(950), "950");
    assert_eq!(tokens(1_280), "1,280");
    assert_eq!(tokens(100_000), "100,000");
    assert_eq!(tokens(2_000_000), "2,000,000");
    assert_eq!(tokens(u64::MAX), "18,446,744,073,709,551,615");
}
