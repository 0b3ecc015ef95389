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
//!
//! **One agent cannot flood the queue** (issue 44: 1,100 identical
//! `request_egress` were accepted in 0.4 s). A request is admitted by
//! [`admit`], in the write transaction that inserts it: the same request
//! asked again while its row is pending gets that row back (nothing new is
//! queued, nobody is notified again), and an agent already holding the
//! cap of pending rows is refused until the operator decides one. The
//! operator's own requests are neither (the queue is theirs).
//!
//! Who asked is implied by the kind ([`requester`]): each kind has one door
//! that asks for it — `egress` the agent itself on its own socket, `spawn`
//! the operator (host.sock, the dashboard), every other kind the manager
//! on its socket (about another agent, or the hive). Rejected: a
//! `requested_by` column, a migration for what the kind already says;
//! revisit when a kind gets a second door.

use crate::wire::host::{Approval, ApprovalKind, ApprovalStatus};
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

/// Who asked for a row, as far as the cap is concerned.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Requester {
    /// The operator: neither capped nor deduplicated.
    Operator,
    /// An agent (the manager included): at most the cap of pending rows.
    Agent(Ident),
}

/// Who asks for a row of `kind` about `agent` (see the module docs);
/// `manager` is the hive's manager.
pub fn requester(kind: ApprovalKind, agent: &Ident, manager: &Ident) -> Requester {
    match kind {
        ApprovalKind::Egress => Requester::Agent(agent.clone()),
        ApprovalKind::Spawn => Requester::Operator,
        ApprovalKind::InitConfig
        | ApprovalKind::ApplyCommit
        | ApprovalKind::UpdateMetaInputs
        | ApprovalKind::SchedulePrompt
        | ApprovalKind::Budget => Requester::Agent(manager.clone()),
    }
}

/// Is pending `row` the request `new` again? The same kind about the same
/// agent with the same payload: the host of an `egress`, the amount of a
/// `budget`, the inputs of an `update_meta_inputs`, the schedule of a
/// `schedule_prompt` (`commit_ref` holds each), the name of an
/// `init_config`. A proposal's payload is the commit its ref resolved to
/// (`resolved`, matched against the row's `fetched_sha`): the same ref
/// asked again after a push is a new proposal. The reason given
/// (`description`) is not part of it.
pub fn is_same_request(row: &Approval, new: &NewApproval, resolved: Option<&str>) -> bool {
    if row.status != ApprovalStatus::Pending || row.kind != new.kind || row.agent != new.agent {
        return false;
    }
    match new.kind {
        ApprovalKind::ApplyCommit => resolved.is_some() && row.fetched_sha.as_deref() == resolved,
        ApprovalKind::Egress
        | ApprovalKind::Spawn
        | ApprovalKind::InitConfig
        | ApprovalKind::UpdateMetaInputs
        | ApprovalKind::SchedulePrompt
        | ApprovalKind::Budget => row.commit_ref == new.commit_ref,
    }
}

/// What becomes of a new request.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Admission {
    /// Queue it.
    Insert,
    /// The same request is pending as this row: answer with it.
    AlreadyPending(Box<Approval>),
    /// The requester holds `cap` pending rows already: refuse.
    OverCap { agent: Ident, cap: usize },
}

/// Admit `new` from `requester`, whose pending rows are `pending` (only
/// its own), under a cap of `cap` pending rows per agent.
pub fn admit(
    requester: &Requester,
    pending: &[Approval],
    new: &NewApproval,
    resolved: Option<&str>,
    cap: usize,
) -> Admission {
    let Requester::Agent(agent) = requester else {
        return Admission::Insert;
    };
    if let Some(row) = pending.iter().find(|r| is_same_request(r, new, resolved)) {
        return Admission::AlreadyPending(Box::new(row.clone()));
    }
    if pending.len() >= cap {
        return Admission::OverCap {
            agent: agent.clone(),
            cap,
        };
    }
    Admission::Insert
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod tests;
