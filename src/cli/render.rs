//! Human output of hivectl: aligned tables and one-line row summaries.
//!
//! Pure functions from wire types to text, so every layout is unit-tested
//! without a socket. Free text from agents (status text, descriptions,
//! notes) is cleaned of control characters before it reaches the terminal:
//! an agent must not be able to move the operator's cursor or hide rows with
//! escape sequences. Rejected alternative: a table crate — the layouts are
//! four small tables, and `--json` serves every script. The roster's
//! words (STATE, uptime, the status tables) are [`super::roster`].

use crate::clock::rfc3339;
use std::fmt::Write as _;

use super::args::JournalFormat;
use super::roster::{status_table, swarm_status_table};
use super::table::{Style, clean, or_dash, table};
use crate::wire::host::ApprovalStatus;
use crate::wire::journal::JournalEntry;

use super::budget;
use super::usage::{turns_table, usage_table};
use crate::wire::agenda::{AgentGrants, WireQuestion, WireSchedule};
use crate::wire::agent::InboxRow;
use crate::wire::host::{Approval, HiveUrls, HostRequest, HostResponse, Review};
use crate::wire::ident::Ident;
use crate::wire::turns::UsageBy;

/// The stdout text for a successful answer to `request`: a table, or the
/// line saying what a write verb did.
pub fn answer(request: &HostRequest, response: &HostResponse, style: &Style) -> String {
    // A note says what the verb did where its usual line would not.
    if let Some(note) = &response.note {
        return clean(note) + "\n";
    }
    match request {
        HostRequest::AgentStatus => {
            status_table(response.agent_statuses.as_deref().unwrap_or(&[]), style)
        }
        HostRequest::List => agent_list(response.agents.as_deref().unwrap_or(&[])),
        HostRequest::Pending => {
            approvals_table(response.approvals.as_deref().unwrap_or(&[]), style)
        }
        HostRequest::Urls => urls(&response.urls.clone().unwrap_or_default()),
        HostRequest::SwarmStatus => {
            let rows = response.swarm_statuses.as_deref().unwrap_or(&[]);
            swarm_status_table(rows, response.bus_error.as_ref(), style)
        }
        HostRequest::Logs { .. } | HostRequest::Journal { .. } => {
            journal(response.entries.as_deref().unwrap_or(&[]), style.journal)
        }
        HostRequest::Questions => questions_table(response.questions.as_deref().unwrap_or(&[])),
        HostRequest::Schedules => schedules_table(response.schedules.as_deref().unwrap_or(&[])),
        HostRequest::Grants { .. } => grants_table(response.grants.as_deref().unwrap_or(&[])),
        HostRequest::Inbox { id: Some(id), .. } => {
            inbox_message(response.messages.as_deref().unwrap_or(&[]), *id)
        }
        HostRequest::Inbox { id: None, .. } => {
            inbox_table(response.messages.as_deref().unwrap_or(&[]))
        }
        HostRequest::Turns { .. } => turns_table(response.turns.as_deref().unwrap_or(&[])),
        HostRequest::EgressLog { .. } => {
            super::egress_log::table_of(response.egress_log.as_deref().unwrap_or(&[]))
        }
        HostRequest::ModelLog { .. } => {
            super::model_log::table_of(response.model_log.as_deref().unwrap_or(&[]))
        }
        HostRequest::Images => super::image::table_of(response.images.as_deref().unwrap_or(&[])),
        HostRequest::PruneImages { dry_run } => {
            super::image::pruned(response.pruned.as_deref().unwrap_or(&[]), *dry_run)
        }
        HostRequest::Usage { by, .. } => usage_table(
            response.usage.as_deref().unwrap_or(&[]),
            by.as_str(),
            *by == UsageBy::Subtree,
        ),
        HostRequest::Show { .. } => response.review.as_ref().map(review).unwrap_or_default(),
        HostRequest::Budgets => {
            super::usage::budgets_table(response.budgets.as_deref().unwrap_or(&[]))
        }
        HostRequest::SetBudget { .. } | HostRequest::UnsetBudget { .. } => budget::done(request),
        HostRequest::InspectAgent { .. } => response
            .inspect
            .as_deref()
            .map(super::inspect::inspect)
            .unwrap_or_default(),
        HostRequest::Version => response
            .daemon
            .as_ref()
            .map(super::version::daemon_line)
            .unwrap_or_default(),
        HostRequest::SubscribeAgentStatus
        | HostRequest::Start { .. }
        | HostRequest::Stop { .. }
        | HostRequest::Restart { .. }
        | HostRequest::Spawn { .. } => String::new(),
        HostRequest::SetPaused { .. }
        | HostRequest::RestartAll
        | HostRequest::RequestSpawn { .. }
        | HostRequest::Kill { .. }
        | HostRequest::Destroy { .. }
        | HostRequest::Rebuild { .. }
        | HostRequest::Approve { .. }
        | HostRequest::Deny { .. }
        | HostRequest::Rollback { .. }
        | HostRequest::SetParent { .. }
        | HostRequest::Answer { .. }
        | HostRequest::CancelSchedule { .. }
        | HostRequest::Grant { .. }
        | HostRequest::Revoke { .. }
        | HostRequest::Send { .. }
        | HostRequest::Signal { .. }
        | HostRequest::Interrupt { .. } => done(request),
    }
}

/// What a write verb did, one line (its answer carries nothing more).
/// `request_spawn` is completed by the caller with the approval's id.
pub fn done(request: &HostRequest) -> String {
    let line = match request {
        HostRequest::SetPaused { name, paused: true } => format!("{name}: paused"),
        HostRequest::SetPaused {
            name,
            paused: false,
        } => format!("{name}: resumed"),
        HostRequest::RestartAll => "every running agent restarted".into(),
        HostRequest::RequestSpawn { name } => format!("spawn of {name} queued for approval"),
        HostRequest::Kill { name } => format!("{name}: stopped"),
        HostRequest::Signal { name, signal } => format!("{name}: sent SIG{}", signal.name()),
        HostRequest::Destroy { name, purge: false } => {
            format!("{name}: destroyed (state kept; `destroy --purge {name}` deletes it)")
        }
        HostRequest::Destroy { name, purge: true } => format!("{name}: destroyed and purged"),
        HostRequest::Rebuild { name } => format!("{name}: rebuilt"),
        HostRequest::Interrupt { name, note: None } => format!("{name}: turn interrupted"),
        HostRequest::Interrupt {
            name,
            note: Some(_),
        } => {
            format!("{name}: turn interrupted; the note is its next message")
        }
        HostRequest::Approve { id, .. } => format!("approval {id}: approved"),
        HostRequest::Deny { id, .. } => format!("approval {id}: denied"),
        HostRequest::Rollback { name, id } => format!("{name}: rolled back to deployed/{id}"),
        HostRequest::SetParent {
            child,
            new_parent: Some(parent),
        } => format!("{child}: now under {parent}"),
        HostRequest::SetParent {
            child,
            new_parent: None,
        } => format!("{child}: now a root agent"),
        HostRequest::Answer { id, .. } => format!("question {id}: answered"),
        HostRequest::CancelSchedule { id, targets: None } => format!("schedule {id}: cancelled"),
        HostRequest::CancelSchedule {
            id,
            targets: Some(t),
        } => format!("schedule {id}: cancelled for {}", clean(&t.join(", "))),
        HostRequest::Grant { name, .. } => format!("{name}: granted"),
        HostRequest::Revoke { name, .. } => format!("{name}: revoked"),
        HostRequest::Send { to, .. } => format!("sent to {to}"),
        _ => return String::new(),
    };
    line + "\n"
}

/// An approval and its proposal's diff (`show`), every field cleaned of
/// control characters.
pub fn review(r: &Review) -> String {
    let a = &r.approval;
    let mut out = format!(
        "approval {}  {}  {}  {}",
        a.id,
        a.agent,
        a.kind.as_str(),
        a.status.as_str()
    );
    if let Some(sha) = &a.fetched_sha {
        let _ = write!(out, "  {}", clean(sha));
    }
    out.push('\n');
    for (label, value) in [("description", &a.description), ("note", &a.note)] {
        if let Some(v) = value {
            let _ = writeln!(out, "{label}: {}", clean(v));
        }
    }
    for flag in &r.flagged {
        let _ = writeln!(out, "flagged: {}", clean(flag));
    }
    if !r.stat.is_empty() || !r.patch.is_empty() {
        let _ = write!(out, "\n{}\n{}", r.stat, r.patch);
        if !r.patch.ends_with('\n') && !r.patch.is_empty() {
            out.push('\n');
        }
    }
    if r.truncated {
        out.push_str("(the patch is cut here: it is longer than the hive shows)\n");
    }
    out
}

/// Journal entries in the `-o` format (control characters neutralised).
pub fn journal(entries: &[JournalEntry], format: JournalFormat) -> String {
    match format {
        // As journalctl says it; `cat` and `json` stay empty for scripts.
        JournalFormat::Short if entries.is_empty() => "-- No entries --\n".into(),
        JournalFormat::Short => crate::wire::journal::render_short(entries),
        JournalFormat::Cat => entries.iter().fold(String::new(), |mut out, e| {
            let _ = writeln!(out, "{}", clean(&e.message));
            out
        }),
        JournalFormat::Json => entries.iter().fold(String::new(), |mut out, e| {
            if let Ok(line) = serde_json::to_string(e) {
                let _ = writeln!(out, "{line}");
            }
            out
        }),
    }
}

/// One name per line.
pub fn agent_list(names: &[Ident]) -> String {
    names.iter().fold(String::new(), |mut out, n| {
        let _ = writeln!(out, "{n}");
        out
    })
}

/// The approval queue as a table: pending rows, or every row with
/// `--all`.
pub fn approvals_table(rows: &[Approval], style: &Style) -> String {
    let rows: Vec<&Approval> = rows
        .iter()
        .filter(|a| style.history || a.status == ApprovalStatus::Pending)
        .collect();
    if style.view.quiet {
        return rows.iter().map(|a| format!("{}\n", a.id)).collect();
    }
    if rows.is_empty() {
        return match (style.view.no_legend, style.history) {
            (true, _) => String::new(),
            (false, true) => "no approvals\n".into(),
            (false, false) => {
                "no pending approvals (`hivectl pending --all` shows the history)\n".into()
            }
        };
    }
    let headers: &[&str] = if style.view.no_legend {
        &[]
    } else {
        &[
            "ID",
            "AGENT",
            "KIND",
            "STATUS",
            "REQUESTED",
            "REF",
            "DETAIL",
        ]
    };
    let body = rows
        .iter()
        .map(|a| {
            let detail = match (&a.description, &a.note) {
                (Some(d), Some(n)) => format!("{d} (note: {n})"),
                (Some(d), None) => d.clone(),
                (None, Some(n)) => format!("note: {n}"),
                (None, None) => String::new(),
            };
            vec![
                a.id.to_string(),
                a.agent.to_string(),
                a.kind.as_str().to_owned(),
                a.status.as_str().to_owned(),
                rfc3339(a.requested_at),
                or_dash(Some(&a.commit_ref)),
                or_dash(Some(&detail)),
            ]
        })
        .collect::<Vec<_>>();
    table(headers, &body)
}

/// Open questions as a table.
pub fn questions_table(rows: &[WireQuestion]) -> String {
    if rows.is_empty() {
        return "no open questions\n".into();
    }
    let body = rows
        .iter()
        .map(|q| {
            let expires = q.expires_at.map(rfc3339);
            vec![
                q.id.to_string(),
                clean(&q.asker),
                or_dash(Some(q.target.as_deref().unwrap_or("operator"))),
                rfc3339(q.asked_at),
                or_dash(expires.as_deref()),
                or_dash(Some(&q.options.join(if q.multi { " + " } else { " | " }))),
                or_dash(Some(&q.question)),
            ]
        })
        .collect::<Vec<_>>();
    table(
        &[
            "ID", "ASKER", "TO", "ASKED", "EXPIRES", "OPTIONS", "QUESTION",
        ],
        &body,
    )
}

/// Scheduled prompts as a table.
pub fn schedules_table(rows: &[WireSchedule]) -> String {
    if rows.is_empty() {
        return "no schedules\n".into();
    }
    let body = rows
        .iter()
        .map(|s| {
            let targets: Vec<String> = s
                .targets
                .iter()
                .map(|t| match t.cancelled_at_unix {
                    Some(_) => format!("{} (cancelled)", t.target),
                    None => t.target.clone(),
                })
                .collect();
            let state = match s.cancelled_at_unix {
                Some(at) => format!("ended {}", rfc3339(at)),
                None => format!("next {}", rfc3339(s.next_fire_at_unix)),
            };
            vec![
                s.id.to_string(),
                state,
                s.interval_seconds
                    .map_or_else(|| "once".to_owned(), |i| format!("every {i} s")),
                or_dash(Some(&targets.join(", "))),
                or_dash(s.description.as_deref()),
                or_dash(Some(&s.body)),
            ]
        })
        .collect::<Vec<_>>();
    table(
        &["ID", "STATE", "REPEAT", "TARGETS", "DESCRIPTION", "BODY"],
        &body,
    )
}

/// Grants as a table.
pub fn grants_table(rows: &[AgentGrants]) -> String {
    if rows.is_empty() {
        return "no managed agents\n".into();
    }
    let body = rows
        .iter()
        .map(|g| {
            let caps: Vec<&str> = g.capabilities.iter().map(|c| c.as_str()).collect();
            let groups: Vec<&str> = g.tool_groups.iter().map(|t| t.as_str()).collect();
            let egress: Vec<String> = g
                .egress
                .iter()
                .map(|e| match e.expires_at {
                    Some(t) => format!("{} (until {})", e.pattern, rfc3339(t)),
                    None => e.pattern.to_string(),
                })
                .collect();
            vec![
                clean(&g.name),
                or_dash(Some(&caps.join(","))),
                or_dash(Some(&groups.join(","))),
                or_dash(Some(&egress.join(","))),
            ]
        })
        .collect::<Vec<_>>();
    table(&["NAME", "CAPABILITIES", "TOOL GROUPS", "EGRESS"], &body)
}

/// The operator's inbox as a table, newest first. Bodies are cleaned and
/// shortened like every agent-written cell; `--json` has them whole.
pub fn inbox_table(rows: &[InboxRow]) -> String {
    if rows.is_empty() {
        return "no messages\n".into();
    }
    let body = rows
        .iter()
        .map(|m| {
            vec![
                m.id.to_string(),
                rfc3339(m.at),
                or_dash(Some(&m.from)),
                m.in_reply_to
                    .map_or_else(|| "-".into(), |id| id.to_string()),
                or_dash(Some(&m.body)),
            ]
        })
        .collect::<Vec<_>>();
    table(&["ID", "AT", "FROM", "REPLY-TO", "BODY"], &body)
}

/// Message `id` of the answer, whole: `key: value` lines, a blank line,
/// then the body. Each line of the body is cleaned of control characters
/// (an agent's text must not move the operator's cursor); its line breaks
/// stay.
pub fn inbox_message(rows: &[InboxRow], id: i64) -> String {
    let Some(m) = rows.iter().find(|m| m.id == id) else {
        return String::new();
    };
    let mut out = format!(
        "id:        {}\nfrom:      {}\nat:        {}\n",
        m.id,
        clean(&m.from),
        rfc3339(m.at)
    );
    if let Some(to) = m.in_reply_to {
        out.push_str(&format!("reply to:  {to}\n"));
    }
    out.push('\n');
    for line in m.body.lines() {
        out.push_str(&clean(line));
        out.push('\n');
    }
    out
}

/// The hive's URLs, one `key  value` line each.
pub fn urls(urls: &HiveUrls) -> String {
    let body = [
        ("domain", &urls.domain),
        ("home", &urls.home),
        ("forge", &urls.forge),
        ("matrix", &urls.matrix),
    ]
    .into_iter()
    .filter_map(|(key, value)| Some(vec![key.to_owned(), clean(value.as_deref()?)]))
    .collect::<Vec<_>>();
    if body.is_empty() {
        return "no domain or URLs configured\n".into();
    }
    table(&[], &body)
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
