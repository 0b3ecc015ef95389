//! Loose ends — an agent's open threads — and the reminder counts, with the
//! scoping rules of [`crate::hive::access::resolve_target`], and
//! `cancel_loose_end` by the owner.
//!
//! What a scope shows: open questions the agent asked or was asked, its
//! undelivered reminders, and — for the manager (who requests every
//! approval) and for the hive-wide view — the pending approvals.

use super::{Hive, HiveError};
use crate::hive::access::{ScopeTarget, may_cancel, resolve_target};
use crate::hive::agenda::{AgendaError, Caller, Target, age};
use crate::hive::topology::Topology;
use crate::store::{agents, approvals, immediate, questions, reminders};
use crate::wire::agenda::{CancelLooseEndKind, Capability, LooseEnd, ReminderStats};
use crate::wire::ident::Ident;

impl Hive {
    /// Whose data a query with `agent` covers, for this caller.
    pub async fn resolve_scope(
        &self,
        caller: &Caller,
        agent: Option<&str>,
    ) -> Result<Target, HiveError> {
        let parents = self.store().read(agents::parents).await?;
        let may_query_others = match caller {
            Caller::Manager(_) => true,
            Caller::Agent(name) => self
                .capabilities(name)
                .await?
                .contains(&Capability::QueryAgentState),
        };
        resolve_target(caller, agent, &Topology::new(parents), may_query_others).map_err(
            |e| match e {
                ScopeTarget::Unknown(name) => HiveError::UnknownAgent(name),
                ScopeTarget::BadName(name) => AgendaError::BadAgentName(name).into(),
                ScopeTarget::Denied(why) => why.into(),
            },
        )
    }

    /// `get_loose_ends`: open questions, pending reminders and (manager or
    /// hive-wide) pending approvals of the scope.
    pub async fn loose_ends(
        &self,
        caller: &Caller,
        agent: Option<&str>,
    ) -> Result<Vec<LooseEnd>, HiveError> {
        let target = self.resolve_scope(caller, agent).await?;
        let (now, manager) = (self.now(), self.config().manager());
        let ends = self
            .store()
            .run(move |c| {
                let (who, with_approvals) = match &target {
                    Target::One(name) => (Some(name.to_string()), *name == manager),
                    Target::Hive => (None, true),
                };
                let mut out = Vec::new();
                if with_approvals {
                    for a in approvals::pending(c)? {
                        out.push(LooseEnd::Approval {
                            id: a.id,
                            agent: a.agent.to_string(),
                            commit_ref: a.commit_ref,
                            description: a.description,
                            age_seconds: age(a.requested_at, now),
                        });
                    }
                }
                let qs = match &who {
                    Some(name) => questions::open_of(c, name)?,
                    None => questions::open(c)?,
                };
                for q in qs {
                    out.push(LooseEnd::Question {
                        id: q.id,
                        asker: q.asker,
                        target: q.target,
                        question: q.question,
                        age_seconds: age(q.asked_at, now),
                    });
                }
                for r in reminders::pending_of(c, who.as_deref())? {
                    out.push(LooseEnd::Reminder {
                        id: r.id,
                        owner: r.owner,
                        message: r.message,
                        due_at: r.due_at,
                        age_seconds: age(r.created_at, now),
                    });
                }
                Ok(out)
            })
            .await?;
        Ok(ends)
    }

    /// `count_pending_reminders`: undelivered reminders of the scope.
    pub async fn count_pending_reminders(
        &self,
        caller: &Caller,
        agent: Option<&str>,
    ) -> Result<u64, HiveError> {
        let who = owner_filter(self.resolve_scope(caller, agent).await?);
        Ok(self
            .store()
            .read(move |c| reminders::count_pending(c, who.as_deref()))
            .await?)
    }

    /// `reminder_rollup`: reminder counts of the scope over the last
    /// `since_secs` (0 = all time).
    pub async fn reminder_rollup(
        &self,
        caller: &Caller,
        since_secs: u64,
        agent: Option<&str>,
    ) -> Result<ReminderStats, HiveError> {
        let who = owner_filter(self.resolve_scope(caller, agent).await?);
        let cutoff = (since_secs > 0).then(|| {
            self.now()
                .saturating_sub(i64::try_from(since_secs).unwrap_or(i64::MAX))
        });
        Ok(self
            .store()
            .read(move |c| reminders::rollup(c, who.as_deref(), cutoff))
            .await?)
    }

    /// `cancel_loose_end`: a question or reminder by its owner; an approval
    /// by the manager only.
    pub async fn cancel_loose_end(
        &self,
        caller: &Caller,
        kind: CancelLooseEndKind,
        id: i64,
    ) -> Result<(), HiveError> {
        may_cancel(caller, kind)?;
        let me = caller.name();
        match kind {
            CancelLooseEndKind::Question => self.withdraw_question(me, id).await,
            CancelLooseEndKind::Reminder => self.cancel_reminder(me, id).await,
            CancelLooseEndKind::Approval => self.cancel_approval(id).await.map(drop),
        }
    }

    async fn cancel_reminder(&self, me: &Ident, id: i64) -> Result<(), HiveError> {
        let (owner, now) = (me.to_string(), self.now());
        self.transact(move |c| {
            let tx = immediate(c)?;
            let Some(row) = reminders::get(&tx, id)? else {
                return Err(AgendaError::UnknownReminder(id).into());
            };
            if row.owner != owner {
                return Err(AgendaError::NotTheOwner {
                    kind: "reminder",
                    id,
                }
                .into());
            }
            if !reminders::cancel(&tx, id, now)? {
                let state = if row.sent_at.is_some() {
                    "delivered"
                } else {
                    "cancelled"
                };
                return Err(AgendaError::ReminderClosed { id, state }.into());
            }
            tx.commit()?;
            Ok(())
        })
        .await?;
        self.publish(me).await;
        Ok(())
    }
}

fn owner_filter(target: Target) -> Option<String> {
    match target {
        Target::One(name) => Some(name.to_string()),
        Target::Hive => None,
    }
}
