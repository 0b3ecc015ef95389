//! Which containers host.sock's `start` and `stop` act on (re-exported by
//! [`super::host`]).

use serde::{Deserialize, Serialize};

use super::ident::Ident;

/// Which containers `start`/`stop` act on. Nothing selected means everything.
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LifecycleScope {
    #[serde(default)]
    pub agent_names: Vec<Ident>,
    #[serde(default)]
    pub agents: bool,
    #[serde(default)]
    pub ci: bool,
    #[serde(default)]
    pub forge: bool,
    #[serde(default)]
    pub gateway: bool,
    #[serde(default)]
    pub matrix: bool,
}

impl LifecycleScope {
    /// A scope that names these agents only.
    pub fn agents(names: Vec<Ident>) -> Self {
        Self {
            agent_names: names,
            ..Self::default()
        }
    }

    /// True when no key selects anything: the scope then means everything.
    pub fn selects_nothing(&self) -> bool {
        self.agent_names.is_empty()
            && !self.agents
            && !self.ci
            && !self.forge
            && !self.gateway
            && !self.matrix
    }

    /// True when every managed agent is selected (`agents: true`, or nothing
    /// selected at all). This hive runs no ci/forge/gateway/matrix services,
    /// so those flags alone select nothing.
    pub fn selects_all_agents(&self) -> bool {
        self.agents || self.selects_nothing()
    }
}
