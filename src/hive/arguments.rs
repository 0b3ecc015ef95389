//! The shapes of the free-text values a request hands the hive, checked
//! once by the service whichever door the request came in by: values that
//! end up in an argv (a commit ref for git, flake input names for `nix
//! flake update`), the sender a `wake` claims, the model a harness reports.
//!
//! Decision: the rule lives here, beside the other rules, and the service
//! applies it in the call that takes the value (`Hive::request_approval`,
//! `Hive::wake`, `Hive::report_session`); a door only parses. Rejected: the
//! checks in the socket dispatcher that first needed them, which left the
//! service's public calls (and any other door) free to queue an argv
//! element that looks like an option.

use crate::wire::egress_audit::MAX_EGRESS_LOG_LIMIT;
use crate::wire::model_log::MAX_MODEL_LOG_LIMIT;

/// A value the rules refuse; the message says what shape is wanted.
#[derive(Debug, Clone, PartialEq, Eq, thiserror::Error)]
#[error("{0}")]
pub struct BadArgument(String);

/// A refusal of `value` (its first 60 characters) as `field`.
fn refuse(field: &str, value: &str, rule: &str) -> BadArgument {
    let shown: String = value.chars().take(60).collect();
    BadArgument(format!("{field} {shown:?} {rule}"))
}

/// Is `commit_ref` a git object name (7-40 hex digits)?
pub fn check_commit_ref(commit_ref: &str) -> Result<(), BadArgument> {
    let ok =
        (7..=40).contains(&commit_ref.len()) && commit_ref.bytes().all(|b| b.is_ascii_hexdigit());
    ok.then_some(()).ok_or_else(|| {
        let rule = "is not a commit: give 7-40 hex digits (e.g. `git rev-parse --short HEAD`)";
        refuse("commit_ref", commit_ref, rule)
    })
}

/// Is `input` a flake input name (letters, digits, `_`, `-`, not starting
/// with `-`)?
pub fn check_input(input: &str) -> Result<(), BadArgument> {
    let ok = !input.is_empty()
        && input.len() <= 100
        && !input.starts_with('-')
        && input
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    ok.then_some(()).ok_or_else(|| {
        let rule =
            "is not a flake input name: use letters, digits, '_' and '-', not starting with '-'";
        refuse("input", input, rule)
    })
}

/// Is `payload` an `update_meta_inputs` approval's payload: a JSON array
/// of flake input names (empty: every input)?
pub fn check_inputs(payload: &str) -> Result<(), BadArgument> {
    let inputs: Vec<String> = serde_json::from_str(payload).map_err(|_| {
        refuse(
            "inputs",
            payload,
            "are not a JSON array of flake input names",
        )
    })?;
    inputs.iter().try_for_each(|i| check_input(i))
}

/// Is `limit` a number of egress audit rows one answer may carry
/// (1-[`MAX_EGRESS_LOG_LIMIT`])?
pub fn check_egress_log_limit(limit: u32) -> Result<(), BadArgument> {
    if (1..=MAX_EGRESS_LOG_LIMIT).contains(&limit) {
        return Ok(());
    }
    Err(BadArgument(format!(
        "limit {limit} is out of range: egress_log answers 1 to {MAX_EGRESS_LOG_LIMIT} rows \
         (the newest of the agent's)"
    )))
}

/// Is `limit` a number of model log rows one answer may carry
/// (1-[`MAX_MODEL_LOG_LIMIT`])?
pub fn check_model_log_limit(limit: u32) -> Result<(), BadArgument> {
    if (1..=MAX_MODEL_LOG_LIMIT).contains(&limit) {
        return Ok(());
    }
    Err(BadArgument(format!(
        "limit {limit} is out of range: model_log answers 1 to {MAX_MODEL_LOG_LIMIT} rows \
         (the newest of the agent's)"
    )))
}

/// The longest note an operator may leave on a denied approval.
pub const MAX_NOTE: usize = 1000;

/// Is `note` a note an operator may leave on a row (1-[`MAX_NOTE`] bytes,
/// no control characters but newlines and tabs)?
pub fn check_note(note: &str) -> Result<(), BadArgument> {
    let bad = |c: char| c.is_control() && c != '\n' && c != '\t';
    if note.trim().is_empty() || note.len() > MAX_NOTE || note.chars().any(bad) {
        return Err(BadArgument(format!(
            "note: must be 1-{MAX_NOTE} bytes without control characters but newlines and tabs"
        )));
    }
    Ok(())
}

/// May approval `id`, of `kind`, be approved `for` a time? Only an
/// `egress` grant lasts (every other action is done once), and not for 0s.
pub fn check_approve_for(
    id: i64,
    kind: crate::wire::host::ApprovalKind,
    lasting: std::time::Duration,
) -> Result<(), BadArgument> {
    if kind != crate::wire::host::ApprovalKind::Egress {
        return Err(BadArgument(format!(
            "approve: approval {id} is a {} request; a duration applies to an egress \
             request only: approve it without one",
            kind.as_str()
        )));
    }
    if lasting.is_zero() {
        return Err(BadArgument(
            "approve: the grant must last at least 1 second".into(),
        ));
    }
    Ok(())
}

/// The longest `from` a `wake` may claim.
pub const MAX_WAKE_FROM: usize = 64;

/// Is `value` a short label: 1-`max` bytes without control characters?
/// The refusal names the verb and the field.
fn check_label(verb: &str, field: &str, value: &str, max: usize) -> Result<(), BadArgument> {
    if value.is_empty() || value.len() > max || value.chars().any(char::is_control) {
        return Err(BadArgument(format!(
            "{verb}: {field} must be 1-{max} bytes without control characters"
        )));
    }
    Ok(())
}

/// Is `from` a sender a `wake` may claim (1-[`MAX_WAKE_FROM`] bytes, no
/// control characters)?
/// Is `body` a message the operator may send: not empty nor only
/// whitespace (an empty message would start a turn about nothing).
pub fn check_operator_body(body: &str) -> Result<(), BadArgument> {
    if body.trim().is_empty() {
        return Err(refuse("body", body, "is empty: give the message to send"));
    }
    Ok(())
}

pub fn check_wake_from(from: &str) -> Result<(), BadArgument> {
    check_label("wake", "\"from\"", from, MAX_WAKE_FROM)
}

/// The longest model name `report_session` may set.
pub const MAX_MODEL: usize = 100;

/// Is `model`, if any, a model name a harness may report (1-[`MAX_MODEL`]
/// bytes, no control characters)?
pub fn check_model(model: Option<&str>) -> Result<(), BadArgument> {
    model.map_or(Ok(()), |m| {
        check_label("report_session", "\"active_model\"", m, MAX_MODEL)
    })
}

/// How much of a turn the daemon keeps: the caps on a `report_turn`.
pub const MAX_TURN_MESSAGES: usize = 1000;
pub const MAX_TURN_TOOLS: usize = 500;
pub const MAX_TOOL_NAME: usize = 128;
pub const MAX_TURN_ERROR: usize = 1000;
pub const MAX_SESSION_ID: usize = 128;

/// Is `report` a turn the journal may keep: within the caps above, its
/// labels free of control characters, its times in order?
pub fn check_turn_report(report: &crate::wire::turns::TurnReport) -> Result<(), BadArgument> {
    const VERB: &str = "report_turn";
    let bad = |what: String| Err(BadArgument(format!("{VERB}: {what}")));
    if report.outcome == crate::wire::turns::TurnOutcome::Interactive {
        return bad("\"outcome\" \"interactive\" is the daemon's own (from transcripts)".into());
    }
    if report.ended_at_ms < report.started_at_ms || report.started_at_ms < 0 {
        return bad(
            "\"ended_at_ms\" must not be before \"started_at_ms\" (unix milliseconds)".into(),
        );
    }
    if report.message_ids.len() > MAX_TURN_MESSAGES || report.tools.len() > MAX_TURN_TOOLS {
        return bad(format!(
            "at most {MAX_TURN_MESSAGES} message ids and {MAX_TURN_TOOLS} tool calls"
        ));
    }
    for tool in &report.tools {
        check_label(VERB, "a tool's \"name\"", &tool.name, MAX_TOOL_NAME)?;
    }
    if let Some(id) = &report.session_id {
        check_label(VERB, "\"session_id\"", id, MAX_SESSION_ID)?;
    }
    if let Some(model) = &report.model {
        check_label(VERB, "\"model\"", model, MAX_MODEL)?;
    }
    if report
        .error
        .as_ref()
        .is_some_and(|e| e.len() > MAX_TURN_ERROR)
    {
        return bad(format!("\"error\" must be at most {MAX_TURN_ERROR} bytes"));
    }
    Ok(())
}

/// Is `progress` a live-turn event the daemon may keep: its fields within
/// the caps of `wire::live`, labels without control characters, the
/// reply without control characters but newlines and tabs?
pub fn check_turn_progress(progress: &crate::wire::live::TurnProgress) -> Result<(), BadArgument> {
    use crate::wire::live::{
        MAX_FIRST_LINE, MAX_LIVE_TOOL_NAME, MAX_PROMPT_MESSAGES, MAX_REPLY, MAX_SENDER,
        TurnProgress,
    };
    const VERB: &str = "turn_progress";
    let bad = |what: String| Err(BadArgument(format!("{VERB}: {what}")));
    match progress {
        TurnProgress::Started {
            started_at_ms,
            messages,
            ..
        } => {
            if *started_at_ms < 0 {
                return bad("\"started_at_ms\" must be unix milliseconds".into());
            }
            if messages.len() > MAX_PROMPT_MESSAGES {
                return bad(format!("at most {MAX_PROMPT_MESSAGES} messages"));
            }
            for m in messages {
                check_label(VERB, "a message's \"from\"", &m.from, MAX_SENDER)?;
                if m.first_line.len() > MAX_FIRST_LINE || m.first_line.chars().any(char::is_control)
                {
                    return bad(format!(
                        "a message's \"first_line\" must be at most {MAX_FIRST_LINE} bytes without control characters"
                    ));
                }
            }
        }
        TurnProgress::ToolStarted { name, .. } => {
            check_label(VERB, "\"name\"", name, MAX_LIVE_TOOL_NAME)?;
        }
        TurnProgress::ToolEnded { .. } | TurnProgress::Usage { .. } => {}
        TurnProgress::Reply { text } => {
            let control = |c: char| c.is_control() && c != '\n' && c != '\t';
            if text.len() > MAX_REPLY || text.chars().any(control) {
                return bad(format!(
                    "\"text\" must be at most {MAX_REPLY} bytes without control characters but newlines and tabs"
                ));
            }
        }
    }
    Ok(())
}

/// Is `host` an egress pattern (`host[:port]`, `*.domain[:port]`)? An
/// approval's `commit_ref` is a string; an `egress` row's must be one.
pub fn check_egress_host(host: &str) -> Result<crate::wire::egress::EgressPattern, BadArgument> {
    crate::wire::egress::EgressPattern::new(host).map_err(|e| BadArgument(e.to_string()))
}

/// The longest reason a `request_egress` or `request_budget` may give.
pub const MAX_REASON: usize = 500;

/// Is `reason` one a `request_egress` or `request_budget` (`verb`) may
/// give (1-[`MAX_REASON`] bytes, no control characters but newlines)? The
/// operator reads it in `hivectl pending`.
pub fn check_reason(verb: &str, reason: &str) -> Result<(), BadArgument> {
    let bad = |c: char| c.is_control() && c != '\n';
    if reason.trim().is_empty() || reason.len() > MAX_REASON || reason.chars().any(bad) {
        return Err(BadArgument(format!(
            "{verb}: \"reason\" must be 1-{MAX_REASON} bytes without control characters"
        )));
    }
    Ok(())
}

/// Is `amount` a spend cap (`20usd/day`, ...)? An approval's `commit_ref`
/// is a string; a `budget` row's must be one.
pub fn check_spend_cap(amount: &str) -> Result<crate::wire::spend::SpendCap, BadArgument> {
    amount
        .parse()
        .map_err(|e: crate::wire::spend::BadSpendCap| BadArgument(e.to_string()))
}

#[cfg(test)]
#[path = "arguments_tests.rs"]
mod tests;
