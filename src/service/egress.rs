//! Each agent's egress allow-list: the config's `egress_allow`, which
//! every agent has, plus the `egress` of its deployed (reviewed)
//! `agent.json`, plus what the operator granted that agent
//! (`hivectl grant N --egress HOST[:PORT]`, optionally time-boxed, or an
//! approved `request_egress`).
//!
//! Read per connection (`server::egress_socket`), so a grant, a revoke, an
//! expiry or a deploy (which replaces the deployed `agent.json`) applies to
//! the agent's next connection, with no restart of its container.
//! Rejected: copying `agent.json`'s list into the grants table at deploy,
//! which a rollback or a failed deploy would have to undo, and which
//! `hivectl revoke` could then take away behind the reviewed config.

use super::grants::expiry;
use super::{Hive, HiveError};
use crate::hive::arguments;
use crate::store::approvals::NewApproval;
use crate::store::grants;
use crate::wire::agenda::EgressGrant;
use crate::wire::egress::EgressPattern;
use crate::wire::host::{Approval, ApprovalKind};
use crate::wire::ident::Ident;
use std::time::Duration;

impl Hive {
    /// The patterns agent `name` may reach now: the config's, its deployed
    /// `agent.json`'s, then its grants in force.
    pub async fn egress_allow(&self, name: &Ident) -> Result<Vec<EgressPattern>, HiveError> {
        let (n, now) = (name.to_string(), self.now());
        let granted = self
            .store()
            .read(move |c| grants::egress(c, &n, now))
            .await?;
        let mut list = self.config().egress_allow.clone();
        if let Some(config) = self.deployed_config(name) {
            list.extend(config.egress);
        }
        list.extend(granted.into_iter().map(|g| g.pattern));
        Ok(list)
    }

    /// `request_egress` from agent `name`: queue an `egress` approval for
    /// `host` (its `commit_ref`), with the agent's reason as its
    /// description. Approving it grants the host to that agent.
    pub async fn request_egress(
        &self,
        name: &Ident,
        host: EgressPattern,
        reason: &str,
    ) -> Result<super::approvals::Queued, HiveError> {
        arguments::check_reason("request_egress", reason)?;
        let allowed = self.egress_allow(name).await?;
        let concrete = match (host.host().starts_with("*."), host.port()) {
            (false, Some(port)) => Some((host.host(), port)),
            _ => None,
        };
        let covered = allowed
            .iter()
            .any(|p| p == &host || concrete.is_some_and(|(h, port)| p.matches(h, port)));
        if covered {
            return Err(HiveError::EgressAllowed {
                agent: name.clone(),
                host: host.to_string(),
            });
        }
        self.queue(NewApproval {
            agent: name.clone(),
            kind: ApprovalKind::Egress,
            commit_ref: host.to_string(),
            description: Some(reason.to_owned()),
        })
        .await
    }

    /// The action of an approved `egress` row: grant its host to its agent
    /// for `lasting`, or with no expiry (the operator revokes it).
    pub(crate) async fn grant_approved_egress(
        &self,
        row: &Approval,
        lasting: Option<Duration>,
    ) -> Result<(), String> {
        let pattern = EgressPattern::new(&row.commit_ref).map_err(|e| e.to_string())?;
        let (n, id, now) = (row.agent.to_string(), row.id, self.now());
        let grant = EgressGrant {
            pattern,
            expires_at: lasting.map(|d| expiry(now, d)),
        };
        self.store()
            .run(move |c| grants::grant_egress(c, &n, &grant, Some(id), now))
            .await
            .map_err(|e| HiveError::from(e).to_string())?;
        tracing::info!(agent = %row.agent, approval = row.id, "{}: egress to {} granted (approval {})", row.agent, row.commit_ref, row.id);
        Ok(())
    }
}

#[cfg(test)]
#[path = "egress_tests.rs"]
mod tests;
