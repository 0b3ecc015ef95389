//! Scheduled prompts: requested by the manager as a `schedule_prompt`
//! approval (the payload rides in the row's `commit_ref` as JSON), stored
//! when the operator approves, fired by the timer at each due time.

use super::messaging::{self, Wakes};
use super::{Hive, HiveError};
use rusqlite::Connection;

use crate::hive::Recipient;
use crate::hive::agenda::{
    AgendaError, SCHEDULE_SENDER, ScheduleTarget, check_len, next_fire_after,
};
use crate::store::approvals::NewApproval;
use crate::store::schedules::{self, Change, NewSchedule, ScheduleEdit};
use crate::store::{StoreError, agents, immediate};
use crate::wire::agenda::{SchedulePromptPayload, WireSchedule};
use crate::wire::host::{Approval, ApprovalKind};

impl Hive {
    /// Check a list of targets: each `operator` or a managed agent; no
    /// duplicates in the answer.
    async fn check_targets(&self, targets: &[String]) -> Result<Vec<String>, HiveError> {
        let mut out: Vec<String> = Vec::with_capacity(targets.len());
        for t in targets {
            if let ScheduleTarget::Agent(name) = ScheduleTarget::parse(t)?
                && !self.is_managed(&name).await?
            {
                return Err(AgendaError::UnknownTarget(t.clone()).into());
            }
            if !out.contains(t) {
                out.push(t.clone());
            }
        }
        Ok(out)
    }

    fn check_schedule_body(&self, body: &str) -> Result<(), HiveError> {
        Ok(check_len(
            "the schedule body",
            body,
            self.config().max_body_bytes,
            "",
        )?)
    }

    async fn check_payload(&self, p: &SchedulePromptPayload) -> Result<Vec<String>, HiveError> {
        if p.targets.is_empty() {
            return Err(AgendaError::NoTargets.into());
        }
        if p.interval_seconds == Some(0) {
            return Err(AgendaError::ZeroInterval.into());
        }
        self.check_schedule_body(&p.body)?;
        self.check_targets(&p.targets).await
    }

    /// `request_schedule_prompt`: validate and queue a `schedule_prompt`
    /// approval (requested by the manager).
    pub async fn request_schedule_prompt(
        &self,
        payload: SchedulePromptPayload,
    ) -> Result<super::approvals::Queued, HiveError> {
        self.check_payload(&payload).await?;
        let commit_ref = serde_json::to_string(&payload)
            .map_err(|e| HiveError::Internal(format!("schedule payload: {e}")))?;
        self.queue(NewApproval {
            agent: self.config().manager(),
            kind: ApprovalKind::SchedulePrompt,
            commit_ref,
            description: payload.description.clone(),
        })
        .await
    }

    /// The action of an approved `schedule_prompt` row: store the schedule.
    pub(crate) async fn store_approved_schedule(&self, row: &Approval) -> Result<i64, String> {
        let payload: SchedulePromptPayload = serde_json::from_str(&row.commit_ref)
            .map_err(|e| format!("the approval's schedule payload is not valid: {e}"))?;
        // Targets are checked again: one may have been destroyed meanwhile.
        let targets = self
            .check_payload(&payload)
            .await
            .map_err(|e| e.to_string())?;
        let new = NewSchedule {
            owner: row.agent.to_string(),
            body: payload.body,
            interval_seconds: payload.interval_seconds,
            first_fire_at: payload.first_fire_at_unix,
            source_approval_id: Some(row.id),
            description: payload.description,
            targets,
        };
        let now = self.now();
        let id = self
            .store()
            .run(move |c| schedules::insert(c, &new, now))
            .await
            .map_err(|e| HiveError::from(e).to_string())?;
        tracing::info!(id, approval = row.id, "schedule stored");
        Ok(id)
    }

    /// `list_schedules`: every schedule, cancelled and finished ones too.
    pub async fn list_schedules(&self) -> Result<Vec<WireSchedule>, HiveError> {
        Ok(self.store().read(schedules::list).await?)
    }

    async fn fire(&self, id: i64, advance: bool) -> Result<Fired, HiveError> {
        let now = self.now();
        let fired = self
            .store()
            .run(move |c| fire_row(c, id, now, advance))
            .await?;
        Ok(match fired {
            Fired::Delivered(wakes) => {
                tracing::info!(id, targets = wakes.len(), advance, "schedule fired");
                // Filed and woken once: the rows it carried are the queues' now.
                self.mail().wake(wakes);
                Fired::Delivered(Wakes::default())
            }
            other => other,
        })
    }

    /// `fire_schedule_now`: deliver now, out of band; the due time stays.
    pub async fn fire_schedule_now(&self, id: i64) -> Result<(), HiveError> {
        match self.fire(id, false).await? {
            Fired::Delivered(_) | Fired::NotDue => Ok(()),
            Fired::Ended => Err(AgendaError::ScheduleEnded(id).into()),
            Fired::NotFound => Err(AgendaError::UnknownSchedule(id).into()),
        }
    }

    /// Fire every schedule due now, each once. How many fired.
    pub(crate) async fn fire_due_schedules(&self) -> Result<usize, HiveError> {
        let now = self.now();
        let due = self.store().run(move |c| schedules::due(c, now)).await?;
        let mut fired = 0;
        for id in due {
            // One schedule that cannot fire must not hold up the others; it
            // stays due and is tried again at the next tick.
            match self.fire(id, true).await {
                Ok(Fired::Delivered(_)) => fired += 1,
                Ok(_) => {}
                Err(err) => tracing::error!(id, "schedule did not fire: {err}"),
            }
        }
        Ok(fired)
    }

    /// `edit_schedule`: change the given fields (see [`ScheduleEdit`]).
    pub async fn edit_schedule(&self, id: i64, edit: ScheduleEdit) -> Result<(), HiveError> {
        if let Some(body) = &edit.body {
            self.check_schedule_body(body)?;
        }
        if edit.interval_seconds == Some(Some(0)) {
            return Err(AgendaError::ZeroInterval.into());
        }
        let mut edit = edit;
        if let Some(add) = &edit.targets_add {
            edit.targets_add = Some(self.check_targets(add).await?);
        }
        let now = self.now();
        let change = self
            .store()
            .run(move |c| schedules::edit(c, id, &edit, now))
            .await?;
        changed(id, change)
    }

    /// `cancel_schedule`: the whole schedule, or some of its targets.
    pub async fn cancel_schedule(
        &self,
        id: i64,
        targets: Option<Vec<String>>,
    ) -> Result<(), HiveError> {
        let now = self.now();
        let change = self
            .store()
            .run(move |c| schedules::cancel(c, id, targets.as_deref(), now))
            .await?;
        changed(id, change)
    }
}

fn changed(id: i64, change: Change) -> Result<(), HiveError> {
    Err(match change {
        Change::Done => return Ok(()),
        Change::NotFound => AgendaError::UnknownSchedule(id),
        Change::Ended => AgendaError::ScheduleEnded(id),
        Change::NotATarget(target) => AgendaError::NotATarget { id, target },
        Change::NoTargetsLeft => AgendaError::NoTargets,
    }
    .into())
}

/// The outcome of [`fire_row`].
#[derive(Debug, PartialEq, Eq)]
enum Fired {
    /// Messages stored; what to wake once committed.
    Delivered(Wakes),
    /// Another tick or an edit moved the due time meanwhile.
    NotDue,
    Ended,
    NotFound,
}

/// Deliver the schedule's body to each active target. `advance`: this is
/// the due fire (refused unless due; then the due time moves on, or a
/// one-shot ends); otherwise an out-of-band fire that leaves it alone.
fn fire_row(conn: &mut Connection, id: i64, now: i64, advance: bool) -> Result<Fired, StoreError> {
    let tx = immediate(conn)?;
    let Some(h) = schedules::fire_head(&tx, id)? else {
        return Ok(Fired::NotFound);
    };
    if h.ended {
        return Ok(Fired::Ended);
    }
    if advance && h.next_fire_at > now {
        return Ok(Fired::NotDue);
    }
    let mut wakes = Wakes::default();
    for target in schedules::active_targets(&tx, id)? {
        let recipient = match ScheduleTarget::parse(&target) {
            Ok(ScheduleTarget::Operator) => Some(Recipient::Operator),
            Ok(ScheduleTarget::Agent(name)) => {
                agents::get(&tx, &name)?.map(|_| Recipient::Agent(name))
            }
            Err(_) => None,
        };
        let result = match &recipient {
            Some(r) => {
                let (msg, woken) = messaging::insert(&tx, SCHEDULE_SENDER, r, &h.body, None, now)?;
                wakes.add(woken);
                format!("delivered as message {msg}")
            }
            None => "skipped: not a managed agent".to_owned(),
        };
        schedules::record_fire(&tx, id, &target, now, &result)?;
    }
    if advance {
        match next_fire_after(h.next_fire_at, h.interval_seconds, now) {
            Some(next) => schedules::set_next_fire(&tx, id, next)?,
            // A one-shot that fired is finished.
            None => schedules::end(&tx, id, now)?,
        }
    }
    tx.commit()?;
    Ok(Fired::Delivered(wakes))
}

#[cfg(test)]
#[path = "schedules_tests.rs"]
mod row_tests;
