//! The approval queue as the operator and the manager use it: requests
//! (checked by the rules whichever door asked), decisions, and each
//! resolution's event for the manager. What an approved row runs, and
//! `approve` which runs it, are `approval_actions`'s: the queue calls
//! nothing of the files whose work the actions do (schedules request
//! approvals here, so this file must not call back into them).

use super::messaging::{self, Wakes};
use super::{Hive, HiveError};
use rusqlite::Connection;

use crate::hive::Recipient;
use crate::hive::approvals::{self as rules, Admission, Decision, Refusal, Requester};
use crate::hive::{arguments, names};
use crate::store::approvals::{self, NewApproval};
use crate::store::{StoreError, agents, immediate};
use crate::wire::events::{HelperEvent, SYSTEM_SENDER};
use crate::wire::host::{Approval, ApprovalKind, ApprovalStatus};
use crate::wire::ident::Ident;
use crate::wire::notify::NotifyEvent;
use crate::wire::spend::SpendCap;

impl Hive {
    /// Every pending row, then recent resolved ones.
    pub async fn approvals(&self) -> Result<Vec<Approval>, HiveError> {
        Ok(self.store().read(approvals::list).await?)
    }

    /// Add a pending row, checked by the rules whichever door asked: a
    /// request that names a new agent (`spawn`, `init_config`) is refused
    /// for a reserved name or one already managed (`init_config` also for
    /// a name with a config repo); an `apply_commit` is fetched and
    /// validated first (`proposals`); an `update_meta_inputs` needs the
    /// nixos profile and a `meta_flake`, and flake input names (they end
    /// up in `nix flake update`'s argv). The row, new or already pending
    /// ([`Hive::queue`] says which).
    pub async fn request_approval(&self, new: NewApproval) -> Result<Approval, HiveError> {
        Ok(self.queue(new).await?.row)
    }

    /// The manager's `request_budget`: queue a `budget` approval of `cap`
    /// on `agent`'s subtree, with the manager's reason. Approving it sets
    /// that cap, as `hivectl budget set` would (the usage room's
    /// `set_approved_budget`).
    pub async fn request_budget(
        &self,
        agent: &Ident,
        cap: SpendCap,
        reason: &str,
    ) -> Result<Queued, HiveError> {
        arguments::check_reason("request_budget", reason)?;
        self.queue(NewApproval {
            agent: agent.clone(),
            kind: ApprovalKind::Budget,
            commit_ref: cap.to_string(),
            description: Some(reason.to_owned()),
        })
        .await
    }

    /// [`Hive::request_approval`], saying whether the same request was
    /// pending already: then that row is the answer, nothing new is queued
    /// and the operator is not told again. An agent holding
    /// `agent_max_pending_approvals` pending rows is refused
    /// ([`HiveError::TooManyPending`]); see [`crate::hive::approvals`].
    pub async fn queue(&self, new: NewApproval) -> Result<Queued, HiveError> {
        let queued = self.queue_approval(new).await?;
        let row = &queued.row;
        // A proposal that failed validation is already over.
        if !queued.already_pending && row.status == ApprovalStatus::Pending {
            self.mail().to_operator(NotifyEvent::ApprovalWaiting {
                id: row.id,
                agent: row.agent.clone(),
                kind: row.kind,
                description: row.description.clone(),
            });
        }
        Ok(queued)
    }

    async fn queue_approval(&self, new: NewApproval) -> Result<Queued, HiveError> {
        match new.kind {
            ApprovalKind::Spawn => self.check_new_name(&new.agent).await?,
            ApprovalKind::InitConfig => {
                self.check_new_name(&new.agent).await?;
                self.check_no_config(&new.agent)?;
            }
            ApprovalKind::ApplyCommit => return self.propose(new).await,
            ApprovalKind::UpdateMetaInputs => {
                arguments::check_inputs(&new.commit_ref)?;
                self.check_meta_update()?;
            }
            // Its payload was checked as the schedule it will store.
            ApprovalKind::SchedulePrompt => {}
            // The host is an agent's: a pattern, for a managed agent.
            ApprovalKind::Egress => {
                arguments::check_egress_host(&new.commit_ref)?;
                self.require(&new.agent).await?;
            }
            // The amount is a spend cap, on a managed agent's subtree.
            ApprovalKind::Budget => {
                arguments::check_spend_cap(&new.commit_ref)?;
                self.require(&new.agent).await?;
            }
        }
        let (now, manager, cap) = (
            self.now(),
            self.config().manager(),
            self.config().agent_max_pending_approvals,
        );
        let admitted = self
            .store()
            .run(move |c| admit_row(c, &new, None, false, &manager, cap, now))
            .await?;
        let queued = admitted.into_queued()?;
        let row = &queued.row;
        if queued.already_pending {
            tracing::debug!(agent = %row.agent, id = row.id, "{}: approval {} asked again while pending", row.agent, row.id);
        } else {
            tracing::info!(agent = %row.agent, id = row.id, kind = row.kind.as_str(), "{}: approval {} requested ({})", row.agent, row.id, row.kind.as_str());
        }
        Ok(queued)
    }

    /// Queue a `spawn` approval for a name not yet in the hive.
    pub async fn request_spawn(&self, name: &Ident) -> Result<Approval, HiveError> {
        self.request_approval(NewApproval {
            agent: name.clone(),
            kind: ApprovalKind::Spawn,
            commit_ref: String::new(),
            description: None,
        })
        .await
    }

    /// May a new agent take `name`? Not a reserved name, not one already
    /// managed: the check of every request that names a new agent.
    async fn check_new_name(&self, name: &Ident) -> Result<(), HiveError> {
        names::check_new_agent(name, &self.config().manager())?;
        let n = name.clone();
        if self
            .store()
            .read(move |c| agents::get(c, &n))
            .await?
            .is_some()
        {
            return Err(HiveError::AlreadyManaged(name.clone()));
        }
        Ok(())
    }

    pub(super) async fn decide(&self, id: i64, decision: Decision) -> Result<Approval, HiveError> {
        self.decide_with(id, decision, None).await
    }

    /// [`Hive::decide`] with the note a deny or cancel leaves on the row.
    async fn decide_with(
        &self,
        id: i64,
        decision: Decision,
        note: Option<String>,
    ) -> Result<Approval, HiveError> {
        let (now, manager) = (self.now(), self.config().manager());
        match self
            .store()
            .run(move |c| decide_row(c, id, decision, note.as_deref(), &manager, now))
            .await?
        {
            Decided::Taken(row, wakes) => {
                self.mail().wake(wakes);
                Ok(*row)
            }
            Decided::Refused(refusal) => Err(HiveError::refused(id, refusal)),
            Decided::NotFound => Err(HiveError::UnknownApproval(id)),
        }
    }

    /// Deny a pending row, with the operator's `note` (1-1000 bytes, kept
    /// on the row; a config proposal's `denied/<id>` tag is annotated with
    /// it).
    pub async fn deny(&self, id: i64, note: Option<String>) -> Result<Approval, HiveError> {
        if let Some(note) = &note {
            arguments::check_note(note)?;
        }
        let row = self.decide_with(id, Decision::Deny, note).await?;
        self.tag_denied(&row).await;
        tracing::info!(id, "approval denied");
        Ok(row)
    }

    /// Withdraw a pending row (the manager's `cancel_loose_end`).
    pub async fn cancel_approval(&self, id: i64) -> Result<Approval, HiveError> {
        self.decide(id, Decision::Cancel).await
    }
}

/// A request's answer: its row, and whether the same request was pending
/// already (nothing new was queued, nobody was told again).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Queued {
    pub row: Approval,
    pub already_pending: bool,
}

/// What [`admit_row`] did with a request.
#[derive(Debug, PartialEq, Eq)]
pub(super) enum Admitted {
    /// Inserted (and claimed, if asked): this row.
    New(Approval),
    /// The same request is pending as this row; nothing was inserted.
    Pending(Approval),
    /// Refused: the requester holds `cap` pending rows.
    OverCap { agent: Ident, cap: usize },
}

impl Admitted {
    pub(super) fn into_queued(self) -> Result<Queued, HiveError> {
        match self {
            Self::New(row) => Ok(Queued {
                row,
                already_pending: false,
            }),
            Self::Pending(row) => Ok(Queued {
                row,
                already_pending: true,
            }),
            Self::OverCap { agent, cap } => Err(HiveError::TooManyPending { agent, cap }),
        }
    }
}

/// Admit `new` by [`rules::admit`] and insert it if admitted, in one write
/// transaction: a thousand identical requests racing leave one row. A
/// proposal passes the commit its ref `resolved` to, and `claim`s its row
/// while it is fetched.
pub(super) fn admit_row(
    conn: &mut Connection,
    new: &NewApproval,
    resolved: Option<&str>,
    claim: bool,
    manager: &Ident,
    cap: usize,
    at: i64,
) -> Result<Admitted, StoreError> {
    let tx = immediate(conn)?;
    let who = rules::requester(new.kind, &new.agent, manager);
    let pending = match &who {
        Requester::Agent(agent) => approvals::pending_requested_by(&tx, agent, manager)?,
        Requester::Operator => Vec::new(),
    };
    let admitted = match rules::admit(&who, &pending, new, resolved, cap) {
        Admission::AlreadyPending(row) => Admitted::Pending(*row),
        Admission::OverCap { agent, cap } => Admitted::OverCap { agent, cap },
        Admission::Insert => {
            let row = approvals::insert(&tx, new, at)?;
            if claim {
                approvals::claim(&tx, row.id)?;
            }
            Admitted::New(row)
        }
    };
    tx.commit()?;
    Ok(admitted)
}

/// The answer of a decision on a row.
#[derive(Debug, PartialEq, Eq)]
enum Decided {
    /// The decision was taken; the row as it is now (for approve: claimed,
    /// still pending, its action is the caller's to run), and what to
    /// wake once committed.
    Taken(Box<Approval>, Wakes),
    Refused(Refusal),
    NotFound,
}

/// Take `decision` on row `id` in one write transaction, by the rules of
/// [`crate::hive::approvals`]. Approve only claims the row (the caller runs
/// the action and then calls [`finish_row`]); deny and cancel end it at once.
fn decide_row(
    conn: &mut Connection,
    id: i64,
    decision: Decision,
    note: Option<&str>,
    manager: &Ident,
    at: i64,
) -> Result<Decided, StoreError> {
    let tx = immediate(conn)?;
    let Some((row, claimed)) = approvals::get_with_claim(&tx, id)? else {
        return Ok(Decided::NotFound);
    };
    if let Err(refusal) = rules::check(row.status, claimed) {
        return Ok(Decided::Refused(refusal));
    }
    if decision == Decision::Approve {
        approvals::claim(&tx, id)?;
    } else {
        let (status, _) = rules::outcome(decision, Ok(None));
        approvals::end(&tx, id, status, note, at)?;
    }
    let row = approvals::get(&tx, id)?
        .ok_or_else(|| StoreError::Corrupt(format!("approval {id} vanished")))?;
    let wakes = if row.status == ApprovalStatus::Pending {
        Wakes::default()
    } else {
        record_resolved(&tx, &row, manager, at)?
    };
    tx.commit()?;
    Ok(Decided::Taken(Box::new(row), wakes))
}

/// End a claimed row with its action's result, and its event, in one
/// write transaction; the row and what to wake once committed.
pub(super) fn finish_row(
    conn: &mut Connection,
    id: i64,
    action: Result<Option<String>, String>,
    manager: &Ident,
    at: i64,
) -> Result<(Approval, Wakes), StoreError> {
    let tx = immediate(conn)?;
    let (status, note) = rules::outcome(Decision::Approve, action);
    approvals::end(&tx, id, status, note.as_deref(), at)?;
    let row = approvals::get(&tx, id)?
        .ok_or_else(|| StoreError::Corrupt(format!("approval {id} vanished")))?;
    let wakes = record_resolved(&tx, &row, manager, at)?;
    tx.commit()?;
    Ok((row, wakes))
}

/// The tag that ends a fetched proposal's story in its applied repo.
fn story_tag(row: &Approval) -> Option<String> {
    use crate::hive::proposal::Tag;
    if row.kind != ApprovalKind::ApplyCommit || row.fetched_sha.is_none() {
        return None;
    }
    let tag = match row.status {
        ApprovalStatus::Approved => Tag::Deployed,
        ApprovalStatus::Failed => Tag::Failed,
        ApprovalStatus::Denied => Tag::Denied,
        ApprovalStatus::Pending | ApprovalStatus::Cancelled => return None,
    };
    Some(tag.name(row.id))
}

/// Store the manager's `approval_resolved` for `row`, which just reached a
/// terminal status, in the caller's transaction: the transition and its
/// event commit together, so a crash can neither lose the event nor send
/// it twice. What to wake once the caller has committed.
pub(crate) fn record_resolved(
    tx: &Connection,
    row: &Approval,
    manager: &Ident,
    at: i64,
) -> Result<Wakes, StoreError> {
    let event = HelperEvent::ApprovalResolved {
        id: row.id,
        agent: row.agent.to_string(),
        commit_ref: row.commit_ref.clone(),
        status: row.status,
        note: row.note.clone(),
        sha: row.fetched_sha.clone(),
        tag: story_tag(row),
    };
    let to = Recipient::Agent(manager.clone());
    Ok(messaging::insert(tx, SYSTEM_SENDER, &to, &event.to_body(), None, at)?.1)
}

#[cfg(test)]
#[path = "approvals_tests.rs"]
mod row_tests;
