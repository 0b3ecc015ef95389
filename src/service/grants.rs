//! Per-agent grants — capabilities, tool groups and egress hosts (the
//! last read per connection by `service::egress`) — as the operator sets
//! them (checked by the access policy, `service::access`), and the environment handed to
//! the container (`HIVE_CAPABILITIES`, `HIVE_TOOL_GROUPS`).
//!
//! The grants live in SQLite (`store::grants`), not in the container's
//! config: hive-c0re enforces them at dispatch, so the copy that matters is
//! the daemon's; the container's environment only tells the harness which
//! tools to show, and is refreshed at spawn and rebuild (a change sets the
//! agent's `needs_update` until then).

use super::{Hive, HiveError};
use crate::containers::ContainerSpec;
use crate::store::{agents, grants};
use crate::wire::agenda::{AgentGrants, Capability, EgressGrant, ToolGroup};
use crate::wire::egress::EgressPattern;
use crate::wire::ident::Ident;
use std::time::Duration;

/// The environment variable listing an agent's capabilities.
pub const ENV_CAPABILITIES: &str = "HIVE_CAPABILITIES";
/// The environment variable listing an agent's tool groups.
pub const ENV_TOOL_GROUPS: &str = "HIVE_TOOL_GROUPS";

/// One thing the operator grants or revokes.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Grant {
    Capability(Capability),
    ToolGroup(ToolGroup),
    /// A `host[:port]` the agent may reach through the egress proxy, for
    /// this long if time-boxed (a revoke ignores the duration).
    Egress(EgressPattern, Option<Duration>),
}

/// The container environment for these grants: comma-separated snake_case
/// names (an empty value when there are none, so the harness can tell
/// "none" from "unset").
pub fn grant_env(capabilities: &[Capability], groups: &[ToolGroup]) -> Vec<(String, String)> {
    let join = |names: Vec<&str>| names.join(",");
    vec![
        (
            ENV_CAPABILITIES.to_owned(),
            join(capabilities.iter().map(|c| c.as_str()).collect()),
        ),
        (
            ENV_TOOL_GROUPS.to_owned(),
            join(groups.iter().map(|g| g.as_str()).collect()),
        ),
    ]
}

/// A grant as a note names it: `capability read_host_journal`, `egress
/// pypi.org:443 until 2026-12-07T18:00:00Z`.
fn describe(grant: &Grant) -> String {
    match grant {
        Grant::Capability(c) => format!("capability {}", c.as_str()),
        Grant::ToolGroup(g) => format!("tool group {}", g.as_str()),
        Grant::Egress(p, _) => format!("egress {p}"),
    }
}

/// When a grant made at `now` for `lasting` ends (unix seconds; a duration
/// past the clock's range ends at its end, never wraps into the past).
pub(super) fn expiry(now: i64, lasting: std::time::Duration) -> i64 {
    now.saturating_add(i64::try_from(lasting.as_secs()).unwrap_or(i64::MAX))
}

impl Hive {
    /// An agent's capabilities.
    pub async fn capabilities(&self, name: &Ident) -> Result<Vec<Capability>, HiveError> {
        let n = name.to_string();
        Ok(self
            .store()
            .read(move |c| grants::capabilities(c, &n))
            .await?)
    }

    /// An agent's tool groups ([`ToolGroup::AGENT_DEFAULT`] until set).
    pub async fn tool_groups(&self, name: &Ident) -> Result<Vec<ToolGroup>, HiveError> {
        let n = name.to_string();
        Ok(self
            .store()
            .read(move |c| grants::tool_groups(c, &n))
            .await?)
    }

    /// Grant (`on`) or revoke one capability, tool group or egress host of
    /// a managed agent. Takes effect at dispatch at once; the container's
    /// environment follows at its next rebuild. The answer is a note for
    /// the operator when the request did less or more than it reads: it
    /// changed nothing, it dropped a grant's expiry, or the agent's
    /// sessions see it only after a rebuild (`None`: done as asked).
    pub async fn set_grant(
        &self,
        name: &Ident,
        grant: Grant,
        on: bool,
    ) -> Result<Option<String>, HiveError> {
        self.require(name).await?;
        let (n, now, what) = (name.to_string(), self.now(), grant.clone());
        let (changed, before) = self
            .store()
            .run(move |c| match what {
                Grant::Capability(cap) => Ok((grants::set_capability(c, &n, cap, on)?, None)),
                Grant::ToolGroup(group) => Ok((grants::set_tool_group(c, &n, group, on)?, None)),
                Grant::Egress(pattern, _) if !on => {
                    Ok((grants::revoke_egress(c, &n, &pattern)?, None))
                }
                Grant::Egress(pattern, lasting) => {
                    let before = grants::egress_expiry(c, &n, &pattern)?;
                    let expires_at = lasting.map(|d| expiry(now, d));
                    let grant = EgressGrant {
                        pattern,
                        expires_at,
                    };
                    Ok((grants::grant_egress(c, &n, &grant, None, now)?, before))
                }
            })
            .await?;
        tracing::info!(agent = %name, ?grant, on, changed, "{name}: grant {grant:?} {}", if on { "granted" } else { "revoked" });
        // Capabilities and tool groups are in the container's environment:
        // its base changed (`base`). Egress hosts are read per connection.
        let in_env = matches!(grant, Grant::Capability(_) | Grant::ToolGroup(_));
        let manager = *name == self.config().manager();
        if changed
            && in_env
            && !manager
            && let Err(e) = self.recheck_base(name).await
        {
            tracing::warn!(agent = %name, "{name}: cannot tell whether it needs an update: {e}");
        }
        let what = describe(&grant);
        let note = if !changed && on {
            Some(format!("{name}: already has {what}; nothing changed"))
        } else if !changed {
            Some(format!("{name}: had no {what}; nothing changed"))
        } else if in_env && !manager {
            Some(format!(
                "{name}: {} {what}; allowed at once, but its sessions list their tools from the \
                 container's environment, which follows at its next rebuild (`hivectl rebuild {}`)",
                if on { "granted" } else { "revoked" },
                name.as_argument(),
            ))
        } else if let (Grant::Egress(_, None), Some(Some(was))) = (&grant, before)
            && was > self.now()
        {
            Some(format!(
                "{name}: granted {what}, now until revoked (it was to end at {})",
                crate::clock::rfc3339(was)
            ))
        } else {
            None
        };
        Ok(note)
    }

    /// The grants of one agent, or of every managed agent.
    pub async fn grants(&self, name: Option<&Ident>) -> Result<Vec<AgentGrants>, HiveError> {
        let names = match name {
            Some(n) => {
                self.require(n).await?;
                vec![n.clone()]
            }
            None => self.list().await?,
        };
        let now = self.now();
        self.store()
            .run(move |c| {
                names
                    .iter()
                    .map(|n| {
                        Ok(AgentGrants {
                            name: n.to_string(),
                            capabilities: grants::capabilities(c, n.as_str())?,
                            tool_groups: grants::tool_groups(c, n.as_str())?,
                            egress: grants::egress(c, n.as_str(), now)?,
                        })
                    })
                    .collect()
            })
            .await
            .map_err(HiveError::from)
    }

    /// Set `name`'s `needs_update` by what it would be built from now
    /// (`base`); answers the flag.
    pub(super) async fn recheck_base(&self, name: &Ident) -> Result<bool, HiveError> {
        let spec = self.container_spec(name).await?;
        self.check_base(name, &spec).await
    }

    /// The container spec of an agent with its grants in the environment
    /// and its deployed config (`agent.json`) over the hive's defaults.
    pub async fn container_spec(&self, name: &Ident) -> Result<ContainerSpec, HiveError> {
        let caps = self.capabilities(name).await?;
        let groups = self.tool_groups(name).await?;
        Ok(self.with_deployed(name, self.spec(name, &caps, &groups)))
    }

    /// An agent was destroyed: forget its grants and the budget on its
    /// subtree (a later agent of the same name starts from the defaults)
    /// and cancel its pending reminders.
    pub(crate) async fn forget_agenda_of(&self, name: &Ident) -> Result<(), HiveError> {
        let (n, id, now) = (name.to_string(), name.clone(), self.now());
        Ok(self
            .store()
            .run(move |c| {
                let tx = crate::store::immediate(c)?;
                grants::forget(&tx, &n)?;
                crate::store::spend_caps::forget(&tx, &id)?;
                crate::store::reminders::cancel_pending_of(&tx, &n, now)?;
                tx.commit()?;
                Ok(())
            })
            .await?)
    }

    /// Is `name` managed? (For grant listing of unknown names.)
    pub async fn is_managed(&self, name: &Ident) -> Result<bool, HiveError> {
        let n = name.clone();
        Ok(self
            .store()
            .read(move |c| agents::get(c, &n))
            .await?
            .is_some())
    }
}

#[cfg(test)]
#[path = "grants_tests.rs"]
mod tests;
