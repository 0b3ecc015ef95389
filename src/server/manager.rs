//! The manager's own verbs: approval requests and the lifecycle of
//! sub-agents. Only reachable from the manager socket (the access policy,
//! `hive::access`, refuses them elsewhere, and refuses the manager's
//! lifecycle verbs on itself: that is the operator's business).
//!
//! Arguments are checked here, before a row exists: a commit ref is 7-40
//! hex digits, a flake input name cannot look like an option.

use super::reply::{answer, done, refusal};
use crate::service::{Hive, HiveError, NewApproval};
use crate::wire::agent::Response;
use crate::wire::codes::ErrorCode;
use crate::wire::host::{ApprovalKind, LifecycleScope};
use crate::wire::ident::Ident;

/// Is `commit_ref` a git object name (7-40 hex digits)?
pub fn check_commit_ref(commit_ref: &str) -> Result<(), String> {
    let ok =
        (7..=40).contains(&commit_ref.len()) && commit_ref.bytes().all(|b| b.is_ascii_hexdigit());
    if ok {
        Ok(())
    } else {
        Err(format!(
            "commit_ref {:?} is not a commit: give 7-40 hex digits (e.g. `git rev-parse --short HEAD`)",
            commit_ref.chars().take(60).collect::<String>()
        ))
    }
}

/// Is `input` a flake input name (letters, digits, `_`, `-`, not starting
/// with `-`)?
pub fn check_input(input: &str) -> Result<(), String> {
    let ok = !input.is_empty()
        && input.len() <= 100
        && !input.starts_with('-')
        && input
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'_' || b == b'-');
    if ok {
        Ok(())
    } else {
        Err(format!(
            "input {:?} is not a flake input name: use letters, digits, '_' and '-', not starting with '-'",
            input.chars().take(60).collect::<String>()
        ))
    }
}

fn queued(result: Result<crate::wire::host::Approval, HiveError>) -> Response {
    answer(result, |row| {
        tracing::info!(
            id = row.id,
            kind = row.kind.as_str(),
            "manager queued an approval"
        );
        Response::ok()
    })
}

/// `request_apply_commit`: queue an `apply_commit` approval for `agent`.
pub async fn request_apply_commit(
    hive: &Hive,
    agent: Ident,
    commit_ref: String,
    description: Option<String>,
) -> Response {
    if let Err(message) = check_commit_ref(&commit_ref) {
        return Response::err(ErrorCode::BadRequest, message);
    }
    if let Err(err) = hive.require(&agent).await {
        return refusal(&err);
    }
    queued(
        hive.request_approval(NewApproval {
            agent,
            kind: ApprovalKind::ApplyCommit,
            commit_ref,
            description,
        })
        .await,
    )
}

/// `request_init_config`: queue an `init_config` approval for a new name.
pub async fn request_init_config(
    hive: &Hive,
    name: Ident,
    description: Option<String>,
) -> Response {
    match hive.require(&name).await {
        Ok(_) => return refusal(&HiveError::AlreadyManaged(name)),
        Err(HiveError::UnknownAgent(_)) => {}
        Err(err) => return refusal(&err),
    }
    queued(
        hive.request_approval(NewApproval {
            agent: name,
            kind: ApprovalKind::InitConfig,
            commit_ref: String::new(),
            description,
        })
        .await,
    )
}

/// `request_update_meta_inputs`: queue an `update_meta_inputs` approval;
/// its payload is the JSON array of inputs (empty: every input).
pub async fn request_update_meta_inputs(
    hive: &Hive,
    inputs: Vec<String>,
    description: Option<String>,
) -> Response {
    if let Some(message) = inputs.iter().find_map(|i| check_input(i).err()) {
        return Response::err(ErrorCode::BadRequest, message);
    }
    let commit_ref = serde_json::Value::from(inputs).to_string();
    queued(
        hive.request_approval(NewApproval {
            agent: hive.config().manager(),
            kind: ApprovalKind::UpdateMetaInputs,
            commit_ref,
            description,
        })
        .await,
    )
}

/// A lifecycle verb of the manager socket.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Verb {
    Kill,
    Start,
    Restart,
    /// Rebuild.
    Update,
}

/// `kill`/`start`/`restart`/`update` of a sub-agent (the policy spared
/// the manager before this is reached).
pub async fn lifecycle(hive: &Hive, verb: Verb, name: &Ident) -> Response {
    match verb {
        Verb::Kill => done(hive.kill(name).await),
        Verb::Start => {
            if let Err(err) = hive.require(name).await {
                return refusal(&err);
            }
            done(
                hive.start(&LifecycleScope::agents(vec![name.clone()]))
                    .await,
            )
        }
        Verb::Restart => done(hive.restart(name).await),
        Verb::Update => done(hive.rebuild(name).await),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn a_commit_ref_is_seven_to_forty_hex_digits() {
        for good in ["0123456", "abcdefABCDEF0123", &"f".repeat(40)] {
            assert!(check_commit_ref(good).is_ok(), "{good}");
        }
        for bad in [
            "012345",
            &"a".repeat(41),
            "0123456g",
            "--force",
            "HEAD~1",
            "",
        ] {
            let err = check_commit_ref(bad).unwrap_err();
            assert!(err.contains("7-40 hex digits"), "{err}");
        }
    }

    #[test]
    fn an_input_name_cannot_look_like_an_option() {
        for good in ["nixpkgs", "home-manager", "hive_c0re"] {
            assert!(check_input(good).is_ok(), "{good}");
        }
        for bad in ["", "-x", "--override-input", "a b", "a/b", "a;b"] {
            assert!(check_input(bad).is_err(), "{bad:?}");
        }
    }
}
