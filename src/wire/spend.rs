//! Spend caps — "budgets" to the operator (`hivectl budget`): how much an
//! agent's subtree, or the whole hive, may spend in USD or tokens per UTC
//! day or per rolling window before the hive starts no new turn for it.
//! (Not `service::budget`, which is the answer-time budget of a request.)
//!
//! An amount is written and read in one form everywhere (hivectl, the
//! config file, host.sock, the manager's `request_budget`, the approval
//! row): `20usd/day`, `0.5usd/5h`, `2000000tokens/day`. It is parsed once,
//! here ([`SpendCap`]'s `FromStr` and `Deserialize`), strictly: anything
//! else is refused with the accepted forms.

use std::fmt;
use std::str::FromStr;

use serde::{Deserialize, Deserializer, Serialize, Serializer};

use super::ident::Ident;

/// What a cap counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpendUnit {
    /// Claude Code's `total_cost_usd`, kept in micro-dollars.
    Usd,
    /// Every token of a turn's `usage` (input, output, cache read, cache
    /// creation).
    Tokens,
}

impl SpendUnit {
    pub fn as_str(self) -> &'static str {
        match self {
            Self::Usd => "usd",
            Self::Tokens => "tokens",
        }
    }

    pub fn parse(s: &str) -> Option<Self> {
        [Self::Usd, Self::Tokens]
            .into_iter()
            .find(|u| u.as_str() == s)
    }
}

/// Over which turns a cap counts.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum SpendWindow {
    /// The current UTC day, from 00:00 (`/day`).
    Day,
    /// The last so many seconds (`/5h`, `/30m`, `/7d`).
    Rolling(u64),
}

/// The shortest and longest rolling windows.
pub const MIN_WINDOW_SECS: u64 = 60;
pub const MAX_WINDOW_SECS: u64 = 366 * 86_400;

impl SpendWindow {
    /// Unix seconds where the window that contains `now` starts.
    pub fn start(self, now: i64) -> i64 {
        match self {
            Self::Day => now.div_euclid(86_400) * 86_400,
            Self::Rolling(secs) => now.saturating_sub(i64::try_from(secs).unwrap_or(i64::MAX)),
        }
    }

    /// The window in words: `today`, `in 5h`.
    pub fn words(self) -> String {
        match self {
            Self::Day => "today".into(),
            Self::Rolling(secs) => format!("in {}", span_text(secs)),
        }
    }
}

/// One cap: at most `limit` (micro-dollars, or tokens) per `window`.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub struct SpendCap {
    pub limit: u64,
    pub unit: SpendUnit,
    pub window: SpendWindow,
}

/// An amount that is not one of the accepted forms; the message quotes
/// it and gives them.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error(
    "{0:?} is not a budget amount: give a number with usd or tokens, then /day (the UTC day) \
     or a rolling window of minutes, hours or days (/30m, /5h, /7d); e.g. 20usd/day, \
     2000000tokens/day, 5usd/5h"
)]
pub struct BadSpendCap(pub String);

impl FromStr for SpendCap {
    type Err = BadSpendCap;

    fn from_str(text: &str) -> Result<Self, Self::Err> {
        let bad = || BadSpendCap(text.to_owned());
        let (amount, window) = text.split_once('/').ok_or_else(bad)?;
        let window = match window {
            "day" => SpendWindow::Day,
            span => {
                let secs = span_seconds(span)
                    .filter(|s| (MIN_WINDOW_SECS..=MAX_WINDOW_SECS).contains(s))
                    .filter(|_| !span.ends_with('s'))
                    .ok_or_else(bad)?;
                SpendWindow::Rolling(secs)
            }
        };
        let (number, unit) = if let Some(n) = amount.strip_suffix("usd") {
            (micro_dollars(n).ok_or_else(bad)?, SpendUnit::Usd)
        } else if let Some(n) = amount.strip_suffix("tokens") {
            (digits(n).ok_or_else(bad)?, SpendUnit::Tokens)
        } else {
            return Err(bad());
        };
        Ok(Self {
            limit: number,
            unit,
            window,
        })
    }
}

/// ASCII digits only (no sign, no spaces, no `_`), as a u64.
fn digits(s: &str) -> Option<u64> {
    if s.is_empty() || !s.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    s.parse().ok()
}

/// `20`, `0.5`, `2.50`, `0.000001` dollars in micro-dollars; at most six
/// decimals.
fn micro_dollars(s: &str) -> Option<u64> {
    let (whole, frac) = s.split_once('.').unwrap_or((s, ""));
    if s.contains('.') && frac.is_empty() || frac.len() > 6 {
        return None;
    }
    let whole = digits(whole)?;
    let frac = if frac.is_empty() {
        0
    } else {
        digits(frac)? * 10u64.pow(6 - u32::try_from(frac.len()).ok()?)
    };
    whole.checked_mul(1_000_000)?.checked_add(frac)
}

impl fmt::Display for SpendCap {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self.unit {
            SpendUnit::Usd => {
                let (whole, frac) = (self.limit / 1_000_000, self.limit % 1_000_000);
                let frac = format!("{frac:06}");
                let frac = frac.trim_end_matches('0');
                if frac.is_empty() {
                    write!(f, "{whole}usd")?;
                } else {
                    write!(f, "{whole}.{frac}usd")?;
                }
            }
            SpendUnit::Tokens => write!(f, "{}tokens", self.limit)?,
        }
        match self.window {
            SpendWindow::Day => write!(f, "/day"),
            SpendWindow::Rolling(secs) => write!(f, "/{}", span_text(secs)),
        }
    }
}

impl SpendCap {
    /// `spent` against the limit in the operator's words: `$20.00 of
    /// $20.00 today`, `1,500,000 of 2,000,000 tokens in 5h`.
    pub fn words(&self, spent: u64) -> String {
        let window = self.window.words();
        match self.unit {
            SpendUnit::Usd => format!("{} of {} {window}", dollars(spent), dollars(self.limit)),
            SpendUnit::Tokens => {
                format!(
                    "{} of {} tokens {window}",
                    tokens(spent),
                    tokens(self.limit)
                )
            }
        }
    }

    /// Is `spent` at or past the limit?
    pub fn reached_by(&self, spent: u64) -> bool {
        spent >= self.limit
    }
}

impl Serialize for SpendCap {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        s.collect_str(self)
    }
}

impl<'de> Deserialize<'de> for SpendCap {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        let text = String::deserialize(d)?;
        text.parse().map_err(serde::de::Error::custom)
    }
}

/// Micro-dollars as a person reads money, the one formatter of every
/// human output (hivectl, the dashboard, a budget's words): cents from a
/// cent up (`$0.25`, `$12.00`, `$1,234.50`, rounded half up), two
/// significant digits below one (`$0.0042`, `$0.00055`, `$0.000001`),
/// `$0.00` for nothing. JSON keeps the exact micro-dollars.
pub fn dollars(micro: u64) -> String {
    const CENT: u64 = 10_000;
    // Below a cent: rounded to two significant digits, unless that makes
    // a cent.
    let small = match micro {
        0 => Some(0),
        m if m < 100 => Some(m),
        m if m < 1_000 => Some((m + 5) / 10 * 10),
        m if m < CENT => Some((m + 50) / 100 * 100).filter(|r| *r < CENT),
        _ => None,
    };
    match small {
        Some(0) => "$0.00".into(),
        Some(m) => format!("$0.{}", format!("{m:06}").trim_end_matches('0')),
        None => {
            let cents = micro / CENT + u64::from(micro % CENT >= CENT / 2);
            format!("${}.{:02}", grouped(cents / 100), cents % 100)
        }
    }
}

/// A count of tokens (or any count a person reads) with thousands
/// separators: `950`, `1,280`, `2,000,000`. The one formatter of tokens in
/// every human output; JSON keeps the plain number.
pub fn tokens(n: u64) -> String {
    grouped(n)
}

/// Digits in threes, separated by commas.
fn grouped(n: u64) -> String {
    let digits = n.to_string();
    let mut out = String::with_capacity(digits.len() + digits.len() / 3);
    for (i, c) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i).is_multiple_of(3) {
            out.push(',');
        }
        out.push(c);
    }
    out
}

/// `30s`, `90m`, `24h`, `7d` in seconds; `None` for anything else.
pub fn span_seconds(text: &str) -> Option<u64> {
    let (number, unit) = text.split_at(text.len().saturating_sub(1));
    let scale = match unit {
        "s" => 1,
        "m" => 60,
        "h" => 3600,
        "d" => 86_400,
        _ => return None,
    };
    digits(number)?.checked_mul(scale)
}

/// Seconds in the largest unit that divides them: `7d`, `5h`, `90m`, `30s`.
fn span_text(secs: u64) -> String {
    match secs {
        s if s > 0 && s % 86_400 == 0 => format!("{}d", s / 86_400),
        s if s > 0 && s % 3600 == 0 => format!("{}h", s / 3600),
        s if s > 0 && s % 60 == 0 => format!("{}m", s / 60),
        s => format!("{s}s"),
    }
}

/// What a cap covers.
#[derive(Debug, Clone, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
#[serde(tag = "scope", content = "agent", rename_all = "snake_case")]
pub enum SpendScope {
    /// Every agent of the hive (`hivectl budget set --hive`).
    Hive,
    /// The agent and every agent under it now (`hivectl budget set N`).
    Subtree(Ident),
    /// The agent's own turns only: the config's `budget_each_agent`.
    Agent(Ident),
}

impl SpendScope {
    /// `the hive`, `alice and under`, `alice`.
    pub fn words(&self) -> String {
        match self {
            Self::Hive => "the hive".into(),
            Self::Subtree(n) => format!("{n} and under"),
            Self::Agent(n) => n.to_string(),
        }
    }
}

/// Where a cap in force comes from.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize, Deserialize)]
#[serde(rename_all = "snake_case")]
pub enum SpendSource {
    /// `hivectl budget set`, or an approved `request_budget`.
    Operator,
    /// The config's `budget_hive` / `budget_each_agent`.
    Config,
}

/// One cap in force and what its window holds now (`budgets` on host.sock).
#[derive(Debug, Clone, PartialEq, Eq, Serialize, Deserialize)]
pub struct BudgetRow {
    #[serde(flatten)]
    pub scope: SpendScope,
    pub amount: SpendCap,
    pub source: SpendSource,
    /// Spent in the window, in the amount's unit (micro-dollars or tokens).
    pub spent: u64,
    /// The window starts here (unix seconds).
    pub since: i64,
    /// Spent at or past the amount: no new turn starts for what it covers.
    pub reached: bool,
}

#[cfg(test)]
#[path = "spend_tests.rs"]
mod tests;
