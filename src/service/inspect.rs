//! `inspect_agent` (`hivectl inspect NAME`): one agent's facts in one
//! answer, composed from reads the service already has — the roster row,
//! the deployed config, the container spec's limits, the grants, the
//! messaging room's inbox depth, the approvals and questions waiting, and
//! the turn journal. It changes nothing and reaches into no room's state:
//! each part is a public read of its owner.
//!
//! Decision: one request answering every section rather than the client
//! asking `agent_status`, `grants`, `turns`... in turn: one round trip,
//! one consistent moment, and the egress entries' sources (which no other
//! verb answers) computed where the three lists live.
//! Rejected: reading back the limits systemd applied to the running unit
//! (`systemctl show`): that answers for a running agent only, and the
//! operator asks what the hive gives the container, running or not.

use super::{Hive, HiveError};
use crate::clock::rfc3339;
use crate::wire::host::ApprovalStatus;
use crate::wire::ident::Ident;
use crate::wire::inspect::{
    AgentInspect, EgressEntry, EgressSource, INSPECT_TURNS, InspectConfig, InspectLimits,
    InspectTurn,
};
use crate::wire::turns::TurnRow;

impl Hive {
    /// Agent `name`'s facts, or [`HiveError::UnknownAgent`].
    pub async fn inspect_agent(&self, name: &Ident) -> Result<AgentInspect, HiveError> {
        let record = self.require(name).await?;
        let status = self.row(name).await?;
        let deployed = self.deployed_config(name);
        let spec = self.container_spec(name).await?;
        let grants = self
            .grants(Some(name))
            .await?
            .into_iter()
            .next()
            .ok_or_else(|| HiveError::UnknownAgent(name.clone()))?;
        let c = self.config();
        let limits = InspectLimits {
            memory_max: spec.memory_max,
            cpu_quota: spec.cpu_quota,
            tasks_max: spec.tasks_max,
            inotify_instances: c.agent_inotify_instances.get(),
            inotify_watches: c.agent_inotify_watches.get(),
            disk_quota_bytes: c.agent_disk_quota,
            disk_inodes: c.agent_disk_quota.map(|_| c.agent_disk_inodes),
            disk_quota_required: c.agent_disk_quota_required,
        };
        let entry = |pattern, source, expires_at: Option<i64>| EgressEntry {
            pattern,
            source,
            expires_at: expires_at.map(rfc3339),
        };
        let mut egress: Vec<EgressEntry> = c
            .egress_allow
            .iter()
            .map(|p| entry(p.clone(), EgressSource::Hive, None))
            .collect();
        if let Some(config) = &deployed {
            egress.extend(
                config
                    .egress
                    .iter()
                    .map(|p| entry(p.clone(), EgressSource::AgentJson, None)),
            );
        }
        egress.extend(
            grants
                .egress
                .into_iter()
                .map(|g| entry(g.pattern, EgressSource::Grant, g.expires_at)),
        );
        let pending_approvals = self
            .approvals()
            .await?
            .iter()
            .filter(|a| a.agent == *name && a.status == ApprovalStatus::Pending)
            .count() as u64;
        let questions = self.open_questions().await?;
        let count = |pick: &dyn Fn(&crate::wire::agenda::WireQuestion) -> bool| {
            questions.iter().filter(|q| pick(q)).count() as u64
        };
        let turns = self.usage().turns(name, INSPECT_TURNS).await?;
        Ok(AgentInspect {
            name: name.clone(),
            status,
            config: InspectConfig {
                deployed_sha: record.deployed_sha.or_else(|| self.deployed_sha_of(name)),
                model: deployed.and_then(|d| d.model),
            },
            limits,
            egress,
            capabilities: grants.capabilities,
            tool_groups: grants.tool_groups,
            inbox: self.messaging().depth(name),
            pending_approvals,
            questions_asked: count(&|q| q.asker == name.as_str()),
            questions_to_answer: count(&|q| q.target.as_deref() == Some(name.as_str())),
            turns: turns.iter().map(short_turn).collect(),
        })
    }
}

/// A turn in short, its times in RFC 3339 (the journal keeps unix ms).
fn short_turn(row: &TurnRow) -> InspectTurn {
    let at = |ms: i64| rfc3339(ms.div_euclid(1000));
    InspectTurn {
        id: row.id,
        started_at: at(row.report.started_at_ms),
        ended_at: at(row.report.ended_at_ms),
        outcome: row.report.outcome,
        model: row.report.model.clone(),
        cost_micro_usd: row.report.cost_micro_usd,
    }
}

#[cfg(test)]
#[path = "inspect_tests.rs"]
mod tests;
