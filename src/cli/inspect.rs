//! `hivectl inspect NAME`: one agent's facts as aligned `key: value`
//! sections (as `incus info` prints an instance), blank lines between
//! them. Every value an agent could have written (status text, session
//! message, model names) is cleaned of control characters; `--json`
//! prints the answer's line unchanged.

use std::fmt::Write as _;

use super::roster::{session, state};
use super::table::{clean, table};
use super::usage::dollars;
use crate::wire::inspect::AgentInspect;

/// The sections of `facts`.
pub fn inspect(facts: &AgentInspect) -> String {
    let mut sections: Vec<(&str, Vec<(&str, String)>)> = Vec::new();
    let mut agent = vec![("name", facts.name.to_string())];
    if let Some(row) = &facts.status {
        agent.push(("state", state(row)));
        agent.push(("session", session(row).unwrap_or_else(|| "-".into())));
        if let Some(parent) = &row.parent {
            agent.push(("parent", parent.to_string()));
        }
        if let Some(since) = &row.running_since {
            agent.push(("running since", clean(since)));
        }
        if let Some(text) = &row.status_text {
            agent.push(("status", clean(text)));
        }
        agent.push(("needs update", yes_no(row.needs_update)));
    }
    sections.push(("agent", agent));

    let c = &facts.config;
    let mut config = vec![
        ("deployed sha", dash(c.deployed_sha.as_deref())),
        ("model", dash(c.model.as_deref())),
    ];
    if let Some(active) = facts
        .status
        .as_ref()
        .and_then(|r| r.active_model.as_deref())
    {
        config.push(("last model", clean(active)));
    }
    sections.push(("config", config));

    let l = &facts.limits;
    let none = || "none".to_owned();
    let mut limits = vec![
        (
            "memory max",
            l.memory_max.as_deref().map_or_else(none, clean),
        ),
        ("cpu quota", l.cpu_quota.as_deref().map_or_else(none, clean)),
        (
            "tasks max",
            l.tasks_max.map_or_else(none, |t| t.to_string()),
        ),
        ("inotify instances", l.inotify_instances.to_string()),
        ("inotify watches", l.inotify_watches.to_string()),
        ("disk quota", l.disk_quota_bytes.map_or_else(none, bytes)),
    ];
    if let Some(inodes) = l.disk_inodes {
        limits.push(("disk inodes", inodes.to_string()));
    }
    limits.push(("disk quota required", yes_no(l.disk_quota_required)));
    sections.push(("limits", limits));

    let joined = |names: Vec<&str>| {
        if names.is_empty() {
            "none".to_owned()
        } else {
            names.join(", ")
        }
    };
    sections.push((
        "grants",
        vec![
            (
                "capabilities",
                joined(facts.capabilities.iter().map(|c| c.as_str()).collect()),
            ),
            (
                "tool groups",
                joined(facts.tool_groups.iter().map(|t| t.as_str()).collect()),
            ),
        ],
    ));

    let row = facts.status.as_ref();
    let spent = row
        .and_then(|r| r.spent_today_micro_usd)
        .map_or_else(|| dollars(0), dollars);
    let budget = row.and_then(|r| r.budget.as_deref()).map_or_else(
        || "not reached".into(),
        |b| format!("reached: {}", clean(b)),
    );
    sections.push(("spend", vec![("spent today", spent), ("budget", budget)]));

    sections.push((
        "waiting",
        vec![
            ("inbox", facts.inbox.waiting.to_string()),
            ("in flight", facts.inbox.in_flight.to_string()),
            ("approvals", facts.pending_approvals.to_string()),
            ("questions asked", facts.questions_asked.to_string()),
            ("questions to answer", facts.questions_to_answer.to_string()),
        ],
    ));

    let mut out = String::new();
    for (title, rows) in &sections {
        section(&mut out, title, rows);
    }
    out.push_str("egress:\n");
    let egress: Vec<Vec<String>> = facts
        .egress
        .iter()
        .map(|e| {
            let until = e
                .expires_at
                .as_deref()
                .map_or_else(String::new, |t| format!("until {}", clean(t)));
            vec![
                format!("  {}", e.pattern),
                e.source.as_str().to_owned(),
                until,
            ]
        })
        .collect();
    if egress.is_empty() {
        // The default since the model gateway (issue 46): no host at all.
        out.push_str("  none");
    } else {
        out.push_str(&trim_lines(&table(&[], &egress)));
    }
    out.push_str("\nturns:\n");
    if facts.turns.is_empty() {
        out.push_str("  none\n");
    }
    let turns: Vec<Vec<String>> = facts
        .turns
        .iter()
        .map(|t| {
            vec![
                format!("  {}", t.id),
                clean(&t.ended_at),
                t.outcome.as_str().to_owned(),
                dash(t.model.as_deref()),
                t.cost_micro_usd.map_or_else(|| "-".into(), dollars),
            ]
        })
        .collect();
    out.push_str(&table(&[], &turns));
    out
}

/// One section: its title, then `  key: value` lines with the values
/// aligned, then a blank line.
fn section(out: &mut String, title: &str, rows: &[(&str, String)]) {
    let width = rows.iter().map(|(k, _)| k.len()).max().unwrap_or(0);
    let _ = writeln!(out, "{title}:");
    for (key, value) in rows {
        let _ = writeln!(
            out,
            "  {:<width$}  {value}",
            format!("{key}:"),
            width = width + 1
        );
    }
    out.push('\n');
}

/// A table's lines without the blanks an empty last column leaves.
fn trim_lines(text: &str) -> String {
    text.lines()
        .map(|l| format!("{}\n", l.trim_end()))
        .collect()
}

fn dash(value: Option<&str>) -> String {
    value.map_or_else(|| "-".into(), clean)
}

fn yes_no(flag: bool) -> String {
    if flag { "yes" } else { "no" }.into()
}

/// Bytes as the config writes them: a whole number of G, M or K when it
/// is one, bytes otherwise.
fn bytes(n: u64) -> String {
    for (unit, size) in [
        ("T", 1u64 << 40),
        ("G", 1 << 30),
        ("M", 1 << 20),
        ("K", 1 << 10),
    ] {
        if n >= size && n.is_multiple_of(size) {
            return format!("{}{unit}", n / size);
        }
    }
    n.to_string()
}

#[cfg(test)]
#[path = "inspect_tests.rs"]
mod tests;
