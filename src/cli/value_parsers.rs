//! hivectl's value parsers: the words of a flag (`--signal`, `--priority`,
//! `--for`, `--capability`, ...) read into the wire's types, each refusal
//! naming what is accepted. Apart from `args.rs` so the command table
//! stays one file that fits in a head.

use crate::wire::agenda::{Capability, JournalPriority, ToolGroup};
use crate::wire::host::Signal;
use crate::wire::turns::UsageBy;

/// `--signal`: a name with or without `SIG`, in any case, or its number.
pub fn parse_usage_by(text: &str) -> Result<UsageBy, String> {
    UsageBy::ALL
        .into_iter()
        .find(|by| by.as_str() == text)
        .ok_or_else(|| format!("{text:?} is not a grouping: give agent, subtree, model or day"))
}

/// `--signal`: a name with or without `SIG`, in any case, or its number.
pub fn parse_signal(text: &str) -> Result<Signal, String> {
    Signal::parse(text).ok_or_else(|| {
        let names: Vec<&str> = Signal::ALL.iter().map(|s| s.name()).collect();
        format!(
            "unknown signal {text:?}: use one of {} (SIGTERM, term and 15 work too)",
            names.join(", ")
        )
    })
}

/// `--priority`: journalctl's names, offered to completion, parsed into the
/// wire type.
pub fn priority_parser() -> impl clap::builder::TypedValueParser<Value = JournalPriority> {
    use clap::builder::TypedValueParser;
    let names: Vec<&'static str> = JournalPriority::ALL.iter().map(|p| p.as_str()).collect();
    clap::builder::PossibleValuesParser::new(names).try_map(|name: String| {
        JournalPriority::parse(&name).ok_or_else(|| format!("unknown priority {name:?}"))
    })
}

/// `--for`: `90s`, `30m`, `2h`, `1d` ([`super::since::span_seconds`]), at
/// least one second.
pub fn parse_duration(value: &str) -> Result<std::time::Duration, String> {
    match super::since::span_seconds(value) {
        Some(s) if s > 0 => Ok(std::time::Duration::from_secs(s)),
        _ => Err(format!(
            "{value:?}: give a positive span, e.g. 90s, 30m, 2h or 1d"
        )),
    }
}

pub fn parse_capability(value: &str) -> Result<Capability, String> {
    Capability::parse(value).ok_or_else(|| {
        let known: Vec<&str> = Capability::ALL.iter().map(|c| c.as_str()).collect();
        format!("unknown capability; known: {}", known.join(", "))
    })
}

pub fn parse_tool_group(value: &str) -> Result<ToolGroup, String> {
    ToolGroup::parse(value).ok_or_else(|| {
        let known: Vec<&str> = ToolGroup::ALL.iter().map(|g| g.as_str()).collect();
        format!("unknown tool group; known: {}", known.join(", "))
    })
}
