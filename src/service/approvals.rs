//! The approval queue as the operator and the manager use it, and the
//! actions approvals run.

use super::lifecycle::within_budget;
use super::{Hive, HiveError};
use crate::command;
use crate::hive::approvals::Decision;
use crate::store::agents;
use crate::store::approvals::{self, Decided, NewApproval};
use crate::wire::events::HelperEvent;
use crate::wire::host::{Approval, ApprovalKind};
use crate::wire::ident::Ident;

impl Hive {
    /// Every pending row, then recent resolved ones.
    pub async fn approvals(&self) -> Result<Vec<Approval>, HiveError> {
        Ok(self.store().run(|c| approvals::list(c)).await?)
    }

    /// Add a pending row.
    pub async fn request_approval(&self, new: NewApproval) -> Result<Approval, HiveError> {
        let now = self.now();
        let row = self
            .store()
            .run(move |c| approvals::insert(c, &new, now))
            .await?;
        tracing::info!(agent = %row.agent, id = row.id, kind = row.kind.as_str(), "approval requested");
        Ok(row)
    }

    /// Queue a `spawn` approval for a name not yet in the hive.
    pub async fn request_spawn(&self, name: &Ident) -> Result<Approval, HiveError> {
        let n = name.clone();
        if self
            .store()
            .run(move |c| agents::get(c, &n))
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
            .run(move |c| approvals::decide(c, id, decision, now))
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
                .run(move |c| approvals::finish(c, id, action, now))
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
