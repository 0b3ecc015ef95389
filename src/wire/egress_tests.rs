//! The first line of a connection to the egress service: a dial line or
//! the daemon's holds line, told apart strictly, and a hold's shape.

use super::*;

fn hold() -> GatewayHold {
    GatewayHold {
        budget: "1usd/day on the hive".into(),
        spent: "$1.00 of $1.00 today for the hive".into(),
        raise: "hivectl budget set --hive AMOUNT".into(),
        wait_ms: 300_000,
    }
}

#[test]
fn a_dial_line_and_a_holds_line_are_told_apart_and_a_dial_line_without_a_hold_is_unchanged() {
    let dial = r#"{"agent":"alice","allow":["example.com:443"],"verdict":1,"meter":1}"#;
    let ServiceLine::Dial(parsed) = ServiceLine::parse(dial).unwrap() else {
        panic!("a dial line");
    };
    assert_eq!(parsed.hold, None);
    assert_eq!(serde_json::to_string(&parsed).unwrap(), dial, "additive");
    let held = DialRequest {
        hold: Some(hold()),
        ..parsed
    };
    let text = serde_json::to_string(&held).unwrap();
    assert_eq!(ServiceLine::parse(&text).unwrap(), ServiceLine::Dial(held));
    let line = HoldsLine {
        holds: [(super::super::ident::Ident::new("alice").unwrap(), hold())].into(),
    };
    let text = serde_json::to_string(&line).unwrap();
    assert_eq!(ServiceLine::parse(&text).unwrap(), ServiceLine::Holds(line));
    assert_eq!(
        ServiceLine::parse(r#"{"holds":{}}"#).unwrap(),
        ServiceLine::Holds(HoldsLine::default())
    );
    // A holds line naming a bad agent, or a line that is neither: errors.
    assert!(ServiceLine::parse(r#"{"holds":{"../x":{}}}"#).is_err());
    assert!(ServiceLine::parse(r#"{"allow":[]}"#).is_err());
    assert!(ServiceLine::parse("not json").is_err());
}

#[test]
fn a_hold_with_a_control_character_a_long_text_or_a_wait_over_a_day_is_not_well_formed() {
    assert!(hold().well_formed());
    let mut bad = hold();
    bad.spent = "line\nbreak".into();
    assert!(!bad.well_formed());
    let mut bad = hold();
    bad.budget = "x".repeat(MAX_HOLD_TEXT + 1);
    assert!(!bad.well_formed());
    let mut bad = hold();
    bad.wait_ms = MAX_HOLD_WAIT_MS + 1;
    assert!(!bad.well_formed());
    let line = HoldsLine {
        holds: [(super::super::ident::Ident::new("alice").unwrap(), bad)].into(),
    };
    assert!(!line.well_formed());
}
