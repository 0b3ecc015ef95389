//! The roster as hivectl shows it: one STATE per agent (`running`,
//! `crashed (signal)`, ... with the Claude session's state), its uptime,
//! names in natural order, the `status` tables and `watch`'s lines, and the
//! line a lifecycle verb prints per agent.
//!
//! Split from `render` (the other answers' tables and the table layout
//! they share) because the roster's words are what an operator reads most
//! and change with every state the roster learns.

use std::cmp::Ordering;
use std::fmt::Write as _;

use super::action::Verb;
use super::table::{Style, clean, or_dash, painted_table, shorten};
use crate::wire::host::AgentStatusRow;
use crate::wire::ident::Ident;

/// An agent's state in one word or two: `running`, `paused`, `stopped`,
/// `failed`. One column instead of three flags; room for more states (a
/// crash, an agent waiting for attention) as the roster learns them.
pub fn state(row: &AgentStatusRow) -> String {
    let mut state = unit_state(row);
    if let Some(session) = session(row) {
        state = format!("{state}, {session}");
    }
    if let Some(budget) = &row.budget {
        state = format!("{state}, paused: budget reached ({})", clean(budget));
    }
    state
}

/// What the agent's Claude session is doing, from its hooks: `needs you:
/// permission: <message>` when it waits on a person; `None` before any hook.
pub fn session(row: &AgentStatusRow) -> Option<String> {
    let what = row.session_state?.words();
    Some(match row.session_message.as_deref().map(clean) {
        Some(m) if !m.trim().is_empty() => format!("{what}: {}", m.trim()),
        _ => what.to_owned(),
    })
}

/// How long a running agent's container has been up (`45s`, `12m`,
/// `3h 5m`, `2d 4h`), from the row's `running_since`; `None` when not
/// running or not known.
pub fn uptime(row: &AgentStatusRow, now: i64) -> Option<String> {
    let since = crate::clock::parse_rfc3339(row.running_since.as_deref()?)?;
    Some(duration((now - since).max(0)))
}

pub(crate) fn duration(secs: i64) -> String {
    let (d, h, m) = (secs / 86_400, secs % 86_400 / 3600, secs % 3600 / 60);
    match (d, h, m) {
        (0, 0, 0) => format!("{secs}s"),
        (0, 0, m) => format!("{m}m"),
        (0, h, 0) => format!("{h}h"),
        (0, h, m) => format!("{h}h {m}m"),
        (d, 0, _) => format!("{d}d"),
        (d, h, _) => format!("{d}d {h}h"),
    }
}

/// The container's state alone. A crash (the unit went down without an
/// operator's stop) reads `crashed`, with systemd's result when the unit
/// failed; a unit that failed otherwise (a failed start) `failed (...)`.
fn unit_state(row: &AgentStatusRow) -> String {
    if row.crashed && !row.running {
        let crashed = match &row.failure {
            Some(result) => format!("crashed ({})", clean(result)),
            None => "crashed".into(),
        };
        return if row.paused {
            format!("{crashed}, paused")
        } else {
            crashed
        };
    }
    if let (false, Some(t)) = (row.running, row.transition) {
        let word = t.as_str();
        return if row.paused {
            format!("{word}, paused")
        } else {
            word.into()
        };
    }
    match (row.running, row.failed, row.paused) {
        (true, _, true) => "paused".into(),
        (true, _, false) => "running".into(),
        (false, true, _) => match &row.failure {
            Some(result) => format!("failed ({})", clean(result)),
            None => "failed".into(),
        },
        (false, false, true) => "stopped, paused".into(),
        (false, false, false) => "stopped".into(),
    }
}

fn verb_name(verb: Verb) -> &'static str {
    match verb {
        Verb::Start => "start",
        Verb::Stop { graceful: true, .. } => "stop",
        Verb::Stop {
            graceful: false, ..
        } => "kill",
        Verb::Restart => "restart",
        Verb::Spawn => "spawn",
        Verb::Signal(_) => "kill",
        Verb::Destroy { .. } => "destroy",
    }
}

/// The ANSI colour of a state word.
fn state_colour(row: &AgentStatusRow) -> Option<&'static str> {
    // Waiting on a person is attention, not health, though it runs.
    if row.running && !row.paused && !row.needs_person() {
        Some(GREEN)
    } else if row.running || row.paused || row.transition.is_some() {
        Some(YELLOW)
    } else if row.failed || row.crashed {
        Some(RED)
    } else {
        None
    }
}

const GREEN: &str = "\x1b[32m";

const YELLOW: &str = "\x1b[33m";

const RED: &str = "\x1b[31m";

/// Names in natural order: `a2` before `a10`.
pub fn natural_cmp(a: &str, b: &str) -> Ordering {
    let (mut a, mut b) = (a.as_bytes(), b.as_bytes());
    loop {
        match (a.first(), b.first()) {
            (None, None) => return Ordering::Equal,
            (None, Some(_)) => return Ordering::Less,
            (Some(_), None) => return Ordering::Greater,
            (Some(x), Some(y)) if x.is_ascii_digit() && y.is_ascii_digit() => {
                let da = a.iter().take_while(|c| c.is_ascii_digit()).count();
                let db = b.iter().take_while(|c| c.is_ascii_digit()).count();
                let (na, nb) = (trim_zeros(&a[..da]), trim_zeros(&b[..db]));
                let by_value = na.len().cmp(&nb.len()).then_with(|| na.cmp(nb));
                if by_value != Ordering::Equal {
                    return by_value;
                }
                (a, b) = (&a[da..], &b[db..]);
            }
            (Some(x), Some(y)) => {
                if x != y {
                    return x.cmp(y);
                }
                (a, b) = (&a[1..], &b[1..]);
            }
        }
    }
}

fn trim_zeros(digits: &[u8]) -> &[u8] {
    let zeros = digits.iter().take_while(|&&c| c == b'0').count();
    &digits[zeros.min(digits.len().saturating_sub(1))..]
}

/// The roster as a table: names in natural order, one STATE column, and
/// no column that is empty in every row.
pub fn status_table(rows: &[AgentStatusRow], style: &Style) -> String {
    let mut rows: Vec<&AgentStatusRow> = rows.iter().collect();
    rows.sort_by(|a, b| natural_cmp(a.name.as_str(), b.name.as_str()));
    if style.view.quiet {
        return rows.iter().map(|r| format!("{}\n", r.name)).collect();
    }
    if rows.is_empty() {
        return nothing(style, "no managed agents\n");
    }
    let body = rows
        .iter()
        .map(|r| {
            vec![
                r.name.to_string(),
                shorten(&state(r)),
                or_dash(uptime(r, style.now).as_deref()),
                needs(r).unwrap_or_else(|| "-".into()),
                if r.pending_reminders == 0 {
                    "-".into()
                } else {
                    r.pending_reminders.to_string()
                },
                or_dash(r.parent.as_ref().map(Ident::as_str)),
                or_dash(r.active_model.as_deref()),
                r.spent_today_micro_usd
                    .map_or_else(|| "-".into(), crate::wire::spend::dollars),
                or_dash(r.status_text.as_deref()),
            ]
        })
        .collect::<Vec<_>>();
    let headers = [
        "NAME",
        "STATE",
        "UPTIME",
        "NEEDS",
        "REMINDERS",
        "PARENT",
        "MODEL",
        "TODAY",
        "STATUS",
    ];
    // NAME and STATE always; the others only when some row has a value.
    let keep: Vec<usize> = (0..headers.len())
        .filter(|&c| c < 2 || body.iter().any(|r| r[c] != "-"))
        .collect();
    let pick = |cells: &[String]| keep.iter().map(|&c| cells[c].clone()).collect::<Vec<_>>();
    let headers: Vec<&str> = keep.iter().map(|&c| headers[c]).collect();
    let body: Vec<Vec<String>> = body.iter().map(|r| pick(r)).collect();
    let colours: Vec<Option<&'static str>> = rows.iter().map(|r| state_colour(r)).collect();
    let paint = style.colour.then_some((1, colours.as_slice()));
    let headers: &[&str] = if style.view.no_legend { &[] } else { &headers };
    painted_table(headers, &body, paint)
}

/// An empty table: `said` (e.g. "no managed agents"), or nothing with
/// `--no-legend`, which scripts read.
fn nothing(style: &Style, said: &str) -> String {
    if style.view.no_legend {
        String::new()
    } else {
        said.to_owned()
    }
}

/// The line a lifecycle verb prints for an agent: `alice: running`, or for
/// one that `--all` left alone, `ruth: already stopped`.
pub fn outcome_line(verb: Verb, row: &AgentStatusRow, acted: bool) -> String {
    let now = state(row);
    if acted {
        format!("{}: {now}\n", row.name)
    } else {
        format!(
            "{}: already {now}, left alone by {}\n",
            row.name,
            verb_name(verb)
        )
    }
}

/// The swarm roster as a table: each agent's hive, then the roster's
/// name, state (coloured like `status`), needs and status text. `-q`:
/// `name@hive` per line, the addresses `send` takes.
/// The swarm roster: every hive's agents, with how long ago each row was
/// last heard (HEARD) and `stale` before the state of a row its hive has
/// not republished in time; then the bus's last refusal or error, if any.
pub fn swarm_status_table(
    rows: &[crate::wire::host::SwarmAgentRow],
    bus_error: Option<&crate::wire::host::BusError>,
    style: &Style,
) -> String {
    if style.view.quiet {
        return rows
            .iter()
            .map(|r| format!("{}@{}\n", r.row.name, r.hive))
            .collect();
    }
    let bus = bus_error.map_or_else(String::new, |e| {
        let ago = duration((style.now - e.at).max(0));
        format!("bus error {ago} ago: {}\n", clean(&e.error))
    });
    if rows.is_empty() {
        return nothing(style, "no agents in the swarm\n") + &bus;
    }
    let body = rows
        .iter()
        .map(|r| {
            let state = state(&r.row);
            vec![
                r.hive.to_string(),
                r.row.name.to_string(),
                if r.stale {
                    format!("stale: {state}")
                } else {
                    state
                },
                format!("{} ago", duration((style.now - r.published_at).max(0))),
                needs(&r.row).unwrap_or_else(|| "-".into()),
                or_dash(r.row.status_text.as_deref()),
            ]
        })
        .collect::<Vec<_>>();
    let colours: Vec<Option<&'static str>> = rows
        .iter()
        .map(|r| if r.stale { None } else { state_colour(&r.row) })
        .collect();
    let paint = style.colour.then_some((2, colours.as_slice()));
    let headers: &[&str] = if style.view.no_legend {
        &[]
    } else {
        &["HIVE", "NAME", "STATE", "HEARD", "NEEDS", "STATUS"]
    };
    painted_table(headers, &body, paint) + &bus
}

/// One changed row for `watch`: a readable sentence-like line.
pub fn status_line(row: &AgentStatusRow) -> String {
    let mut parts = vec![state(row)];
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

#[cfg(test)]
#[path = "roster_tests.rs"]
pub(super) mod tests;
