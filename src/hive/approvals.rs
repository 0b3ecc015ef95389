//! The approval state machine: pending → approved | denied | failed |
//! cancelled, and nothing leaves a terminal status.
//!
//! Approving runs the row's action exactly once, however many approves race:
//! the first approve *claims* the row (the store flips `claimed` inside a
//! write transaction after [`check`] said yes), runs the action, then moves
//! the row to `approved` or `failed`. Every other approve, deny or cancel of a
//! claimed row is refused as [`Refusal::InProgress`]. Rejected alternative:
//! setting `approved` before running the action, which would show an
//! approved row whose action then failed.

use crate::wire::host::{ApprovalKind, ApprovalStatus};
use crate::wire::ident::Ident;

/// A new approval request's fields (a pending row once stored).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NewApproval {
    pub agent: Ident,
    pub kind: ApprovalKind,
    pub commit_ref: String,
    pub description: Option<String>,
}

/// What a caller asks of a row.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Decision {
    /// The operator approves: run the action.
    Approve,
    /// The operator denies.
    Deny,
    /// The requester withdraws it, or its agent was destroyed.
    Cancel,
}

/// Why a decision is refused.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Refusal {
    /// The row already ended with this status.
    AlreadyResolved(ApprovalStatus),
    /// An approve is running the row's action right now.
    InProgress,
}

/// May a decision (any of the three: they share one rule) be applied to a
/// row in `status`, with `claimed` set while an approve runs its action?
pub fn check(status: ApprovalStatus, claimed: bool) -> Result<(), Refusal> {
    if status.is_terminal() {
        return Err(Refusal::AlreadyResolved(status));
    }
    if claimed {
        return Err(Refusal::InProgress);
    }
    Ok(())
}

/// The terminal status of a row whose decision was taken (for approve: after
/// its action ran, with the action's note or error).
pub fn outcome(
    decision: Decision,
    action: Result<Option<String>, String>,
) -> (ApprovalStatus, Option<String>) {
    match (decision, action) {
        (Decision::Approve, Ok(note)) => (ApprovalStatus::Approved, note),
        (Decision::Approve, Err(why)) => (ApprovalStatus::Failed, Some(why)),
        (Decision::Deny, _) => (ApprovalStatus::Denied, None),
        (Decision::Cancel, Ok(_)) => (ApprovalStatus::Cancelled, None),
        (Decision::Cancel, Err(why)) => (ApprovalStatus::Cancelled, Some(why)),
    }
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
