//! `hivectl turns NAME -f`: the agent's newest turns, then its turn in
//! progress as it happens — the turn's messages (sender, first line), each
//! tool call as it starts and ends, Claude's latest text, tokens so far,
//! and the turn's journal line when it ends — until Ctrl-C, across daemon
//! restarts as `watch` does (host.sock `turns` with `follow`).
//!
//! Everything printed that an agent wrote has its control characters
//! replaced ([`clean`]), so no escape sequence reaches the terminal.
//! `--json` prints the daemon's lines unchanged.

use std::collections::HashMap;

use super::table::clean;
use super::usage::{dollars, tokens, turns_table};
use super::watch::{Stop, follow};
use super::{Io, refused};
use crate::clock::rfc3339;
use crate::wire::host::{HostRequest, HostResponse};
use crate::wire::ident::Ident;
use crate::wire::live::{LiveChange, LiveTurn, PromptLine, TurnProgress};
use crate::wire::turns::TurnRow;

/// Run `turns NAME -n LIMIT -f` until interrupted, stdout closes, or an
/// error a retry cannot fix.
pub(crate) fn run(mut io: Io<'_>, name: &Ident, limit: u32) -> u8 {
    let last = HostRequest::Turns {
        name: name.clone(),
        limit: Some(limit),
        follow: false,
    };
    let reply = match io.call(&last) {
        Ok(reply) => reply,
        Err(status) => return status,
    };
    if !reply.response.ok {
        return refused(io.err, &reply);
    }
    let text = if io.json {
        format!("{}\n", reply.line)
    } else {
        let mut rows = reply.response.turns.unwrap_or_default();
        rows.reverse(); // oldest first: the live turn comes after them
        turns_table(&rows)
    };
    if let Err(status) = io.emit(&text) {
        return status;
    }
    let mut screen = Screen::default();
    follow(&mut io, |io, connected| {
        session(io, name, &mut screen, connected)
    })
}

/// One connection: the ack, the turn in progress, its changes.
fn session(
    io: &mut Io<'_>,
    name: &Ident,
    screen: &mut Screen,
    connected: &mut bool,
) -> Result<(), Stop> {
    let request = HostRequest::Turns {
        name: name.clone(),
        limit: None,
        follow: true,
    };
    let stream = io.client.stream(&request).map_err(Stop::Lost)?;
    *connected = true;
    for item in stream {
        let reply = item.map_err(Stop::Lost)?;
        if !reply.response.ok {
            return Err(Stop::Status(refused(io.err, &reply)));
        }
        let text = if io.json {
            format!("{}\n", reply.line)
        } else {
            screen.render(&reply.response)
        };
        io.emit(&text).map_err(Stop::Status)?;
    }
    Ok(())
}

/// What has been seen of the live turn: tool names by call number.
#[derive(Debug, Default)]
pub struct Screen {
    tools: HashMap<u32, String>,
}

impl Screen {
    /// The text for one streamed line (the ack prints nothing).
    pub fn render(&mut self, response: &HostResponse) -> String {
        if let Some(turn) = &response.live_turn {
            return self.snapshot(turn);
        }
        match &response.live {
            Some(change) => self.change(change),
            None => String::new(),
        }
    }

    fn snapshot(&mut self, turn: &LiveTurn) -> String {
        self.tools = turn
            .tools
            .iter()
            .map(|t| (t.call, t.name.clone()))
            .collect();
        let mut text = started_lines(
            turn.started_at_ms,
            &turn.messages,
            turn.total_messages,
            "in progress",
        );
        for t in &turn.tools {
            text.push_str(&match t.ok {
                None => format!("  tool {} …\n", clean(&t.name)),
                Some(ok) => tool_ended(&t.name, ok, t.duration_ms.unwrap_or(0)),
            });
        }
        if turn.tools_left_out > 0 {
            text.push_str(&format!("  ({} more tool calls)\n", turn.tools_left_out));
        }
        if let Some(reply) = &turn.reply {
            text.push_str(&reply_lines(reply));
        }
        if let Some(usage) = &turn.usage {
            text.push_str(&usage_line(usage.total(), turn.cost_micro_usd, false));
        }
        if turn.dropped > 0 {
            text.push_str(&format!("  ({} events dropped)\n", turn.dropped));
        }
        text
    }

    fn change(&mut self, change: &LiveChange) -> String {
        if change.ended {
            self.tools.clear();
            return match &change.turn {
                Some(row) => ended_line(row),
                None => "turn ended (not reported)\n".into(),
            };
        }
        let Some(progress) = &change.progress else {
            return String::new();
        };
        match progress {
            TurnProgress::Started {
                started_at_ms,
                messages,
                total_messages,
            } => {
                self.tools.clear();
                started_lines(*started_at_ms, messages, *total_messages, "started")
            }
            TurnProgress::ToolStarted { call, name } => {
                self.tools.insert(*call, name.clone());
                format!("  tool {} …\n", clean(name))
            }
            TurnProgress::ToolEnded {
                call,
                ok,
                duration_ms,
            } => {
                let name = self.tools.get(call).map_or("?", String::as_str);
                tool_ended(name, *ok, *duration_ms)
            }
            TurnProgress::Reply { text } => reply_lines(text),
            TurnProgress::Usage {
                usage,
                cost_micro_usd,
                is_final,
            } => usage_line(usage.total(), *cost_micro_usd, *is_final),
        }
    }
}

fn started_lines(at_ms: i64, messages: &[PromptLine], total: u32, how: &str) -> String {
    let mut text = format!(
        "turn {how} at {}: {total} message(s)\n",
        rfc3339(at_ms.div_euclid(1000))
    );
    for m in messages {
        text.push_str(&format!(
            "  from {}: {}\n",
            clean(&m.from),
            clean(&m.first_line)
        ));
    }
    text
}

fn tool_ended(name: &str, ok: bool, ms: u64) -> String {
    let how = if ok { "ok" } else { "failed" };
    format!(
        "  tool {} {how} ({:.1}s)\n",
        clean(name),
        ms as f64 / 1000.0
    )
}

fn reply_lines(text: &str) -> String {
    let mut out = String::from("  says:\n");
    for line in text.lines() {
        out.push_str(&format!("  | {}\n", clean(line)));
    }
    out
}

fn usage_line(count: u64, cost: Option<u64>, is_final: bool) -> String {
    let cost = cost.map_or_else(String::new, |c| format!(", {}", dollars(c)));
    let when = if is_final { "" } else { " so far" };
    format!("  tokens{when}: {}{cost}\n", tokens(count))
}

fn ended_line(row: &TurnRow) -> String {
    let r = &row.report;
    let count = r.usage.map_or_else(|| "-".into(), |u| tokens(u.total()));
    let cost = r.cost_micro_usd.map_or_else(|| "-".into(), dollars);
    format!(
        "turn {} ended {}: {}, {:.1}s, {count} tokens, {cost}\n",
        row.id,
        rfc3339(r.ended_at_ms.div_euclid(1000)),
        r.outcome.as_str(),
        (r.ended_at_ms - r.started_at_ms) as f64 / 1000.0,
    )
}

#[cfg(test)]
#[path = "follow_tests.rs"]
mod tests;
