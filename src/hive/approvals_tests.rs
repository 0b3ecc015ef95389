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

fn ident(s: &str) -> Ident {
    Ident::new(s).unwrap()
}

fn ask(kind: ApprovalKind, agent: &str, payload: &str) -> NewApproval {
    NewApproval {
        agent: ident(agent),
        kind,
        commit_ref: payload.into(),
        description: Some("why".into()),
    }
}

/// `new` as the pending row `id` would hold it.
fn row(id: i64, new: &NewApproval) -> Approval {
    Approval {
        id,
        agent: new.agent.clone(),
        kind: new.kind,
        commit_ref: new.commit_ref.clone(),
        fetched_sha: None,
        requested_at: 1,
        status: Pending,
        resolved_at: None,
        note: None,
        description: new.description.clone(),
    }
}

#[test]
fn an_egress_row_is_its_agents_spawn_the_operators_and_every_other_kind_the_managers() {
    let (alice, ruth) = (ident("alice"), ident("ruth"));
    for kind in ApprovalKind::ALL.iter().copied() {
        let expected = match kind {
            ApprovalKind::Egress => Requester::Agent(alice.clone()),
            ApprovalKind::Spawn => Requester::Operator,
            _ => Requester::Agent(ruth.clone()),
        };
        assert_eq!(requester(kind, &alice, &ruth), expected, "{kind:?}");
    }
}

#[test]
fn the_same_host_asked_again_is_the_pending_row_whatever_the_reason() {
    let first = ask(ApprovalKind::Egress, "alice", "pypi.org:443");
    let pending = [row(7, &first)];
    let mut again = first.clone();
    again.description = Some("another reason".into());
    let alice = Requester::Agent(ident("alice"));
    assert_eq!(
        admit(&alice, &pending, &again, None, 16),
        Admission::AlreadyPending(Box::new(pending[0].clone()))
    );
    // Another host, kind or agent is another request.
    for other in [
        ask(ApprovalKind::Egress, "alice", "pypi.org:80"),
        ask(ApprovalKind::Budget, "alice", "pypi.org:443"),
        ask(ApprovalKind::Egress, "bob", "pypi.org:443"),
    ] {
        assert_eq!(admit(&alice, &pending, &other, None, 16), Admission::Insert);
    }
    // A resolved row is no longer the request.
    let mut denied = pending[0].clone();
    denied.status = Denied;
    assert!(!is_same_request(&denied, &first, None));
}

#[test]
fn a_proposal_is_the_same_only_for_the_same_resolved_commit() {
    let new = ask(ApprovalKind::ApplyCommit, "alice", "0123abc");
    let mut fetched = row(3, &new);
    fetched.fetched_sha = Some("0123abcdef".into());
    assert!(is_same_request(&fetched, &new, Some("0123abcdef")));
    // The same ref after a push resolves to another commit.
    assert!(!is_same_request(&fetched, &new, Some("4567")));
    // A row still being fetched has no sha yet.
    assert!(!is_same_request(&row(4, &new), &new, Some("0123abcdef")));
}

#[test]
fn an_agent_at_the_cap_is_refused_and_the_operator_never_is() {
    let pending: Vec<Approval> = (0..3)
        .map(|i| {
            row(
                i,
                &ask(ApprovalKind::Egress, "alice", &format!("h{i}.example")),
            )
        })
        .collect();
    let new = ask(ApprovalKind::Egress, "alice", "h9.example");
    let alice = Requester::Agent(ident("alice"));
    assert_eq!(
        admit(&alice, &pending, &new, None, 3),
        Admission::OverCap {
            agent: ident("alice"),
            cap: 3
        }
    );
    assert_eq!(admit(&alice, &pending, &new, None, 4), Admission::Insert);
    // A duplicate at the cap is still answered with its row.
    let dup = ask(ApprovalKind::Egress, "alice", "h1.example");
    assert!(matches!(
        admit(&alice, &pending, &dup, None, 3),
        Admission::AlreadyPending(_)
    ));
    let spawn = ask(ApprovalKind::Spawn, "kid", "");
    assert_eq!(
        admit(&Requester::Operator, &pending, &spawn, None, 0),
        Admission::Insert
    );
}
