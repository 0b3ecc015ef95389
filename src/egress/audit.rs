//! Per-agent limits of the egress service (issue 44): how fast one agent
//! may open connections, and how many journal lines it may cost.
//!
//! The service is one process for every agent and journald limits it as
//! one unit: before this, one agent's flood of ~38,000 connections in
//! 30 s took journald's whole budget and another agent's refusal, and the
//! flooder's own later allowed request, had no journal line. Two token
//! buckets per agent fix that:
//! - **connections** ([`CONNECTIONS`]): past it a connection is answered
//!   `429` before its request is read, so a flood costs the proxy almost
//!   nothing and dials nothing;
//! - **journal lines** ([`LOG_LINES`]): past it a line is not written but
//!   counted; when the budget returns, one summary line says how many were
//!   suppressed, refusals aggregated per `host:port` ([`Summary`]), so the
//!   audit still says what the agent tried, and every other agent's lines
//!   are written as if it were alone.
//!
//! Rejected: journald's own `LogRateLimit*=` (per unit, so per hive: it
//! drops the quiet agents' lines with the loud one's) and a concurrency
//! cap alone (the daemon's `agent_max_connections` caps open connections,
//! but short ones churned through it thousands a second).
//!
//! Time is a parameter: every method takes `now`, so the tests move an
//! [`Instant`] instead of sleeping. The map is bounded by the agents seen
//! in the last few seconds: [`Agents::sweep`] drops an entry as soon as
//! it is equal to a new one (both buckets full, nothing suppressed), which
//! loses nothing.

use std::collections::{BTreeMap, HashMap};
use std::fmt;
use std::time::Instant;

use crate::wire::ident::Ident;

/// A token bucket's size and refill.
#[derive(Debug, Clone, Copy, PartialEq)]
pub struct Rate {
    /// Tokens when full: what may happen at once.
    pub burst: f64,
    /// Tokens added per second: the sustained rate.
    pub per_sec: f64,
}

/// Connections one agent may open: 64 at once, then 16 a second. Claude
/// Code opens a few per turn; `pip install` or `npm ci` of a large project
/// opens tens in a burst and far fewer than 16 a second sustained. Over it
/// an agent gets `429` and may retry a second later.
pub const CONNECTIONS: Rate = Rate {
    burst: 64.0,
    per_sec: 16.0,
};

/// Journal lines one agent may cost: 100 at once, then 10 a second. With
/// journald's default of 10,000 lines per 30 s for the unit, 25 agents
/// flooding together still fit; an agent within its connection rate
/// writes every line of an ordinary turn.
pub const LOG_LINES: Rate = Rate {
    burst: 100.0,
    per_sec: 10.0,
};

/// Distinct `host:port` refusals a summary names one by one; more are
/// counted together, so a flood over many names keeps the entry small.
pub const SUMMARY_TARGETS: usize = 16;

#[derive(Debug, Clone, Copy)]
struct Bucket {
    tokens: f64,
    at: Instant,
}

impl Bucket {
    fn full(rate: Rate, now: Instant) -> Self {
        Self {
            tokens: rate.burst,
            at: now,
        }
    }

    fn refill(&mut self, rate: Rate, now: Instant) {
        // An earlier `now` (tasks race to the lock) refills nothing.
        let elapsed = now.saturating_duration_since(self.at).as_secs_f64();
        self.tokens = (self.tokens + elapsed * rate.per_sec).min(rate.burst);
        self.at = self.at.max(now);
    }

    fn take(&mut self, rate: Rate, now: Instant) -> bool {
        self.refill(rate, now);
        let ok = self.tokens >= 1.0;
        if ok {
            self.tokens -= 1.0;
        }
        ok
    }

    fn is_full(&mut self, rate: Rate, now: Instant) -> bool {
        self.refill(rate, now);
        self.tokens >= rate.burst
    }
}

/// What a journal line was about, for the summary of suppressed ones.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Line {
    /// A tunnel or a forwarded request.
    Allowed,
    /// A 403: off the allow-list, or a forbidden address; `host:port`.
    Refused(String),
    /// A 429: over [`CONNECTIONS`].
    Limited,
    /// A 400, 408 or 502.
    Failed,
}

/// The suppressed lines of one agent since its last written line.
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Summary {
    pub allowed: u64,
    /// Refusals per `host:port`, at most [`SUMMARY_TARGETS`] of them.
    pub refused: BTreeMap<String, u64>,
    /// Refusals to targets past the first [`SUMMARY_TARGETS`].
    pub refused_elsewhere: u64,
    pub limited: u64,
    pub failed: u64,
}

impl Summary {
    /// Lines suppressed in all.
    pub fn total(&self) -> u64 {
        self.allowed
            + self.refused.values().sum::<u64>()
            + self.refused_elsewhere
            + self.limited
            + self.failed
    }

    fn count(&mut self, line: &Line) {
        match line {
            Line::Allowed => self.allowed += 1,
            Line::Limited => self.limited += 1,
            Line::Failed => self.failed += 1,
            Line::Refused(target) => {
                if let Some(n) = self.refused.get_mut(target) {
                    *n += 1;
                } else if self.refused.len() < SUMMARY_TARGETS {
                    self.refused.insert(target.clone(), 1);
                } else {
                    self.refused_elsewhere += 1;
                }
            }
        }
    }
}

impl fmt::Display for Summary {
    /// "12 egress log lines suppressed (7 refused to a.test:443, 3
    /// allowed, 2 over the connection rate)".
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        let mut parts: Vec<String> = self
            .refused
            .iter()
            .map(|(target, n)| format!("{n} refused to {target}"))
            .collect();
        if self.refused_elsewhere > 0 {
            parts.push(format!(
                "{} refused to other targets",
                self.refused_elsewhere
            ));
        }
        for (n, what) in [
            (self.allowed, "allowed"),
            (self.limited, "over the connection rate (429)"),
            (self.failed, "failed"),
        ] {
            if n > 0 {
                parts.push(format!("{n} {what}"));
            }
        }
        write!(
            f,
            "{} egress log lines suppressed ({})",
            self.total(),
            parts.join(", ")
        )
    }
}

/// What to do with one journal line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Verdict {
    /// A summary of the lines suppressed before this one, to write first.
    pub summary: Option<Summary>,
    /// Whether to write the line itself (if not, it was counted toward the
    /// next summary).
    pub write: bool,
}

#[derive(Debug)]
struct Agent {
    connections: Bucket,
    lines: Bucket,
    suppressed: Summary,
}

impl Agent {
    fn new(now: Instant) -> Self {
        Self {
            connections: Bucket::full(CONNECTIONS, now),
            lines: Bucket::full(LOG_LINES, now),
            suppressed: Summary::default(),
        }
    }

    /// The summary, if lines were suppressed and the budget has a line
    /// for it (a summary takes a token like any line, so an agent's lines,
    /// summaries included, never pass [`LOG_LINES`]).
    fn summary_due(&mut self, now: Instant) -> Option<Summary> {
        if self.suppressed.total() == 0 || !self.lines.take(LOG_LINES, now) {
            return None;
        }
        Some(std::mem::take(&mut self.suppressed))
    }
}

/// Every agent's buckets: the state of [`super::service`]'s one process.
#[derive(Debug, Default)]
pub struct Agents(HashMap<Ident, Agent>);

impl Agents {
    /// Whether `agent` may open one more connection now (takes a token).
    pub fn admit(&mut self, agent: &Ident, now: Instant) -> bool {
        self.entry(agent, now).connections.take(CONNECTIONS, now)
    }

    /// Whether a journal line of `agent` about `line` is written now, and
    /// the summary of suppressed lines to write before it.
    pub fn log(&mut self, agent: &Ident, line: &Line, now: Instant) -> Verdict {
        let a = self.entry(agent, now);
        let summary = a.summary_due(now);
        // Lines still suppressed (the budget had no token for their
        // summary) keep this one suppressed too, so the journal's order
        // says "this many were missed, then this".
        let write = a.suppressed.total() == 0 && a.lines.take(LOG_LINES, now);
        if !write {
            a.suppressed.count(line);
        }
        Verdict { summary, write }
    }

    /// The summaries now due (agents whose budget returned after a flood
    /// that then stopped), and entries equal to new ones dropped.
    pub fn sweep(&mut self, now: Instant) -> Vec<(Ident, Summary)> {
        let mut due = Vec::new();
        self.0.retain(|name, a| {
            if let Some(summary) = a.summary_due(now) {
                due.push((name.clone(), summary));
            }
            let fresh = a.suppressed.total() == 0
                && a.lines.is_full(LOG_LINES, now)
                && a.connections.is_full(CONNECTIONS, now);
            !fresh
        });
        due.sort_by(|x, y| x.0.cmp(&y.0));
        due
    }

    /// Agents with an entry.
    pub fn len(&self) -> usize {
        self.0.len()
    }

    /// Whether no agent has one.
    pub fn is_empty(&self) -> bool {
        self.0.is_empty()
    }

    fn entry(&mut self, agent: &Ident, now: Instant) -> &mut Agent {
        self.0
            .entry(agent.clone())
            .or_insert_with(|| Agent::new(now))
    }
}

/// [`Agents`] shared by the service's tasks, and the journal lines it
/// decides. A std mutex: held for a map lookup and a few float operations,
/// never across an await; the lines are written after it is let go.
#[derive(Debug, Default)]
pub struct Audit(std::sync::Mutex<Agents>);

impl Audit {
    fn agents(&self) -> std::sync::MutexGuard<'_, Agents> {
        // A panic while holding it leaves counts, nothing inconsistent.
        self.0
            .lock()
            .unwrap_or_else(std::sync::PoisonError::into_inner)
    }

    /// Whether `agent` may open one more connection now.
    pub fn admit(&self, agent: &Ident, now: Instant) -> bool {
        self.agents().admit(agent, now)
    }

    /// Whether the caller writes its line about `line` for `agent` now;
    /// the summary of what was suppressed before it is written here first.
    pub fn may_log(&self, agent: &Ident, line: &Line, now: Instant) -> bool {
        let verdict = self.agents().log(agent, line, now);
        if let Some(summary) = verdict.summary {
            write_summary(agent, &summary);
        }
        verdict.write
    }

    /// Write the summaries now due and drop idle entries ([`Agents::sweep`]).
    pub fn sweep(&self, now: Instant) {
        let due = self.agents().sweep(now);
        for (agent, summary) in due {
            write_summary(&agent, &summary);
        }
    }
}

fn write_summary(agent: &Ident, summary: &Summary) {
    tracing::warn!(agent = %agent, suppressed = summary.total(), "{agent}: {summary}");
}

#[cfg(test)]
#[path = "audit_tests.rs"]
mod tests;
