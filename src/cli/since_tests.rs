use super::*;

#[test]
fn a_window_is_a_span_back_or_a_utc_date() {
    assert_eq!(parse_since("24h"), Ok(Since::Ago(86_400)));
    assert_eq!(parse_since("7d"), Ok(Since::Ago(604_800)));
    assert_eq!(parse_since("90m"), Ok(Since::Ago(5400)));
    assert_eq!(parse_since("1970-01-02"), Ok(Since::Date(86_400)));
    assert_eq!(parse_since("2026-12-01"), Ok(Since::Date(1_796_083_200)));
    assert_eq!(Since::Date(100).seconds_before(160), 60);
    assert_eq!(
        Since::Date(200).seconds_before(160),
        0,
        "a future date is now"
    );
    for bad in [
        "",
        "h",
        "24",
        "24w",
        "-1h",
        "2026-02-30",
        "2026-13-01",
        "26-12-01",
    ] {
        let err = parse_since(bad).unwrap_err();
        assert!(err.contains("24h, 7d"), "{bad:?}: {err}");
    }
}
