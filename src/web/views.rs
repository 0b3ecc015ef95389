//! The dashboard's HTML, as maud templates: every `(value)` is escaped by
//! the compiler-generated code, so no text an agent or operator typed can
//! become markup. Pages are plain forms and tables; `dashboard.js` adds the
//! live streams and the confirmations.
//!
//! A roster row is rendered by [`roster_row`] both in the page and in the
//! live stream, so an update looks exactly like a reload. Row fields this
//! dashboard does not know (added to the wire later, e.g. by the hook
//! "attention" states) are shown as `key: value` tags, not dropped.

use std::collections::HashMap;

use maud::{DOCTYPE, Markup, html};

use crate::wire::agenda::{AgentGrants, WireQuestion, WireSchedule};
use crate::wire::agent::InboxRow;
use crate::wire::host::{AgentStatusRow, Approval, ApprovalKind, ApprovalStatus, Review};
use crate::wire::journal::utc_timestamp;

/// The lengths an egress request's grant may be given on the approvals
/// page (seconds, label); the empty value grants until revoked.
const GRANT_FOR: &[(&str, &str)] = &[
    ("", "until revoked"),
    ("3600", "for 1 hour"),
    ("28800", "for 8 hours"),
    ("86400", "for 1 day"),
    ("604800", "for 7 days"),
];

/// The row keys rendered in their own columns; any other key with a value
/// goes to the attention column.
const KNOWN_ROW_KEYS: &[&str] = &[
    "name",
    "running",
    "failed",
    "crashed",
    "paused",
    "parent",
    "active_model",
    "status_text",
    "status_set_at",
    "pending_reminders",
    "url",
    "deployed_sha",
    "session_state",
    "session_message",
    "session_since",
    "budget",
    "spent_today_micro_usd",
    "transition",
];

/// Which page a layout highlights in its navigation.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Nav {
    Roster,
    Approvals,
    Inbox,
    Questions,
    Swarm,
    Usage,
    Agent,
}

/// Unix seconds as `YYYY-MM-DDTHH:MM:SSZ`.
pub fn at(unix: i64) -> String {
    utc_timestamp(u64::try_from(unix).unwrap_or(0).saturating_mul(1_000_000))
}

/// The page frame: navigation, the stylesheet, the one script.
pub fn layout(title: &str, nav: Nav, body: Markup) -> Markup {
    let link = |to: Nav, href: &str, label: &str| {
        html! {
            @if to == nav { a href=(href) aria-current="page" { (label) } }
            @else { a href=(href) { (label) } }
        }
    };
    html! {
        (DOCTYPE)
        html lang="en" {
            head {
                meta charset="utf-8";
                meta name="viewport" content="width=device-width, initial-scale=1";
                title { (title) " · hive" }
                link rel="stylesheet" href="/static/dashboard.css";
                script src="/static/dashboard.js" defer {}
            }
            body {
                header {
                    nav {
                        strong { "hive" }
                        (link(Nav::Roster, "/", "Roster"))
                        (link(Nav::Approvals, "/approvals", "Approvals"))
                        (link(Nav::Inbox, "/inbox", "Inbox"))
                        (link(Nav::Questions, "/questions", "Questions"))
                        (link(Nav::Swarm, "/swarm", "Swarm"))
                        (link(Nav::Usage, "/usage", "Usage"))
                    }
                }
                main { h1 { (title) } (body) }
            }
        }
    }
}

/// A refused or failed action: the hive's own words, and a way back.
pub fn refusal(message: &str) -> Markup {
    layout(
        "Not done",
        Nav::Roster,
        html! {
            p.error role="alert" { (message) }
            p { a href="/" { "Back to the roster" } }
        },
    )
}

/// The hidden token field every form carries.
pub fn token(csrf: &str) -> Markup {
    html! { input type="hidden" name="csrf" value=(csrf); }
}

fn state(row: &AgentStatusRow) -> (&'static str, &'static str) {
    if row.crashed && !row.running {
        ("crashed", "bad")
    } else if row.failed {
        ("failed", "bad")
    } else if row.running {
        ("running", "ok")
    } else if let Some(t) = row.transition {
        (t.as_str(), "changing")
    } else {
        ("stopped", "off")
    }
}

/// Tags for what wants the operator: flags, and any row field this build
/// does not render in a column of its own.
fn attention(row: &AgentStatusRow) -> Vec<String> {
    let mut tags = Vec::new();
    let Ok(serde_json::Value::Object(map)) = serde_json::to_value(row) else {
        return tags;
    };
    for (key, value) in map {
        if KNOWN_ROW_KEYS.contains(&key.as_str()) {
            continue;
        }
        match value {
            serde_json::Value::Null | serde_json::Value::Bool(false) => {}
            serde_json::Value::Bool(true) => tags.push(key.replace('_', " ")),
            serde_json::Value::String(s) if s.is_empty() => {}
            serde_json::Value::String(s) => tags.push(format!("{}: {s}", key.replace('_', " "))),
            other => tags.push(format!("{}: {other}", key.replace('_', " "))),
        }
    }
    tags
}

/// The one form every row's buttons submit (`form="row-actions"`), holding
/// the token once per page instead of once per row; `back` is where an
/// action returns.
pub fn row_actions(csrf: &str, back: &str) -> Markup {
    html! {
        form #row-actions method="post" action=(back) {
            (token(csrf))
            input type="hidden" name="back" value=(back);
        }
    }
}

/// A row's state cell: `running`, `stopped`, `failed`, and `paused`.
pub fn state_cell(row: &AgentStatusRow) -> Markup {
    let (label, class) = state(row);
    html! {
        td { span class={ "state " (class) } { (label) } @if row.paused { " " span.state.paused { "paused" } } }
    }
}

/// A row's attention cell: the session state its hooks report (`needs
/// you: …` highlighted), a budget that holds it, then flags and fields
/// without a column.
pub fn attention_cell(row: &AgentStatusRow) -> Markup {
    html! {
        td.attention {
            @if let Some(session) = row.session_state {
                span class={ "tag session" @if session.needs_person() { " needs" } }
                    title=[row.session_since.as_ref().map(|t| format!("since {t}"))] {
                    (session.words())
                    @if let Some(m) = row.session_message.as_deref().filter(|m| !m.trim().is_empty()) { ": " (m.trim()) }
                }
                " "
            }
            @if let Some(budget) = &row.budget {
                span.tag.session.needs { "paused: budget reached (" (budget) ")" } " "
            }
            @for tag in attention(row) { span.tag { (tag) } " " }
        }
    }
}

/// A row's status text and when it was set.
pub fn status_cell(row: &AgentStatusRow) -> Markup {
    html! {
        td.status {
            @if let Some(text) = &row.status_text { span { (text) } }
            @if let Some(when) = &row.status_set_at { " " small { (when) } }
        }
    }
}

/// The summary's live counts over `rows` (kept current by dashboard.js).
pub fn counts(rows: &[&AgentStatusRow]) -> Markup {
    let running = rows.iter().filter(|r| r.running).count();
    let waiting = rows.iter().filter(|r| r.needs_person()).count();
    html! {
        span #count-agents { (rows.len()) } " agents, "
        span #count-running { (running) } " running, "
        span #count-waiting { (waiting) } " waiting on you · "
    }
}

/// One roster row (page and live stream alike); `depth` indents it under
/// its parent. Its buttons belong to the page's [`row_actions`] form, so a
/// row carries no token and the stream can send the same row to every page.
pub fn roster_row(row: &AgentStatusRow, depth: usize) -> Markup {
    let name = row.name.as_str();
    let act = |verb: &str| format!("/agent/{name}/{verb}");
    html! {
        tr id={ "row-" (name) } class={ "depth-" (depth.min(6)) } data-parent=[row.parent.as_ref()] {
            td.name { a href={ "/agent/" (name) } { (name) } }
            (state_cell(row))
            (attention_cell(row))
            td { @if let Some(p) = &row.parent { a href={ "/agent/" (p) } { (p) } } }
            (status_cell(row))
            td { @if let Some(m) = &row.active_model { (m) } }
            td.num.today { (row.spent_today_micro_usd.map_or_else(|| "-".to_owned(), crate::wire::spend::dollars)) }
            td.num { (row.pending_reminders) }
            td.actions {
                @if row.running {
                    button form="row-actions" formaction=(act("stop")) data-confirm={ "Stop " (name) "?" } { "stop" }
                    button form="row-actions" formaction=(act("restart")) data-confirm={ "Restart " (name) "?" } { "restart" }
                } @else {
                    button form="row-actions" formaction=(act("start")) { "start" }
                }
                @if row.paused {
                    button form="row-actions" formaction=(act("resume")) { "resume" }
                } @else {
                    button form="row-actions" formaction=(act("pause")) { "pause" }
                }
            }
        }
    }
}

/// Rows in tree order (each parent followed by its children), with depths.
/// Rows whose parent is not in the roster are roots.
pub fn tree_order(rows: &[AgentStatusRow]) -> Vec<(usize, &AgentStatusRow)> {
    let present: std::collections::HashSet<&str> = rows.iter().map(|r| r.name.as_str()).collect();
    let mut children: HashMap<&str, Vec<&AgentStatusRow>> = HashMap::new();
    let mut roots = Vec::new();
    for row in rows {
        match row.parent.as_ref().map(|p| p.as_str()) {
            Some(p) if present.contains(p) && p != row.name.as_str() => {
                children.entry(p).or_default().push(row)
            }
            _ => roots.push(row),
        }
    }
    let mut out = Vec::with_capacity(rows.len());
    let mut stack: Vec<(usize, &AgentStatusRow)> =
        roots.into_iter().rev().map(|r| (0, r)).collect();
    while let Some((depth, row)) = stack.pop() {
        out.push((depth, row));
        if out.len() > rows.len() {
            break; // a cycle cannot happen (topology refuses it); never loop
        }
        if let Some(kids) = children.remove(row.name.as_str()) {
            stack.extend(kids.into_iter().rev().map(|k| (depth + 1, k)));
        }
    }
    out
}

/// The roster table (its body is what the live stream updates).
pub fn roster_table(rows: &[AgentStatusRow], csrf: &str) -> Markup {
    html! {
        (row_actions(csrf, "/"))
        table #roster.rows data-live="/events/roster" data-append {
            thead { tr {
                th scope="col" { "agent" } th scope="col" { "state" } th scope="col" { "attention" }
                th scope="col" { "parent" } th scope="col" { "status" } th scope="col" { "model" }
                th scope="col" title="what its metered model requests cost since 00:00 UTC" { "today" }
                th scope="col" title="pending reminders" { "rem." } th scope="col" { "actions" }
            } }
            tbody { @for (depth, row) in tree_order(rows) { (roster_row(row, depth)) } }
        }
    }
}

/// The roster page.
pub fn roster_page(rows: &[AgentStatusRow], csrf: &str) -> Markup {
    layout(
        "Roster",
        Nav::Roster,
        html! {
            p.summary {
                (counts(&rows.iter().collect::<Vec<_>>()))
                span #live role="status" { "not live (needs JavaScript)" }
            }
            form.inline method="post" action="/spawn" {
                (token(csrf))
                label for="spawn-name" { "New agent" }
                input #spawn-name type="text" name="name" required pattern="[a-z0-9-]{1,63}" autocomplete="off";
                button type="submit" name="how" value="spawn" { "spawn" }
                button type="submit" name="how" value="request" { "request spawn" }
            }
            (roster_table(rows, csrf))
        },
    )
}

/// A pending config proposal whose diff the approvals page shows.
pub fn reviewable(a: &Approval) -> bool {
    a.status == ApprovalStatus::Pending
        && a.kind == ApprovalKind::ApplyCommit
        && a.fetched_sha.is_some()
}

/// What a proposal changes, under its row: git's stat, the flagged
/// entries and the patch, as text (escaped like every value here).
fn review_row(r: &Review) -> Markup {
    html! {
        tr.review id={ "review-" (r.approval.id) } {
            td colspan="8" {
                details open {
                    summary { "what proposal " (r.approval.id) " changes against what is deployed" }
                    @for f in &r.flagged { p.flagged { (f) } }
                    pre.mono { (r.stat) }
                    pre.mono.patch { (r.patch) }
                    @if r.truncated { p { small { "(cut at the hive's cap; `hivectl show " (r.approval.id) "` says the same)" } } }
                }
            }
        }
    }
}

fn approval_row(a: &Approval, csrf: &str) -> Markup {
    html! {
        tr id={ "approval-" (a.id) } {
            td.num { (a.id) }
            td { a href={ "/agent/" (a.agent) } { (a.agent) } }
            td { (a.kind.as_str()) }
            td.mono { (a.commit_ref) }
            td { @if let Some(d) = &a.description { (d) } }
            td { (at(a.requested_at)) }
            td { span class={ "state " (a.status.as_str()) } { (a.status.as_str()) }
                 @if let Some(n) = &a.note { " " small { (n) } } }
            td.actions {
                @if a.status == ApprovalStatus::Pending {
                    form method="post" action={ "/approvals/" (a.id) "/approve" } {
                        (token(csrf))
                        @if a.kind == ApprovalKind::Egress {
                            select name="for_secs" title="how long the grant lasts" {
                                @for (secs, label) in GRANT_FOR {
                                    option value=(secs) { (label) }
                                }
                            }
                            " "
                        }
                        button type="submit" data-confirm={ "Approve " (a.kind.as_str()) " for " (a.agent) "?" } { "approve" }
                        button type="submit" formaction={ "/approvals/" (a.id) "/deny" } data-confirm={ "Deny " (a.kind.as_str()) " for " (a.agent) "?" } { "deny" }
                    }
                }
            }
        }
    }
}

/// Approvals: pending first (the service orders them so), then history;
/// `reviews` are the pending proposals' diffs.
pub fn approvals_page(rows: &[Approval], reviews: &[Review], csrf: &str) -> Markup {
    let (pending, done): (Vec<_>, Vec<_>) = rows
        .iter()
        .partition(|a| a.status == ApprovalStatus::Pending);
    let table = |rows: Vec<&Approval>| {
        html! {
            table.rows {
                thead { tr { th { "id" } th { "agent" } th { "kind" } th { "ref" } th { "description" } th { "requested" } th { "status" } th { "actions" } } }
                tbody { @for a in rows {
                    (approval_row(a, csrf))
                    @if let Some(r) = reviews.iter().find(|r| r.approval.id == a.id) { (review_row(r)) }
                } }
            }
        }
    };
    layout(
        "Approvals",
        Nav::Approvals,
        html! {
            h2 { "Pending (" (pending.len()) ")" }
            @if pending.is_empty() { p { "Nothing waits for you." } } @else { (table(pending)) }
            h2 { "History" }
            (table(done))
        },
    )
}

/// The inbox's list items, newest first (the page and its live stream).
pub fn inbox_items(messages: &[InboxRow]) -> Markup {
    html! {
        @if messages.is_empty() { li #no-messages { "No messages." } }
        @for m in messages {
            li id={ "message-" (m.id) } {
                div.meta {
                    strong { (m.from) } " · " (at(m.at)) " · #" (m.id)
                    @if let Some(r) = m.in_reply_to { " · reply to #" (r) }
                }
                p.body { (m.body) }
            }
        }
    }
}

/// The operator's inbox: a send form and what agents wrote to `operator`.
pub fn inbox_page(agents: &[String], items: Markup, csrf: &str) -> Markup {
    layout(
        "Inbox",
        Nav::Inbox,
        html! {
            form.stack #send method="post" action="/inbox/send" {
                (token(csrf))
                label for="send-to" { "To" }
                input #send-to name="to" list="send-agents" required autocomplete="off"
                    pattern="[a-z0-9-]{1,63}(@[a-z0-9-]{1,63})?" value=[agents.first()]
                    title="an agent of this hive, or NAME@HIVE for one of another hive of the swarm";
                datalist #send-agents { @for a in agents { option value=(a) {} } }
                label for="send-body" { "Message" }
                textarea #send-body name="body" rows="3" required {}
                button type="submit" { "send" }
            }
            h2 { "From the agents" }
            p.summary { span #live role="status" { "not live (needs JavaScript)" } }
            ol #messages.messages data-live-list="/events/inbox" { (items) }
        },
    )
}

/// Open questions, with one button per offered option and a free answer.
/// The open questions, each with its answer forms (the page and its live
/// stream).
pub fn question_items(questions: &[WireQuestion], csrf: &str) -> Markup {
    html! {
        @if questions.is_empty() { p #no-questions { "No open questions." } }
        @for q in questions {
            section.question id={ "question-" (q.id) } {
                div.meta {
                    strong { (q.asker) } " asks "
                    (q.target.as_deref().unwrap_or("you")) " · " (at(q.asked_at))
                    @if let Some(e) = q.expires_at { " · expires " (at(e)) }
                }
                p.body { (q.question) }
                @for option in &q.options {
                    form.inline method="post" action={ "/questions/" (q.id) "/answer" } {
                        (token(csrf))
                        input type="hidden" name="answer" value=(option);
                        button type="submit" { (option) }
                    }
                }
                form.inline method="post" action={ "/questions/" (q.id) "/answer" } {
                    (token(csrf))
                    label for={ "answer-" (q.id) } { "Answer" }
                    input id={ "answer-" (q.id) } type="text" name="answer" required;
                    button type="submit" { "answer" }
                }
            }
        }
    }
}

/// The open questions page; `items` from [`question_items`].
pub fn questions_page(items: Markup) -> Markup {
    layout(
        "Questions",
        Nav::Questions,
        html! {
            p.summary { span #live role="status" { "not live (needs JavaScript)" } }
            div #questions data-live-list="/events/questions" { (items) }
        },
    )
}

/// What the agent page shows besides its row.
#[derive(Debug)]
pub struct AgentDetails<'a> {
    pub row: &'a AgentStatusRow,
    pub grants: Option<&'a AgentGrants>,
    pub schedules: Vec<&'a WireSchedule>,
    /// The turn in progress and the last turns (`super::turn::view`).
    pub turn_view: Markup,
}

/// One agent: its row (live), its turn in progress (live) and last turns,
/// grants, schedules, and its logs following.
pub fn agent_page(d: &AgentDetails<'_>, csrf: &str) -> Markup {
    let name = d.row.name.as_str();
    layout(
        name,
        Nav::Agent,
        html! {
            p.summary { span #live role="status" { "not live (needs JavaScript)" } }
            (row_actions(csrf, &format!("/agent/{name}")))
            table.rows data-live="/events/roster" {
                thead { tr { th { "agent" } th { "state" } th { "attention" } th { "parent" } th { "status" } th { "model" } th title="what its metered model requests cost since 00:00 UTC" { "today" } th { "rem." } th { "actions" } } }
                tbody { (roster_row(d.row, 0)) }
            }
            @if let Some(url) = &d.row.url { p { "Agent page: " a href=(url) { (url) } } }
            form.interrupt method="post" action={ "/agent/" (name) "/interrupt" } {
                (token(csrf))
                input type="text" name="note" maxlength="4000" placeholder="its next message (optional)" aria-label="note";
                " "
                button type="submit" data-confirm={ "Interrupt " (name) "'s turn?" } { "interrupt the turn" }
            }
            div #turn-view data-live-html={ "/events/turn/" (name) } { (d.turn_view) }
            h2 { "Grants" }
            @match d.grants {
                Some(g) => p {
                    "capabilities: "
                    @if g.capabilities.is_empty() { "none" }
                    @for c in &g.capabilities { span.tag { (c.as_str()) } " " }
                    br;
                    "tool groups: "
                    @for t in &g.tool_groups { span.tag { (t.as_str()) } " " }
                },
                None => p { "none" },
            }
            h2 { "Schedules" }
            @if d.schedules.is_empty() { p { "None." } }
            ul {
                @for s in &d.schedules {
                    li {
                        "#" (s.id) " · next " (at(s.next_fire_at_unix))
                        @if let Some(i) = s.interval_seconds { " · every " (i) " s" }
                        @if s.cancelled_at_unix.is_some() { " · cancelled" }
                        " · " (s.body)
                    }
                }
            }
            h2 { "Logs" }
            pre #logs.logs data-follow={ "/events/logs/" (name) } aria-live="polite" {}
        },
    )
}
