//! What an agent runs now, read back: the tree of its deployed config
//! (`<state_dir>/deployed/N/tree`, a hive-owned export of the applied
//! repo's `main`), its sha (`deployed/N/sha`), and its `agent.json` put
//! over the container spec the hive would give it anyway.
//!
//! Decision: a leaf of the service (it calls no other file of it), so the
//! grants (which build the spec), lifecycle (whose `spawned` names the
//! sha) and the deploy can all read it without a circle.

use std::path::PathBuf;

use super::Hive;
use crate::containers::ContainerSpec;
use crate::hive::proposal::{AGENT_JSON, AgentConfig};
use crate::wire::claude_env::{self, ENV_CLAUDE_ENV};
use crate::wire::ident::Ident;

/// The environment variable Claude Code reads its model from.
pub const MODEL_ENV: &str = "ANTHROPIC_MODEL";

impl Hive {
    /// `<state_dir>/deployed/<n>`.
    pub(super) fn deployed_dir(&self, n: &Ident) -> PathBuf {
        self.config().state_dir.join("deployed").join(n.as_str())
    }

    /// The tree of `n`'s deployed config, if it has one.
    pub(super) fn deployed_tree(&self, n: &Ident) -> PathBuf {
        self.deployed_dir(n).join("tree")
    }

    /// The sha of `n`'s deployed config, if it has one.
    pub(super) fn deployed_sha_of(&self, n: &Ident) -> Option<String> {
        let text = std::fs::read_to_string(self.deployed_dir(n).join("sha")).ok()?;
        Some(text.trim().to_owned()).filter(|s| !s.is_empty())
    }

    /// `n`'s deployed `agent.json`, if it has one (one that no longer
    /// parses is logged and ignored: it was valid when deployed).
    pub(super) fn deployed_config(&self, n: &Ident) -> Option<AgentConfig> {
        let bytes = std::fs::read(self.deployed_tree(n).join(AGENT_JSON)).ok()?;
        AgentConfig::parse(&bytes)
            .inspect_err(|e| tracing::error!(agent = %n, "{n}: deployed config unreadable: {e}"))
            .ok()
    }

    /// `spec` with `n`'s deployed config over it.
    pub(super) fn with_deployed(&self, n: &Ident, mut spec: ContainerSpec) -> ContainerSpec {
        if let Some(config) = self.deployed_config(n) {
            apply_config(&mut spec, &config);
        }
        spec
    }
}

/// `config` over `spec`: its limits where it sets them (absent: the hive's
/// `agent_cpu_quota`/`agent_memory_max`/`agent_tasks_max`); its model as `ANTHROPIC_MODEL`
/// and its environment, for Claude, in the one variable the harness passes
/// on (`HIVE_CLAUDE_ENV`, [`crate::wire::claude_env`]), none when it sets
/// neither.
pub(super) fn apply_config(spec: &mut ContainerSpec, config: &AgentConfig) {
    if let Some(q) = &config.cpu_quota {
        spec.cpu_quota = Some(q.clone());
    }
    if let Some(m) = &config.memory_max {
        spec.memory_max = Some(m.clone());
    }
    if let Some(t) = config.tasks_max {
        spec.tasks_max = Some(t);
    }
    let model = config.model.as_deref().map(|m| (MODEL_ENV, m));
    let vars: Vec<(&str, &str)> = model
        .into_iter()
        .chain(
            config
                .environment
                .iter()
                .map(|(k, v)| (k.as_str(), v.as_str())),
        )
        .collect();
    if !vars.is_empty() {
        spec.env
            .push((ENV_CLAUDE_ENV.to_owned(), claude_env::encode(vars)));
    }
}
