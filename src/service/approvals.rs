//! The approval queue as the operator and the manager use it, and the
//! actions approvals run.

use super::lifecycle::within_budget;
use super::{Hive, HiveError};
use crate::command;
use rusqlite::Connection;

use crate::hive::approvals::{self as rules, Decision, Refusal};
use crate::store::approvals::{self, NewApproval};
use crate::store::{StoreError, agents, immediate};
use crate::wire::events::HelperEvent;
use crate::wire::host::{Approval, ApprovalKind};
use crate::wire::ident::Ident;

impl Hive {
    /// Every pending row, then recent resolved ones.
    pub async fn approvals(&self) -> Result<Vec<Approval>, HiveError> {
        Ok(self.store().read(approvals::list).await?)
    }

    /// Add a pending row.
    pub async fn request_approval(&self, new: NewApproval) -> Result<Approval, HiveError> {
        let now = self.now();
        let row = self
            .store()
            .run(move |c| approvals::insert(c, &new, now))
            .await?;
        tracing::info!(agent = %row.agent, id = row.id, kind = row.kind.as_str(), "{}: approval {} requested ({})", row.agent, row.id, row.kind.as_str());
        Ok(row)
    }

    /// Queue a `spawn` approval for a name not yet in the hive.
    pub async fn request_spawn(&self, name: &Ident) -> Result<Approval, HiveError> {
        let n = name.clone();
        if self
            .store()
            .read(move |c| agents::get(c, &n))
            .await?
            .is_some()
        {
            return Err(HiveError::AlreadyManaged(name.clone()));
        }
        self.request_approval(NewApproval {
            agent: name.clone(),
            kind: ApprovalKind::Spawn,
            commit_ref: String::new(),
            description: None,
        })
        .await
    }

    async fn decide(&self, id: i64, decision: Decision) -> Result<Approval, HiveError> {
        let now = self.now();
        match self
            .store()
            .run(move |c| decide_row(c, id, decision, now))
            .await?
        {
            Decided::Taken(row) => Ok(row),
            Decided::Refused(refusal) => Err(HiveError::refused(id, refusal)),
            Decided::NotFound => Err(HiveError::UnknownApproval(id)),
        }
    }

    /// Approve a pending row: claim it, run its action once, end it
    /// `approved` or `failed`.
    pub async fn approve(&self, id: i64) -> Result<Approval, HiveError> {
        let claimed = self.decide(id, Decision::Approve).await?;
        let hive = self.clone();
        let agent = claimed.agent.to_string();
        let row = within_budget("approve", vec![agent], async move {
            let action = hive.run_action(&claimed).await;
            let now = hive.now();
            hive.store()
                .run(move |c| finish_row(c, id, action, now))
                .await
        })
        .await??;
        tracing::info!(id, status = row.status.as_str(), "approval resolved");
        self.notify_resolved(&row).await;
        match &row.note {
            Some(note) if row.status == crate::wire::host::ApprovalStatus::Failed => {
                Err(HiveError::ApprovalFailed {
                    id,
                    note: note.clone(),
                })
            }
            _ => Ok(row),
        }
    }

    /// Deny a pending row.
    pub async fn deny(&self, id: i64) -> Result<Approval, HiveError> {
        let row = self.decide(id, Decision::Deny).await?;
        tracing::info!(id, "approval denied");
        self.notify_resolved(&row).await;
        Ok(row)
    }

    /// Withdraw a pending row (the manager's `cancel_loose_end`).
    pub async fn cancel_approval(&self, id: i64) -> Result<Approval, HiveError> {
        let row = self.decide(id, Decision::Cancel).await?;
        self.notify_resolved(&row).await;
        Ok(row)
    }

    /// Tell the manager a row reached a terminal status.
    pub(crate) async fn notify_resolved(&self, row: &Approval) {
        self.notify_manager(HelperEvent::ApprovalResolved {
            id: row.id,
            agent: row.agent.to_string(),
            commit_ref: row.commit_ref.clone(),
            status: row.status,
            note: row.note.clone(),
            sha: row.fetched_sha.clone(),
            tag: None,
        })
        .await;
    }

    /// What an approved row does: `Ok` with an optional note, or the error
    /// text that becomes the row's note. Config changes (commit, init,
    /// meta inputs) are the site's business: they run the configured
    /// `approval_command` with the kind, agent and `commit_ref` appended,
    /// without a shell.
    async fn run_action(&self, row: &Approval) -> Result<Option<String>, String> {
        match row.kind {
            ApprovalKind::Spawn => self
                .spawn_now(&row.agent)
                .await
                .map(|()| None)
                .map_err(|e| e.to_string()),
            ApprovalKind::SchedulePrompt => self.store_approved_schedule(row).await.map(|_| None),
            ApprovalKind::ApplyCommit
            | ApprovalKind::InitConfig
            | ApprovalKind::UpdateMetaInputs => {
                let argv = &self.config().approval_command;
                let extra = [
                    row.kind.as_str(),
                    row.agent.as_str(),
                    row.commit_ref.as_str(),
                ];
                let stdout = command::run("approval_command", argv, &extra)
                    .await
                    .map_err(|e| e.to_string())?;
                let note = command::last_line(&stdout);
                Ok((!note.is_empty()).then(|| note.chars().take(500).collect()))
            }
        }
    }
}

/// The answer of a decision on a row.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decided {
    /// The decision was taken; the row as it is now (for approve: claimed,
    /// still pending, its action is the caller's to run).
    Taken(Approval),
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
        let (status, note) = rules::outcome(decision, Ok(None));
        approvals::end(&tx, id, status, note.as_deref(), at)?;
    }
    let row = approvals::get(&tx, id)?
        .ok_or_else(|| StoreError::Corrupt(format!("approval {id} vanished")))?;
    tx.commit()?;
    Ok(Decided::Taken(row))
}

/// End a claimed row with its action's result.
fn finish_row(
    conn: &mut Connection,
    id: i64,
    action: Result<Option<String>, String>,
    at: i64,
) -> Result<Approval, StoreError> {
    let (status, note) = rules::outcome(Decision::Approve, action);
    approvals::end(conn, id, status, note.as_deref(), at)?;
    approvals::get(conn, id)?.ok_or_else(|| StoreError::Corrupt(format!("approval {id} vanished")))
}

#[cfg(test)]
mod row_tests {
    use super::*;
    use crate::store::Store;
    use crate::testing::new_approval;
    use crate::wire::host::ApprovalStatus;

    #[test]
    fn a_claimed_row_refuses_a_second_approve_and_a_deny() {
        let store = Store::open_in_memory().unwrap();
        store
            .blocking(|c| {
                let a = approvals::insert(c, &new_approval("x"), 10)?;
                assert!(matches!(
                    decide_row(c, a.id, Decision::Approve, 11)?,
                    Decided::Taken(_)
                ));
                assert_eq!(
                    decide_row(c, a.id, Decision::Approve, 12)?,
                    Decided::Refused(Refusal::InProgress)
                );
                assert_eq!(
                    decide_row(c, a.id, Decision::Deny, 12)?,
                    Decided::Refused(Refusal::InProgress)
                );
                let done = finish_row(c, a.id, Ok(None), 13)?;
                assert_eq!(
                    (done.status, done.resolved_at),
                    (ApprovalStatus::Approved, Some(13))
                );
                assert_eq!(
                    decide_row(c, a.id, Decision::Deny, 14)?,
                    Decided::Refused(Refusal::AlreadyResolved(ApprovalStatus::Approved))
                );
                Ok(())
            })
            .unwrap();
    }
}
