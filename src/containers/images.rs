//! The agent images a host has and which agent runs which: what `hivectl
//! image ls` shows, shared by the drivers (each reads its own record: the
//! systemd driver its store and the agents' `.nspawn` files, the fake its
//! memory).
//!
//! A version's size is not shown: only a walk of its `/usr` (tens of
//! thousands of files) tells it, too dear for a listing.

use std::collections::BTreeMap;

use crate::wire::ident::Ident;
use crate::wire::images::{ImageKind, ImageRow};

/// The image an agent's container runs, as its settings record it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum AgentImage {
    /// A version of the shared image, by name (or, for a version outside
    /// the store, its directory's path).
    Shared(String),
    /// A full copy of the agent image.
    FullCopy,
    /// The host's `/usr`.
    Host,
}

/// The shared image's store: its versions by name, and the one `current`
/// names.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Store {
    pub versions: Vec<String>,
    pub current: Option<String>,
}

/// Whether `name` may be a version of the store: a bare directory name in
/// `a-z A-Z 0-9 . _ -`, not hidden (`systemd/image/share` works in
/// `.<version>.part`), so a path built from it stays in the store. The one
/// check of a version's name; paths are built only from names it passed.
pub fn is_version_name(name: &str) -> bool {
    let ok = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'.' | b'_' | b'-');
    !name.is_empty() && !name.starts_with('.') && name.bytes().all(ok)
}

/// The rows of `hivectl image ls`: every version of `store` (current
/// marked) and every version an agent names (one not in the store marked
/// missing), by name, each with its agents; then the full copies and the
/// host's `/usr`, when any agent runs them.
pub fn rows(store: &Store, agents: impl IntoIterator<Item = (Ident, AgentImage)>) -> Vec<ImageRow> {
    let mut versions: BTreeMap<String, Vec<Ident>> = store
        .versions
        .iter()
        .map(|v| (v.clone(), Vec::new()))
        .collect();
    let (mut full, mut host) = (Vec::new(), Vec::new());
    for (agent, image) in agents {
        match image {
            AgentImage::Shared(version) => versions.entry(version).or_default().push(agent),
            AgentImage::FullCopy => full.push(agent),
            AgentImage::Host => host.push(agent),
        }
    }
    let row = |kind, version: Option<String>, mut agents: Vec<Ident>| {
        agents.sort();
        let missing = version
            .as_ref()
            .is_some_and(|v| !store.versions.contains(v));
        ImageRow {
            kind,
            current: version.is_some() && version == store.current,
            missing,
            version,
            agents,
        }
    };
    let mut rows: Vec<ImageRow> = versions
        .into_iter()
        .map(|(v, agents)| row(ImageKind::Shared, Some(v), agents))
        .collect();
    for (kind, agents) in [(ImageKind::FullCopy, full), (ImageKind::Host, host)] {
        if !agents.is_empty() {
            rows.push(row(kind, None, agents));
        }
    }
    rows
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
