//! The access policy applied: every front door calls [`Hive::authorize`]
//! once per request, before dispatching it. The rules are
//! [`crate::hive::access`]'s; this reads what they need (the caller's
//! grants, only for a verb gated by one) and turns a refusal into a
//! [`HiveError`].

use super::{Hive, HiveError};
use crate::hive::access::{self, Grants, Rule, Who};
use crate::wire::ident::Ident;

impl Hive {
    /// May `who` run `verb` (its wire command name) on `target` (the agent
    /// the request names, if any)?
    pub async fn authorize(
        &self,
        who: Who<'_>,
        verb: &str,
        target: Option<&Ident>,
    ) -> Result<(), HiveError> {
        let (mut capabilities, mut tool_groups) = (Vec::new(), Vec::new());
        if let Who::Agent(name) = who {
            match access::rule(who.kind(), verb) {
                Some(Rule::Capability(_)) => capabilities = self.capabilities(name).await?,
                Some(Rule::ToolGroup(_)) => tool_groups = self.tool_groups(name).await?,
                _ => {}
            }
        }
        let grants = Grants {
            capabilities: &capabilities,
            tool_groups: &tool_groups,
        };
        let manager = self.config().manager();
        Ok(access::decide(who, verb, target, grants, &manager)?)
    }
}
