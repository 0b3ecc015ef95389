use super::*;

#[test]
fn wire_names_match_the_lookup_tables() {
    for g in ToolGroup::ALL {
        assert_eq!(
            serde_json::to_string(g).unwrap(),
            format!("\"{}\"", g.as_str())
        );
        assert_eq!(ToolGroup::parse(g.as_str()), Some(*g));
    }
    for c in Capability::ALL {
        assert_eq!(
            serde_json::to_string(c).unwrap(),
            format!("\"{}\"", c.as_str())
        );
        assert_eq!(Capability::parse(c.as_str()), Some(*c));
    }
}

#[test]
fn an_operator_question_omits_its_target_and_empty_options() {
    let q = WireQuestion {
        id: 1,
        asker: "alice".into(),
        target: None,
        question: "ship?".into(),
        options: vec![],
        multi: false,
        asked_at: 5,
        expires_at: None,
    };
    assert_eq!(
        serde_json::to_string(&q).unwrap(),
        r#"{"id":1,"asker":"alice","question":"ship?","multi":false,"asked_at":5}"#
    );
}

#[test]
fn reminder_timing_is_tagged_by_timing_type() {
    let t: ReminderTiming =
        serde_json::from_str(r#"{"timing_type":"in_seconds","seconds":30}"#).unwrap();
    assert_eq!(t, ReminderTiming::InSeconds { seconds: 30 });
    assert_eq!(
        serde_json::to_string(&ReminderTiming::At { unix_timestamp: 5 }).unwrap(),
        r#"{"timing_type":"at","unix_timestamp":5}"#
    );
}
