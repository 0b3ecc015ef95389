use super::*;
use crate::wire::egress_audit::Verdict;

fn row(verdict: Verdict, count: u64, target: Option<&str>, reason: Option<&str>) -> EgressLogRow {
    EgressLogRow {
        id: 1,
        at_ms: 1_796_000_000_500,
        verdict,
        count,
        target: target.map(str::to_owned),
        address: None,
        reason: reason.map(str::to_owned),
        up: 120,
        down: 4_096,
        ms: 1_300,
    }
}

#[test]
fn each_row_is_one_line_with_its_count_and_no_control_character() {
    let mut allowed = row(Verdict::Allowed, 1, Some("pypi.org:443"), None);
    allowed.address = Some("151.101.0.223:443".into());
    let rows = [
        allowed,
        row(
            Verdict::Limited,
            312,
            None,
            Some("over its connection rate"),
        ),
        row(
            Verdict::Refused,
            1,
            Some("evil.test:443"),
            Some("x\x1b[2J\ny"),
        ),
    ];
    let text = table_of(&rows);
    let lines: Vec<&str> = text.lines().collect();
    assert_eq!(lines.len(), 4, "{text}");
    assert!(lines[0].starts_with("TIME"), "{text}");
    assert!(
        lines[1].contains("allowed") && lines[1].contains("151.101.0.223:443"),
        "{text}"
    );
    assert!(lines[1].contains("120") && lines[1].contains("4096") && lines[1].contains("1.3s"));
    assert!(lines[2].contains("limited x312") && lines[2].contains("over its connection rate"));
    assert!(
        lines[3].contains("evil.test:443") && lines[3].contains("x [2J y"),
        "{text}"
    );
    assert!(!text.contains('\x1b'));
}

#[test]
fn no_rows_say_so() {
    assert_eq!(table_of(&[]), "no egress connections recorded\n");
}
