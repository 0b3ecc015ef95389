use super::*;

#[test]
fn a_bus_message_is_one_flat_json_object() {
    let m = BusMessage {
        v: 1,
        seq: 7,
        from: "alice".into(),
        to: "bob".into(),
        body: "hi".into(),
        at: 5,
    };
    let line = serde_json::to_string(&m).unwrap();
    assert_eq!(
        line,
        r#"{"v":1,"seq":7,"from":"alice","to":"bob","body":"hi","at":5}"#
    );
    assert_eq!(serde_json::from_str::<BusMessage>(&line).unwrap(), m);
}
