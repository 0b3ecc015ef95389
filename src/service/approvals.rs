//! The approval queue as the operator and the manager use it, and the
//! actions approvals run.

use super::budget::within_budget;
use super::inbox::{self, Wakes};
use super::{Hive, HiveError};
use crate::command;
use rusqlite::Connection;

use crate::hive::Recipient;
use crate::hive::approvals::{self as rules, Decision, Refusal};
use crate::hive::{arguments, names};
use crate::store::approvals::{self, NewApproval};
use crate::store::{StoreError, agents, immediate};
use crate::wire::events::{HelperEvent, SYSTEM_SENDER};
use crate::wire::host::{Approval, ApprovalKind, ApprovalStatus};
use crate::wire::ident::Ident;

impl Hive {
    /// Every pending row, then recent resolved ones.
    pub async fn approvals(&self) -> Result<Vec<Approval>, HiveError> {
        Ok(self.store().read(approvals::list).await?)
    }

    /// Add a pending row, checked by the rules whichever door asked: a
    /// request that names a new agent (`spawn`, `init_config`) is refused
    /// for a reserved name or one already managed; an `apply_commit` needs
    /// a managed agent and a commit ref, an `update_meta_inputs` flake input
    /// names (both end up in `approval_command`'s argv).
    pub async fn request_approval(&self, new: NewApproval) -> Result<Approval, HiveError> {
        match new.kind {
            ApprovalKind::Spawn | ApprovalKind::InitConfig => {
                self.check_new_name(&new.agent).await?
            }
            ApprovalKind::ApplyCommit => {
                arguments::check_commit_ref(&new.commit_ref)?;
                self.require(&new.agent).await?;
            }
            ApprovalKind::UpdateMetaInputs => arguments::check_inputs(&new.commit_ref)?,
            // Its payload was checked as the schedule it will store.
            ApprovalKind::SchedulePrompt => {}
        }
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

    async fn decide(&self, id: i64, decision: Decision) -> Result<Approval, HiveError> {
        let (now, manager) = (self.now(), self.config().manager());
        match self
            .store()
            .run(move |c| decide_row(c, id, decision, &manager, now))
            .await?
        {
            Decided::Taken(row, wakes) => {
                self.wake_inboxes(wakes);
                Ok(row)
            }
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
            let (now, manager) = (hive.now(), hive.config().manager());
            let (row, wakes) = hive
                .store()
                .run(move |c| finish_row(c, id, action, &manager, now))
                .await?;
            hive.wake_inboxes(wakes);
            Ok::<_, StoreError>(row)
        })
        .await??;
        tracing::info!(id, status = row.status.as_str(), "approval resolved");
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
        Ok(row)
    }

    /// Withdraw a pending row (the manager's `cancel_loose_end`).
    pub async fn cancel_approval(&self, id: i64) -> Result<Approval, HiveError> {
        self.decide(id, Decision::Cancel).await
    }

    /// End every approval a previous daemon claimed and did not finish
    /// (it crashed or was killed while the action ran), truthfully, by what
    /// is there now: a `spawn` whose agent is registered and whose
    /// container exists and runs ends `approved`; one registered but not
    /// finished (no complete container, or not started) is finished now, in
    /// the background, and ends `approved` or `failed` by how that went (the
    /// manager hears `spawned{ok}` from the finish); a `schedule_prompt`
    /// whose schedule was stored, `approved`; anything else `failed`,
    /// saying what to check. Each gets exactly one `approval_resolved`,
    /// committed with its row. Call before serving. Answers the rows ended
    /// now (not the ones being finished).
    pub async fn reconcile_interrupted(&self) -> Result<Vec<Approval>, HiveError> {
        let rows = self.store().read(approvals::interrupted).await?;
        let mut ended = Vec::with_capacity(rows.len());
        let mut wakes = Wakes::default();
        for row in rows {
            let outcome = match self.what_happened(&row).await? {
                Found::Ended(outcome) => outcome,
                Found::SpawnToFinish => {
                    tracing::warn!(id = row.id, agent = %row.agent, "approval interrupted by a restart: its spawn was not finished; finishing it");
                    let hive = self.clone();
                    tokio::spawn(async move { hive.finish_interrupted_spawn(row).await });
                    continue;
                }
            };
            let (id, now, manager) = (row.id, self.now(), self.config().manager());
            let (row, woken) = self
                .store()
                .run(move |c| finish_row(c, id, outcome, &manager, now))
                .await?;
            wakes.add(woken);
            tracing::warn!(
                id,
                agent = %row.agent,
                status = row.status.as_str(),
                "approval interrupted by a restart; ended: {}",
                row.note.as_deref().unwrap_or("")
            );
            ended.push(row);
        }
        self.wake_inboxes(wakes);
        Ok(ended)
    }

    /// Finish the spawn of an interrupted approval (see
    /// [`Hive::reconcile_interrupted`]) and end its row by how it went.
    async fn finish_interrupted_spawn(self, row: Approval) {
        let outcome = match self.finish_spawn(&row.agent).await {
            Ok(()) => Ok(Some(format!(
                "{INTERRUPTED}; the spawn was finished at start-up"
            ))),
            Err(e) => Err(format!(
                "{INTERRUPTED}; finishing the spawn at start-up failed: {e}"
            )),
        };
        let (id, now, manager) = (row.id, self.now(), self.config().manager());
        match self
            .store()
            .run(move |c| finish_row(c, id, outcome, &manager, now))
            .await
        {
            Ok((row, wakes)) => {
                tracing::info!(
                    id,
                    status = row.status.as_str(),
                    "interrupted approval ended: {}",
                    row.note.as_deref().unwrap_or("")
                );
                self.wake_inboxes(wakes);
            }
            Err(e) => tracing::error!(id, "cannot end interrupted approval: {e}"),
        }
    }

    /// Whether an interrupted row's action took effect.
    async fn what_happened(&self, row: &Approval) -> Result<Found, HiveError> {
        const PREFIX: &str = INTERRUPTED;
        Ok(Found::Ended(match row.kind {
            ApprovalKind::Spawn => {
                let n = row.agent.clone();
                let stored = self
                    .store()
                    .read(move |c| agents::get(c, &n))
                    .await?
                    .is_some();
                if !stored {
                    Err(format!(
                        "{PREFIX}; the agent was not spawned: request again"
                    ))
                } else if self
                    .driver()
                    .state(&row.agent)
                    .is_some_and(|s| s.is_running())
                    && self.driver().exists(&row.agent).await.unwrap_or(false)
                {
                    Ok(Some(format!("{PREFIX}; the agent was spawned and runs")))
                } else {
                    return Ok(Found::SpawnToFinish);
                }
            }
            ApprovalKind::SchedulePrompt => {
                let id = row.id;
                let stored = self
                    .store()
                    .read(move |c| crate::store::schedules::from_approval(c, id))
                    .await?;
                match stored {
                    Some(schedule) => Ok(Some(format!("{PREFIX}; schedule {schedule} was stored"))),
                    None => Err(format!("{PREFIX}; no schedule was stored: request again")),
                }
            }
            ApprovalKind::ApplyCommit
            | ApprovalKind::InitConfig
            | ApprovalKind::UpdateMetaInputs => Err(format!(
                "{PREFIX}; whether approval_command finished is unknown: check the agent's \
                     config and request again"
            )),
        }))
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

/// The first words of the note of an approval a restart interrupted.
const INTERRUPTED: &str = "hive-c0re stopped while the approved action ran";

/// What an interrupted approval's action left behind.
#[derive(Debug)]
enum Found {
    /// Its outcome, known now.
    Ended(Result<Option<String>, String>),
    /// A registered agent whose spawn did not finish: finish it.
    SpawnToFinish,
}

/// The answer of a decision on a row.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Decided {
    /// The decision was taken; the row as it is now (for approve: claimed,
    /// still pending, its action is the caller's to run), and what to
    /// wake once committed.
    Taken(Approval, Wakes),
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
        let (status, note) = rules::outcome(decision, Ok(None));
        approvals::end(&tx, id, status, note.as_deref(), at)?;
    }
    let row = approvals::get(&tx, id)?
        .ok_or_else(|| StoreError::Corrupt(format!("approval {id} vanished")))?;
    let wakes = if row.status == ApprovalStatus::Pending {
        Wakes::default()
    } else {
        record_resolved(&tx, &row, manager, at)?
    };
    tx.commit()?;
    Ok(Decided::Taken(row, wakes))
}

/// End a claimed row with its action's result, and its event, in one
/// write transaction; the row and what to wake once committed.
fn finish_row(
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
        tag: None,
    };
    let to = Recipient::Agent(manager.clone());
    Ok(inbox::insert(tx, SYSTEM_SENDER, &to, &event.to_body(), None, at)?.1)
}

#[cfg(test)]
mod row_tests {
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
                    decide_row(c, a.id, Decision::Approve, &id("ruth"), 11)?,
                    Decided::Taken(..)
                ));
                assert_eq!(
                    decide_row(c, a.id, Decision::Approve, &id("ruth"), 12)?,
                    Decided::Refused(Refusal::InProgress)
                );
                assert_eq!(
                    decide_row(c, a.id, Decision::Deny, &id("ruth"), 12)?,
                    Decided::Refused(Refusal::InProgress)
                );
                let (done, _) = finish_row(c, a.id, Ok(None), &id("ruth"), 13)?;
                assert_eq!(
                    (done.status, done.resolved_at),
                    (ApprovalStatus::Approved, Some(13))
                );
                assert_eq!(
                    decide_row(c, a.id, Decision::Deny, &id("ruth"), 14)?,
                    Decided::Refused(Refusal::AlreadyResolved(ApprovalStatus::Approved))
                );
                Ok(())
            })
            .unwrap();
    }
}
