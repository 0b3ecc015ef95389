//! What an approved row runs, and `approve` which claims a row, runs its
//! action within the answer budget and ends it: a spawn (lifecycle), a
//! schedule stored (schedules), a host granted (egress), a config repo
//! seeded (`init_config`, proposals), a commit deployed (`apply_commit`,
//! deploy), the meta flake updated (`update_meta_inputs`, meta_inputs); and, at
//! start-up, the truthful end of rows a previous
//! daemon claimed and did not finish.
//!
//! Decision: apart from the queue (`approvals`), so the queue is a leaf the
//! files that request approvals can use without a circle: this file calls
//! the queue, lifecycle and schedules; none of them calls back here.

use super::approvals::finish_row;
use super::budget::within_budget;
use super::messaging::Wakes;
use super::{Hive, HiveError};
use crate::hive::approvals::Decision;
use crate::hive::arguments;
use crate::store::{StoreError, agents, approvals};
use crate::wire::host::{Approval, ApprovalKind};
use std::time::Duration;

impl Hive {
    /// Approve a pending row: claim it, run its action once, end it
    /// `approved` or `failed`. An `egress` row's host may be granted for
    /// `lasting` only (refused for any other kind, before the claim).
    pub async fn approve(&self, id: i64, lasting: Option<Duration>) -> Result<Approval, HiveError> {
        if let Some(lasting) = lasting {
            let row = self.store().read(move |c| approvals::get(c, id)).await?;
            let row = row.ok_or(HiveError::UnknownApproval(id))?;
            arguments::check_approve_for(id, row.kind, lasting)?;
        }
        let claimed = self.decide(id, Decision::Approve).await?;
        let hive = self.clone();
        let agent = claimed.agent.to_string();
        let row = within_budget("approve", vec![agent], async move {
            let action = hive.run_action(&claimed, lasting).await;
            let (now, manager) = (hive.now(), hive.config().manager());
            let (row, wakes) = hive
                .store()
                .run(move |c| finish_row(c, id, action, &manager, now))
                .await?;
            hive.mail().wake(wakes);
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
        self.mail().wake(wakes);
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
                self.mail().wake(wakes);
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
                    // Its spawn finished; only the record of that did not.
                    let n = row.agent.clone();
                    self.store().run(move |c| agents::end(c, &n)).await?;
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
            ApprovalKind::Egress => {
                let id = row.id;
                let granted = self
                    .store()
                    .read(move |c| crate::store::grants::egress_from_approval(c, id))
                    .await?;
                stored_or_not(granted, "the host was granted", "the host was not granted")
            }
            ApprovalKind::Budget => {
                let id = row.id;
                let set = self
                    .store()
                    .read(move |c| crate::store::spend_caps::from_approval(c, id))
                    .await?;
                stored_or_not(set, "the budget was set", "the budget was not set")
            }
            ApprovalKind::InitConfig if self.repos().has_config(&row.agent) => {
                Ok(Some(format!("{PREFIX}; the config repo was seeded")))
            }
            ApprovalKind::InitConfig => Err(format!(
                "{PREFIX}; the config repo was not seeded: request again"
            )),
            ApprovalKind::ApplyCommit if row.fetched_sha.is_none() => Err(format!(
                "{PREFIX}; it stopped while fetching the proposal: request again"
            )),
            ApprovalKind::ApplyCommit => match self.finish_interrupted_deploy(row).await {
                Ok(true) => Ok(Some(format!("{PREFIX}; the commit was deployed"))),
                Ok(false) => Err(format!(
                    "{PREFIX}; the commit was not deployed: request it again"
                )),
                Err(e) => Err(format!(
                    "{PREFIX}; cannot tell whether it was deployed: {e}"
                )),
            },
            ApprovalKind::UpdateMetaInputs => Err(format!(
                "{PREFIX}; whether the meta flake was updated and its agents rebuilt is \
                 unknown: check its git log and `hivectl status` (needs_update), and request \
                 again"
            )),
        }))
    }

    /// What an approved row does: `Ok` with an optional note, or the error
    /// text that becomes the row's note. An `init_config` seeds the
    /// agent's config repos, an `apply_commit` is deployed, an
    /// `update_meta_inputs` updates the meta flake and rebuilds
    /// (`meta_inputs`).
    async fn run_action(
        &self,
        row: &Approval,
        lasting: Option<Duration>,
    ) -> Result<Option<String>, String> {
        match row.kind {
            ApprovalKind::Spawn => self
                .spawn_now(&row.agent)
                .await
                .map(|()| None)
                .map_err(|e| e.to_string()),
            ApprovalKind::SchedulePrompt => self.store_approved_schedule(row).await.map(|_| None),
            ApprovalKind::Egress => self
                .grant_approved_egress(row, lasting)
                .await
                .map(|()| None),
            ApprovalKind::Budget => {
                let cap = arguments::check_spend_cap(&row.commit_ref).map_err(|e| e.to_string())?;
                self.usage()
                    .set_approved_budget(&row.agent, cap, row.id)
                    .await
                    .map(|_| None)
                    .map_err(|e| e.to_string())
            }
            ApprovalKind::InitConfig => self.init_config(&row.agent).await,
            ApprovalKind::ApplyCommit => self.deploy_approved(row).await,
            ApprovalKind::UpdateMetaInputs => self.update_meta_inputs(row).await,
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

/// An interrupted row whose action stores one row: ended by whether it
/// was stored.
fn stored_or_not(stored: bool, yes: &str, no: &str) -> Result<Option<String>, String> {
    if stored {
        Ok(Some(format!("{INTERRUPTED}; {yes}")))
    } else {
        Err(format!("{INTERRUPTED}; {no}: request again"))
    }
}
