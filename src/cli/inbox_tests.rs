use super::*;

use crate::testing::inbox_message as row;

#[test]
fn an_answer_without_the_asked_message_is_told_only_for_inbox_show() {
    let rows = vec![row(3, "other", None)];
    let answer = HostResponse::messages(rows);
    assert!(not_answered(&request(7), &answer).is_some_and(|m| m.contains("message 7")));
    assert_eq!(not_answered(&request(3), &answer), None);
    let list = HostRequest::Inbox {
        limit: Some(5),
        id: None,
    };
    assert_eq!(not_answered(&list, &answer), None);
}
