//! `hivectl image ls`: the agent images the host has — each version of
//! the shared image (the current one marked) with the agents that bind
//! it, then the agents that run a full copy or the host's `/usr`.
//! `hivectl image prune [--dry-run]`: the versions removed (or that would
//! be), one per line. The arguments are [`super::image_args`]'s.

use crate::wire::images::{ImageKind, ImageRow};

use super::table::{or_dash, table};

/// What `image prune` did: each version, or that there was none.
pub fn pruned(versions: &[String], dry_run: bool) -> String {
    match (versions.is_empty(), dry_run) {
        (true, true) => "no unused image versions: nothing to remove\n".into(),
        (true, false) => "no unused image versions: nothing removed\n".into(),
        (false, _) => {
            let verb = if dry_run { "would remove" } else { "removed" };
            versions
                .iter()
                .map(|v| format!("{verb} {}\n", or_dash(Some(v))))
                .collect()
        }
    }
}

/// The table of `rows`, or a line saying there are none.
pub fn table_of(rows: &[ImageRow]) -> String {
    if rows.is_empty() {
        return "no agent images (the driver keeps none, or no agent has one yet)\n".into();
    }
    let body: Vec<Vec<String>> = rows
        .iter()
        .map(|r| {
            let image = match r.kind {
                ImageKind::Shared => or_dash(r.version.as_deref()),
                ImageKind::FullCopy => "(full copy)".into(),
                ImageKind::Host => "(host /usr)".into(),
            };
            let state = match (r.current, r.missing) {
                (true, _) => "current",
                (_, true) => "missing",
                _ => "-",
            };
            let agents = if r.agents.is_empty() {
                "-".to_owned()
            } else {
                r.agents
                    .iter()
                    .map(ToString::to_string)
                    .collect::<Vec<_>>()
                    .join(",")
            };
            vec![image, state.into(), agents]
        })
        .collect();
    table(&["IMAGE", "STATE", "AGENTS"], &body)
}

#[cfg(test)]
#[path = "image_tests.rs"]
mod tests;
