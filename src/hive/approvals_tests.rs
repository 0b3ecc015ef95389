use super::*;
use ApprovalStatus::*;

#[test]
fn only_a_pending_unclaimed_row_takes_a_decision() {
    assert_eq!(check(Pending, false), Ok(()));
    assert_eq!(check(Pending, true), Err(Refusal::InProgress));
}

#[test]
fn a_terminal_row_never_moves() {
    for s in [Approved, Denied, Failed, Cancelled] {
        assert_eq!(check(s, false), Err(Refusal::AlreadyResolved(s)));
    }
}

#[test]
fn an_approved_action_that_fails_leaves_the_row_failed_with_the_reason() {
    assert_eq!(outcome(Decision::Approve, Ok(None)), (Approved, None));
    assert_eq!(
        outcome(Decision::Approve, Ok(Some("built".into()))),
        (Approved, Some("built".into()))
    );
    assert_eq!(
        outcome(Decision::Approve, Err("boom".into())),
        (Failed, Some("boom".into()))
    );
    assert_eq!(outcome(Decision::Deny, Ok(None)), (Denied, None));
}
