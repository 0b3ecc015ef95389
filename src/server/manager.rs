//! The manager's own verbs: approval requests and the lifecycle of
//! sub-agents. Only reachable from the manager socket (the access policy,
//! `hive::access`, refuses them elsewhere, and refuses the manager's
//! lifecycle verbs on itself: that is the operator's business).
//!
//! Arguments are checked by the service (`Hive::request_approval`, with
//! the rules of `hive::arguments`), before a row exists: a commit ref is
//! 7-40 hex digits, a flake input name cannot look like an option.

use super::reply::{answer, done, refusal};
use crate::service::approvals::Queued;
use crate::service::{Hive, HiveError, NewApproval};
use crate::wire::agent::Response;
use crate::wire::host::{ApprovalKind, LifecycleScope};
use crate::wire::ident::Ident;

/// The answer of an approval request on an agent or the manager socket:
/// `{"kind":"ok","approval":<id>}`, with `"already_pending":true` when
/// the same request was pending already (its row is the answer).
pub(super) fn queued(result: Result<Queued, HiveError>) -> Response {
    answer(result, |q| Response::queued(q.row.id, q.already_pending))
}

/// `request_apply_commit`: queue an `apply_commit` approval for `agent`.
pub async fn request_apply_commit(
    hive: &Hive,
    agent: Ident,
    commit_ref: String,
    description: Option<String>,
) -> Response {
    queued(
        hive.queue(NewApproval {
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
    queued(
        hive.queue(NewApproval {
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
    let commit_ref = serde_json::Value::from(inputs).to_string();
    queued(
        hive.queue(NewApproval {
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
