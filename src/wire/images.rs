//! The agent images the hive has (`images`, host.sock): each version of
//! the shared agent image with the agents that bind it, and the agents
//! that run a full copy of the image or the host's `/usr`.

use serde::{Deserialize, Serialize};

use super::ident::Ident;

/// What a row of `images` stands for.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum ImageKind {
    /// A version of the shared agent image (its `version`), in the store
    /// or named by an agent's settings.
    Shared,
    /// Agents whose container is a full copy of the agent image (made
    /// before the image was shared; a rebuild moves them onto it).
    FullCopy,
    /// Agents that bind the host's `/usr` (`bind_host_usr`).
    Host,
}

/// One row of `images`: shared versions first (by name), then the full
/// copies, then the host's `/usr`.
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct ImageRow {
    pub kind: ImageKind,
    /// The version's name (`shared` only).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub version: Option<String>,
    /// The version the store's `current` names: new agents and rebuilds
    /// bind it.
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub current: bool,
    /// A version an agent's settings name that is not in the store (removed
    /// by hand, or the store was moved): that agent cannot start until a
    /// rebuild moves it.
    #[serde(default, skip_serializing_if = "super::is_false")]
    pub missing: bool,
    /// The agents of this image, by name (none: an unused version).
    pub agents: Vec<Ident>,
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
