//! What an agent's config is, and what a proposed config commit may
//! contain: the rules the hive applies to a commit the manager asks it to
//! apply, once the commit is fetched into the hive's own (applied) repo.
//!
//! A config is a tree: `agent.json` (strict: [`AgentConfig`]), Claude
//! Code's own files (`CLAUDE.md`, `.claude/`) and anything else the manager
//! wants to keep beside them (a README). The tree is read with `git ls-tree`
//! ([`parse_ls_tree`]) and checked whole by [`check_tree`] before a row is
//! shown to the operator: no gitlink, no `.gitmodules`, no path that could
//! leave the tree once exported (`..`, `.git`, absolute, control
//! characters), no symlink pointing out of it, files and the whole tree
//! under caps.
//!
//! Decision: refuse rather than repair. A proposal with a gitlink is not
//! exported without it; it fails with the reason, so what the operator
//! approves is exactly what is built. Rejected: ignoring unknown keys of
//! `agent.json` (config is strict, CONVENTIONS 8): a typo would silently
//! keep the old limit.

use std::collections::BTreeMap;

use serde::{Deserialize, Serialize};

use crate::wire::egress::EgressPattern;
use crate::wire::ident::Ident;

/// Where the manager's container sees the proposed repos (`/hive/proposed/N`,
/// read-write: its workspace).
pub const MANAGER_PROPOSED_DIR: &str = "/hive/proposed";
/// Where the manager's container sees the applied repos (`/hive/applied/N.git`,
/// read-only: the hive's).
pub const MANAGER_APPLIED_DIR: &str = "/hive/applied";
/// The config file of an agent, at the root of its config tree.
pub const AGENT_JSON: &str = "agent.json";
/// The largest file a config tree may hold.
pub const MAX_FILE_BYTES: u64 = 1 << 20;
/// The largest a config tree may be, all files together.
pub const MAX_TREE_BYTES: u64 = 8 << 20;
/// Most entries (files, symlinks) a config tree may hold.
pub const MAX_ENTRIES: usize = 1000;
/// The longest path in a config tree, in bytes.
pub const MAX_PATH_BYTES: usize = 255;
/// The most `egress` patterns an `agent.json` may list (each connection of
/// the agent is checked against its whole list).
pub const MAX_EGRESS: usize = 100;
/// Environment variables of this prefix are the hive's own
/// (`HIVE_CAPABILITIES`, ...): `agent.json` may not set them.
pub const RESERVED_ENV_PREFIX: &str = "HIVE_";

/// `agent.json`: the keys the hive reads, and no other (an unknown key
/// fails validation by name).
#[derive(Debug, Clone, Default, PartialEq, Eq, Serialize, Deserialize)]
#[serde(deny_unknown_fields)]
pub struct AgentConfig {
    /// The Claude model the agent runs (absent: Claude Code's default).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub model: Option<String>,
    /// systemd `CPUQuota=` of the container, e.g. `200%` (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub cpu_quota: Option<String>,
    /// systemd `MemoryMax=` of the container, e.g. `4G` (absent: none).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub memory_max: Option<String>,
    /// systemd `TasksMax=` of the container, 1 or more (absent: the hive's
    /// `agent_tasks_max`).
    #[serde(default, skip_serializing_if = "Option::is_none")]
    pub tasks_max: Option<u64>,
    /// Environment variables for Claude (the harness hands them to each
    /// turn: `crate::wire::claude_env`).
    #[serde(default)]
    pub environment: BTreeMap<String, String>,
    /// Hosts this agent may reach through the hive's egress proxy, on top
    /// of the hive's `egress_allow` and the operator's grants; each checked
    /// by [`EgressPattern`]'s one validator as it is parsed.
    #[serde(default, skip_serializing_if = "Vec::is_empty")]
    pub egress: Vec<EgressPattern>,
}

/// Why a proposal is refused; the text becomes the row's note.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct Invalid(pub String);

fn invalid(text: impl Into<String>) -> Invalid {
    Invalid(text.into())
}

impl AgentConfig {
    /// Parse and check `agent.json`'s bytes.
    pub fn parse(bytes: &[u8]) -> Result<Self, Invalid> {
        let value: serde_json::Value =
            serde_json::from_slice(bytes).map_err(|e| invalid(format!("{AGENT_JSON}: {e}")))?;
        if !value.is_object() {
            return Err(invalid(format!("{AGENT_JSON}: must be a JSON object")));
        }
        let config: Self =
            serde_json::from_value(value).map_err(|e| invalid(format!("{AGENT_JSON}: {e}")))?;
        config.check()?;
        Ok(config)
    }

    /// Are the values of the shapes systemd and the settings file take?
    pub fn check(&self) -> Result<(), Invalid> {
        if let Some(m) = &self.model
            && (m.is_empty() || m.len() > 100 || m.chars().any(|c| c.is_control()))
        {
            return Err(invalid(format!(
                "{AGENT_JSON}: \"model\" must be 1-100 bytes without control characters"
            )));
        }
        if let Some(q) = &self.cpu_quota
            && !is_cpu_quota(q)
        {
            return Err(invalid(format!(
                "{AGENT_JSON}: \"cpu_quota\" {q:?} is not a percentage such as \"200%\""
            )));
        }
        if let Some(m) = &self.memory_max
            && !is_memory(m)
        {
            return Err(invalid(format!(
                "{AGENT_JSON}: \"memory_max\" {m:?} is not bytes with an optional K, M, G or T \
                 (such as \"4G\") or \"infinity\""
            )));
        }
        if self.tasks_max == Some(0) {
            return Err(invalid(format!(
                "{AGENT_JSON}: \"tasks_max\" is 0, which would let the container start \
                 nothing; give a count such as 4096, or leave it out for the hive's default"
            )));
        }
        if self.egress.len() > MAX_EGRESS {
            return Err(invalid(format!(
                "{AGENT_JSON}: \"egress\" lists {} patterns; at most {MAX_EGRESS}",
                self.egress.len()
            )));
        }
        for (k, v) in &self.environment {
            let key_ok = !k.is_empty()
                && k.len() <= 100
                && k.bytes().enumerate().all(|(i, b)| {
                    b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit())
                });
            if !key_ok || k.starts_with(RESERVED_ENV_PREFIX) {
                return Err(invalid(format!(
                    "{AGENT_JSON}: environment variable {k:?} is not allowed: use A-Z, a-z, \
                     0-9 and '_', not starting with a digit nor with {RESERVED_ENV_PREFIX}"
                )));
            }
            if v.len() > 4096 || v.chars().any(|c| c.is_control() || c == '"' || c == '\\') {
                return Err(invalid(format!(
                    "{AGENT_JSON}: the value of {k} must be at most 4096 bytes without control \
                     characters, quotes or backslashes"
                )));
            }
        }
        Ok(())
    }

    /// The file's text as the hive writes it (sorted keys, a final newline).
    pub fn to_text(&self) -> String {
        let mut text = serde_json::to_string_pretty(self).unwrap_or_default();
        text.push('\n');
        text
    }
}

fn is_cpu_quota(q: &str) -> bool {
    let Some(p) = q.strip_suffix('%') else {
        return false;
    };
    let (whole, frac) = p.split_once('.').unwrap_or((p, ""));
    let digits = |s: &str| s.bytes().all(|b| b.is_ascii_digit());
    (1..=6).contains(&whole.len())
        && frac.len() <= 2
        && digits(whole)
        && digits(frac)
        && p.bytes().any(|b| (b'1'..=b'9').contains(&b))
}

fn is_memory(m: &str) -> bool {
    if m == "infinity" {
        return true;
    }
    let n = m.strip_suffix(['K', 'M', 'G', 'T']).unwrap_or(m);
    (1..=19).contains(&n.len()) && n.bytes().all(|b| b.is_ascii_digit())
}

/// What an entry of a config tree is, by its git mode.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EntryKind {
    File,
    Executable,
    Symlink,
    /// A submodule's commit: refused.
    Gitlink,
    /// Any other mode: refused.
    Other(u32),
}

impl EntryKind {
    fn of_mode(mode: u32) -> Self {
        match mode {
            0o100644 => Self::File,
            0o100755 => Self::Executable,
            0o120000 => Self::Symlink,
            0o160000 => Self::Gitlink,
            other => Self::Other(other),
        }
    }
}

/// One entry of `git ls-tree -r -z --long`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct TreeEntry {
    pub kind: EntryKind,
    /// The object name (hex).
    pub object: String,
    /// Bytes (absent for a gitlink).
    pub size: Option<u64>,
    /// The path's bytes as git stores them.
    pub path: Vec<u8>,
}

impl TreeEntry {
    /// The path for messages (lossy).
    pub fn shown(&self) -> String {
        let s = String::from_utf8_lossy(&self.path);
        s.chars()
            .map(|c| if c.is_control() { '?' } else { c })
            .take(120)
            .collect()
    }
}

/// Parse `git ls-tree -r -z --long` output: `<mode> <type> <object>
/// <size>\t<path>\0` per entry. A line that does not parse is an error.
pub fn parse_ls_tree(out: &[u8]) -> Result<Vec<TreeEntry>, Invalid> {
    let bad = || invalid("the tree listing could not be read");
    out.split(|b| *b == 0)
        .filter(|r| !r.is_empty())
        .map(|record| {
            let tab = record.iter().position(|b| *b == b'\t').ok_or_else(bad)?;
            let head = std::str::from_utf8(&record[..tab]).map_err(|_| bad())?;
            let mut words = head.split_whitespace();
            let (mode, _kind, object, size) =
                (words.next(), words.next(), words.next(), words.next());
            let mode = u32::from_str_radix(mode.ok_or_else(bad)?, 8).map_err(|_| bad())?;
            Ok(TreeEntry {
                kind: EntryKind::of_mode(mode),
                object: object.ok_or_else(bad)?.to_owned(),
                size: size.and_then(|s| s.parse().ok()),
                path: record[tab + 1..].to_vec(),
            })
        })
        .collect()
}

/// Is one path component one that could leave the tree or reach git's
/// own files once exported (`.`, `..`, `.git` in any case, empty)?
fn escapes(component: &[u8]) -> bool {
    let trimmed = component
        .iter()
        .rposition(|b| *b != b'.' && *b != b' ')
        .map_or(&component[..0], |i| &component[..=i]);
    component.is_empty()
        || component == b"."
        || component == b".."
        || trimmed.eq_ignore_ascii_case(b".git")
        || component.eq_ignore_ascii_case(b".git")
}

/// Check a proposal's whole tree (see the module docs); symlink targets
/// are checked by [`check_symlink`], once read.
pub fn check_tree(entries: &[TreeEntry]) -> Result<(), Invalid> {
    if entries.len() > MAX_ENTRIES {
        return Err(invalid(format!(
            "the tree has {} entries, over the cap of {MAX_ENTRIES}",
            entries.len()
        )));
    }
    let mut total = 0u64;
    let mut has_agent_json = false;
    for e in entries {
        let shown = e.shown();
        if e.path.len() > MAX_PATH_BYTES
            || std::str::from_utf8(&e.path).is_err()
            || e.path.iter().any(|b| b.is_ascii_control())
        {
            return Err(invalid(format!(
                "path {shown:?} must be UTF-8 without control characters, at most \
                 {MAX_PATH_BYTES} bytes"
            )));
        }
        if e.path.starts_with(b"/") || e.path.split(|b| *b == b'/').any(escapes) {
            return Err(invalid(format!("path {shown:?} escapes the tree")));
        }
        let name = e.path.rsplit(|b| *b == b'/').next().unwrap_or_default();
        if name.eq_ignore_ascii_case(b".gitmodules") {
            return Err(invalid(format!(
                "{shown:?}: submodules are not allowed in a config"
            )));
        }
        match e.kind {
            EntryKind::Gitlink => {
                return Err(invalid(format!(
                    "{shown:?} is a gitlink (a submodule): submodules are not allowed in a config"
                )));
            }
            EntryKind::Other(mode) => {
                return Err(invalid(format!("{shown:?} has mode {mode:o}, not a file")));
            }
            EntryKind::File | EntryKind::Executable | EntryKind::Symlink => {}
        }
        let size = e.size.unwrap_or(0);
        if size > MAX_FILE_BYTES {
            return Err(invalid(format!(
                "{shown:?} is {size} bytes, over the cap of {MAX_FILE_BYTES} bytes per file"
            )));
        }
        total += size;
        if e.path == AGENT_JSON.as_bytes() {
            has_agent_json = e.kind == EntryKind::File;
        }
    }
    if total > MAX_TREE_BYTES {
        return Err(invalid(format!(
            "the tree is {total} bytes, over the cap of {MAX_TREE_BYTES} bytes"
        )));
    }
    if !has_agent_json {
        return Err(invalid(format!(
            "{AGENT_JSON} is missing at the root of the tree (or is not a plain file)"
        )));
    }
    Ok(())
}

/// Does symlink `entry` point inside the tree (a relative target without
/// `..`, `.git` or control characters)?
pub fn check_symlink(entry: &TreeEntry, target: &[u8]) -> Result<(), Invalid> {
    let ok = !target.is_empty()
        && target.len() <= MAX_PATH_BYTES
        && !target.starts_with(b"/")
        && !target.iter().any(|b| b.is_ascii_control())
        && !target
            .split(|b| *b == b'/')
            .any(|c| c == b".." || escapes(c) && c != b".");
    ok.then_some(()).ok_or_else(|| {
        invalid(format!(
            "symlink {:?} points outside the tree: {:?}",
            entry.shown(),
            String::from_utf8_lossy(target)
        ))
    })
}

/// The refusal of a proposal that does not descend from the applied
/// repo's `main`.
pub fn not_on_main(sha: &str) -> Invalid {
    invalid(format!(
        "commit {} does not descend from the deployed main: rebase on main \
         (fetch /hive/applied/<agent>.git)",
        &sha[..sha.len().min(12)]
    ))
}

/// The tags that tell a proposal's story in the applied repo.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Tag {
    Proposal,
    Approved,
    Building,
    Deployed,
    /// Annotated with the build error.
    Failed,
    /// Annotated with the operator's note.
    Denied,
}

impl Tag {
    /// `<kind>/<id>`, e.g. `proposal/12`.
    pub fn name(self, id: i64) -> String {
        let kind = match self {
            Self::Proposal => "proposal",
            Self::Approved => "approved",
            Self::Building => "building",
            Self::Deployed => "deployed",
            Self::Failed => "failed",
            Self::Denied => "denied",
        };
        format!("{kind}/{id}")
    }
}

/// The ref a proposal is fetched into before it is tagged.
pub fn incoming_ref(id: i64) -> String {
    format!("refs/hive/incoming/{id}")
}

/// The NixOS module of an agent's container in a config repo (nixos
/// profile), built on top of the hive's agent module.
pub const AGENT_NIX: &str = "agent.nix";

/// The files of a new config repo: `agent.json` from `config`, a README
/// documenting the format, and Claude Code's files; with `nixos` (the
/// nixos profile) also a working `agent.nix`.
pub fn template(agent: &Ident, config: &AgentConfig, nixos: bool) -> Vec<(String, Vec<u8>)> {
    let mut files = vec![
        (AGENT_JSON.to_owned(), config.to_text().into_bytes()),
        ("README.md".to_owned(), readme(agent, nixos).into_bytes()),
        (
            "CLAUDE.md".to_owned(),
            format!(
                "# {agent}\n\nYou are the hive agent `{agent}`. Your manager writes this file; \
                 it is installed in your working directory when a config is deployed.\n"
            )
            .into_bytes(),
        ),
        (".claude/settings.json".to_owned(), b"{}\n".to_vec()),
    ];
    if nixos {
        files.push((AGENT_NIX.to_owned(), agent_nix(agent).into_bytes()));
    }
    files
}

/// A NixOS module that builds as it is: the place for the agent's packages
/// and services.
fn agent_nix(agent: &Ident) -> String {
    format!(
        "# NixOS configuration of agent `{agent}`'s container, on top of the hive's agent\n\
# module (hive-agent with Claude Code). A NixOS module like any other; the hive\n\
# builds it when a commit is approved, and switches the container to it.\n\
{{ pkgs, ... }}:\n\
{{\n\
  # environment.systemPackages = [ pkgs.git pkgs.ripgrep ];\n\
}}\n"
    )
}

fn readme(agent: &Ident, nixos: bool) -> String {
    let nix = if nixos {
        "## agent.nix\n\n\
A NixOS module for the agent's container, on top of the hive's agent module \
(hive-agent with Claude Code): packages, services, users. When a commit is approved the \
hive exports its tree and builds the container's system with `nixos_build_command`, \
given the tree and the commit, then switches the container to it; a build that fails \
tags `failed/<id>` with the error and changes nothing. Nothing in the repo is built \
before the operator approves. A `flake.lock` anywhere in the tree must lock every input \
(a `narHash`, and a `rev` for git and forge inputs) and have no `path:` or `file:` \
input, or the proposal fails validation naming the input.\n\n"
            .to_owned()
    } else {
        String::new()
    };
    format!(
        "# Config of agent `{agent}`\n\n\
This repository is agent `{agent}`'s config. The manager commits here and asks the \
hive to apply a commit (`request_apply_commit`); the operator reviews it (`hivectl show \
ID`) and approves or denies it. A proposal must descend from the deployed `main` \
(`/hive/applied/{agent}.git`).\n\n\
## agent.json\n\n\
Strict: a key not listed here fails validation by name.\n\n\
- `model`: the Claude model (a string; absent: Claude Code's default)\n\
- `cpu_quota`: systemd `CPUQuota=` of the container, such as `\"200%\"`\n\
- `memory_max`: systemd `MemoryMax=`, bytes with an optional `K`, `M`, `G` or `T`, or \
`\"infinity\"`\n\
- `tasks_max`: systemd `TasksMax=`, the processes and threads the container may hold at \
once (a number, 1 or more; absent: the hive's `agent_tasks_max`)\n\
- `environment`: an object of environment variables for Claude Code (names of A-Z, a-z, \
0-9 and `_`, not starting with `{RESERVED_ENV_PREFIX}`)\n\
- `egress`: a list of `host[:port]` or `*.domain[:port]` patterns this agent may reach \
through the hive's egress proxy, beside the hive's own list and the operator's grants \
(no port: any port; `*.domain`: any name under it, not the domain itself)\n\n\
## Claude Code's files\n\n\
`CLAUDE.md` and `.claude/` (settings, agents, commands) are installed in the agent's \
working directory when the config is deployed.\n\n\
{nix}## Limits\n\n\
No submodules or gitlinks, no `.gitmodules`, no path with `..` or `.git`, no symlink \
pointing out of the tree; at most {MAX_ENTRIES} files, {MAX_FILE_BYTES} bytes per file, \
{MAX_TREE_BYTES} bytes in all.\n"
    )
}

#[cfg(test)]
#[path = "proposal_tests.rs"]
mod tests;
