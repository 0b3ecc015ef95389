use super::*;

#[test]
fn rfc3339_formats_known_instants_in_utc() {
    assert_eq!(rfc3339(0), "1970-01-01T00:00:00Z");
    assert_eq!(rfc3339(1_796_040_000), "2026-11-30T12:00:00Z");
    assert_eq!(rfc3339(951_782_400), "2000-02-29T00:00:00Z");
}

#[test]
fn rfc3339_parses_back_what_it_formats_and_nothing_else() {
    for t in [0, 951_782_400, 1_796_040_000, 4_102_444_799, 1_709_164_800] {
        assert_eq!(parse_rfc3339(&rfc3339(t)), Some(t), "{t}");
    }
    for bad in [
        "",
        "2026-11-30 12:00:00Z",
        "2026-11-30T12:00:00",
        "2026-13-30T12:00:00Z",
        "2026-11-30T24:00:00Z",
        "2026-11-30T12:00:00+01:00",
        "+026-11-30T12:00:00Z",
    ] {
        assert_eq!(parse_rfc3339(bad), None, "{bad}");
    }
}

#[test]
fn a_manual_clock_moves_only_when_told() {
    let c = ManualClock::new(100);
    assert_eq!(c.now_unix(), 100);
    c.advance(5);
    assert_eq!(c.now_unix(), 105);
}
