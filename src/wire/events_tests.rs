use super::*;

#[test]
fn events_are_tagged_by_event_and_omit_absent_optionals() {
    let e = HelperEvent::ApprovalResolved {
        id: 3,
        agent: "alice".into(),
        commit_ref: String::new(),
        status: ApprovalStatus::Approved,
        note: None,
        sha: None,
        tag: None,
    };
    assert_eq!(
        e.to_body(),
        r#"{"event":"approval_resolved","id":3,"agent":"alice","commit_ref":"","status":"approved"}"#
    );
    assert_eq!(
        HelperEvent::ContainerCrash {
            agent: "a".into(),
            note: Some("signal".into())
        }
        .to_body(),
        r#"{"event":"container_crash","agent":"a","note":"signal"}"#
    );
}

#[test]
fn needs_update_names_the_agent_whose_base_moved() {
    assert_eq!(
        HelperEvent::NeedsUpdate {
            agent: "alice".into()
        }
        .to_body(),
        r#"{"event":"needs_update","agent":"alice"}"#
    );
}
