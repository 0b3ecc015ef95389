//! Human output of hivectl: aligned tables and one-line row summaries.
//!
//! Pure functions from wire types to text, so every layout is unit-tested
//! without a socket. Free text from agents (status text, descriptions,
//! notes) is cleaned of control characters before it reaches the terminal:
//! an agent must not be able to move the operator's cursor or hide rows with
//! escape sequences. Rejected alternative: a table crate — the layouts are
//! four small tables, and `--json` serves every script.

use crate::clock::rfc3339;
use std::fmt::Write as _;

use crate::wire::agenda::{AgentGrants, WireQuestion, WireSchedule};
use crate::wire::agent::InboxRow;
use crate::wire::host::{AgentStatusRow, Approval, HiveUrls, HostRequest, HostResponse};
use crate::wire::ident::Ident;

/// Longest free text shown in a table cell; `--json` has the full value.
const MAX_CELL: usize = 80;

/// The stdout text for a successful answer to `request` (empty for write
/// verbs, which succeed silently like `systemctl`).
pub fn answer(request: &HostRequest, response: &HostResponse) -> String {
    match request {
        HostRequest::AgentStatus => status_table(response.agent_statuses.as_deref().unwrap_or(&[])),
        HostRequest::List => agent_list(response.agents.as_deref().unwrap_or(&[])),
        HostRequest::Pending => approvals_table(response.approvals.as_deref().unwrap_or(&[])),
        HostRequest::Urls => urls(&response.urls.clone().unwrap_or_default()),
        HostRequest::Logs { .. } | HostRequest::Journal(_) => {
            journal_lines(response.entries.as_deref().unwrap_or(&[]))
        }
        HostRequest::Questions => questions_table(response.questions.as_deref().unwrap_or(&[])),
        HostRequest::Schedules => schedules_table(response.schedules.as_deref().unwrap_or(&[])),
        HostRequest::Grants { .. } => grants_table(response.grants.as_deref().unwrap_or(&[])),
        HostRequest::Inbox { .. } => inbox_table(response.messages.as_deref().unwrap_or(&[])),
        HostRequest::SubscribeAgentStatus
        | HostRequest::SetPaused { .. }
        | HostRequest::Start { .. }
        | HostRequest::Stop { .. }
        | HostRequest::Restart { .. }
        | HostRequest::RestartAll
        | HostRequest::Spawn { .. }
        | HostRequest::RequestSpawn { .. }
        | HostRequest::Kill { .. }
        | HostRequest::Destroy { .. }
        | HostRequest::Rebuild { .. }
        | HostRequest::Approve { .. }
        | HostRequest::Deny { .. }
        | HostRequest::SetParent { .. }
        | HostRequest::Answer { .. }
        | HostRequest::CancelSchedule { .. }
        | HostRequest::Grant { .. }
        | HostRequest::Revoke { .. }
        | HostRequest::Send { .. } => String::new(),
    }
}

/// Journal entries as short text lines (control characters neutralised by
/// the journal module's renderer).
pub fn journal_lines(entries: &[crate::wire::journal::JournalEntry]) -> String {
    crate::wire::journal::render_short(entries)
}

/// The roster as a table.
pub fn status_table(rows: &[AgentStatusRow]) -> String {
    if rows.is_empty() {
        return "no managed agents\n".into();
    }
    let body = rows
        .iter()
        .map(|r| {
            vec![
                r.name.to_string(),
                yes_no(r.running),
                yes_no(r.failed),
                yes_no(r.paused),
                needs(r).unwrap_or_else(|| "-".into()),
                r.pending_reminders.to_string(),
                or_dash(r.parent.as_ref().map(Ident::as_str)),
                or_dash(r.active_model.as_deref()),
                or_dash(r.status_text.as_deref()),
            ]
        })
        .collect::<Vec<_>>();
    table(
        &[
            "NAME",
            "RUNNING",
            "FAILED",
            "PAUSED",
            "NEEDS",
            "REMINDERS",
            "PARENT",
            "MODEL",
            "STATUS",
        ],
        &body,
    )
}

/// One name per line.
pub fn agent_list(names: &[Ident]) -> String {
    names.iter().fold(String::new(), |mut out, n| {
        let _ = writeln!(out, "{n}");
        out
    })
}

/// The approval queue as a table.
pub fn approvals_table(rows: &[Approval]) -> String {
    if rows.is_empty() {
        return "no approvals\n".into();
    }
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
    table(
        &[
            "ID",
            "AGENT",
            "KIND",
            "STATUS",
            "REQUESTED",
            "REF",
            "DETAIL",
        ],
        &body,
    )
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
            vec![
                clean(&g.name),
                or_dash(Some(&caps.join(","))),
                or_dash(Some(&groups.join(","))),
            ]
        })
        .collect::<Vec<_>>();
    table(&["NAME", "CAPABILITIES", "TOOL GROUPS"], &body)
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

/// One changed row for `watch`: a readable sentence-like line.
pub fn status_line(row: &AgentStatusRow) -> String {
    let mut parts = vec![if row.running { "running" } else { "stopped" }.to_owned()];
    if row.failed {
        parts.push("failed".into());
    }
    if row.paused {
        parts.push("paused".into());
    }
    if let Some(needs) = needs(row) {
        parts.push(format!("needs {}", needs.replace(',', " and ")));
    }
    if row.pending_reminders > 0 {
        parts.push(format!("{} reminders", row.pending_reminders));
    }
    if let Some(parent) = &row.parent {
        parts.push(format!("parent {parent}"));
    }
    if let Some(model) = &row.active_model {
        parts.push(format!("model {}", clean(model)));
    }
    let mut line = format!("{}: {}", row.name, parts.join(", "));
    if let Some(text) = &row.status_text {
        let _ = write!(line, " — {:?}", clean(text));
        if let Some(at) = &row.status_set_at {
            let _ = write!(line, " since {}", clean(at));
        }
    }
    line.push('\n');
    line
}

/// `update`, `login`, `update,login` or nothing.
fn needs(row: &AgentStatusRow) -> Option<String> {
    let needs: Vec<&str> = [(row.needs_update, "update"), (row.needs_login, "login")]
        .into_iter()
        .filter_map(|(flag, what)| flag.then_some(what))
        .collect();
    (!needs.is_empty()).then(|| needs.join(","))
}

fn yes_no(flag: bool) -> String {
    if flag { "yes" } else { "no" }.into()
}

/// A cleaned, shortened cell; `-` when absent or empty.
fn or_dash(value: Option<&str>) -> String {
    match value.map(clean) {
        Some(v) if !v.is_empty() => shorten(&v),
        _ => "-".into(),
    }
}

/// Control characters (newlines, tabs, ESC, DEL, C1) become spaces.
pub fn clean(text: &str) -> String {
    text.chars()
        .map(|c| if c.is_control() { ' ' } else { c })
        .collect()
}

fn shorten(text: &str) -> String {
    if text.chars().count() <= MAX_CELL {
        return text.to_owned();
    }
    let mut out: String = text.chars().take(MAX_CELL - 1).collect();
    out.push('…');
    out
}

/// Columns separated by two spaces, each as wide as its widest cell; the
/// last column is not padded (no trailing blanks). No header when `headers`
/// is empty.
fn table(headers: &[&str], rows: &[Vec<String>]) -> String {
    let header: Vec<String> = headers.iter().map(|h| (*h).to_owned()).collect();
    let all: Vec<&Vec<String>> = (!header.is_empty())
        .then_some(&header)
        .into_iter()
        .chain(rows)
        .collect();
    let columns = all.iter().map(|r| r.len()).max().unwrap_or(0);
    let widths: Vec<usize> = (0..columns)
        .map(|c| {
            all.iter()
                .filter_map(|r| r.get(c))
                .map(|cell| cell.chars().count())
                .max()
                .unwrap_or(0)
        })
        .collect();
    let mut out = String::new();
    for row in all {
        let mut line = String::new();
        for (c, cell) in row.iter().enumerate() {
            if c + 1 == row.len() {
                line.push_str(cell);
            } else {
                let pad = widths[c] - cell.chars().count();
                let _ = write!(line, "{cell}{:pad$}  ", "");
            }
        }
        out.push_str(line.trim_end());
        out.push('\n');
    }
    out
}

#[cfg(test)]
#[path = "render_tests.rs"]
mod tests;
