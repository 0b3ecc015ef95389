use super::*;
use crate::store::Store;
use crate::testing::{id, new_approval};
use crate::wire::host::ApprovalStatus;

#[test]
fn a_claimed_row_refuses_a_second_approve_and_a_deny() {
    let store = Store::open_in_memory().unwrap();
    store
        .blocking(|c| {
            let a = approvals::insert(c, &new_approval("x"), 10)?;
            assert!(matches!(
                decide_row(c, a.id, Decision::Approve, None, &id("ruth"), 11)?,
                Decided::Taken(..)
            ));
            assert_eq!(
                decide_row(c, a.id, Decision::Approve, None, &id("ruth"), 12)?,
                Decided::Refused(Refusal::InProgress)
            );
            assert_eq!(
                decide_row(c, a.id, Decision::Deny, None, &id("ruth"), 12)?,
                Decided::Refused(Refusal::InProgress)
            );
            let (done, _) = finish_row(c, a.id, Ok(None), &id("ruth"), 13)?;
            assert_eq!(
                (done.status, done.resolved_at),
                (ApprovalStatus::Approved, Some(13))
            );
            assert_eq!(
                decide_row(c, a.id, Decision::Deny, None, &id("ruth"), 14)?,
                Decided::Refused(Refusal::AlreadyResolved(ApprovalStatus::Approved))
            );
            Ok(())
        })
        .unwrap();
}
