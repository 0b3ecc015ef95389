//! The nixos profile's rule on a proposal's `flake.lock`: every input is
//! locked to content (a `narHash`, and a `rev` for the version-control
//! types) and none reads the host's files (`path:` or `file:`), so what
//! the operator approves is what is built, and a build on the host cannot
//! be pointed at a host file by a proposal.
//!
//! Checked by reading the JSON only: the hive never runs nix on a proposal
//! before it is approved. Rejected: `nix flake metadata` on the exported
//! tree, which evaluates the proposal's `flake.nix` (agent-written code)
//! as root before anyone has reviewed it.

use std::collections::BTreeMap;

use serde_json::Value;

use super::proposal::Invalid;

/// The file this rule is about, wherever it sits in the tree.
pub const FLAKE_LOCK: &str = "flake.lock";

/// Lock types whose content is named by a revision as well as a hash.
const NEEDS_REV: [&str; 5] = ["git", "github", "gitlab", "sourcehut", "mercurial"];

/// Check `path`'s bytes (a `flake.lock`): see the module docs. The error
/// names the file and the input.
pub fn check(path: &str, bytes: &[u8]) -> Result<(), Invalid> {
    let fail = |why: String| Invalid(format!("{path}: {why}"));
    let lock: Value = serde_json::from_slice(bytes)
        .map_err(|e| fail(format!("is not a flake lock file (JSON): {e}")))?;
    let root = lock.get("root").and_then(Value::as_str).unwrap_or("root");
    let nodes = lock
        .get("nodes")
        .and_then(Value::as_object)
        .ok_or_else(|| fail("has no `nodes` object: not a flake lock file".into()))?;
    for (name, node) in nodes {
        if name == root {
            continue;
        }
        let locked = node.get("locked").and_then(Value::as_object);
        let original = node.get("original").and_then(Value::as_object);
        let reads_host = [locked, original].into_iter().flatten().any(|attrs| {
            let kind = attrs.get("type").and_then(Value::as_str).unwrap_or("");
            let url = attrs.get("url").and_then(Value::as_str).unwrap_or("");
            matches!(kind, "path" | "file")
                || ["path:", "file:", "git+file:"]
                    .iter()
                    .any(|p| url.starts_with(p))
        });
        if reads_host {
            return Err(fail(format!(
                "input {name:?} is a path: or file: input, which reads the host's files; \
                 use a locked remote input"
            )));
        }
        let Some(locked) = locked else {
            return Err(fail(format!(
                "input {name:?} is not locked; run `nix flake lock` and commit the lock file"
            )));
        };
        let kind = locked.get("type").and_then(Value::as_str).unwrap_or("");
        let has = |key: &str| locked.get(key).and_then(Value::as_str).is_some();
        if kind == "indirect" || !has("narHash") || NEEDS_REV.contains(&kind) && !has("rev") {
            return Err(fail(format!(
                "input {name:?} is not locked to its content (a narHash{}); run `nix flake \
                 lock` and commit the lock file",
                if NEEDS_REV.contains(&kind) {
                    " and a rev"
                } else {
                    ""
                }
            )));
        }
    }
    Ok(())
}

/// What a lock pins: each input's `narHash` by node name (the root's
/// inputs and theirs), for the record of what an agent was built from;
/// `None` for bytes that are not a lock file.
pub fn pins(bytes: &[u8]) -> Option<BTreeMap<String, String>> {
    let lock: Value = serde_json::from_slice(bytes).ok()?;
    let nodes = lock.get("nodes")?.as_object()?;
    Some(
        nodes
            .iter()
            .filter_map(|(name, node)| {
                let hash = node.get("locked")?.get("narHash")?.as_str()?;
                Some((name.clone(), hash.to_owned()))
            })
            .collect(),
    )
}

#[cfg(test)]
#[path = "flake_lock_tests.rs"]
mod tests;
