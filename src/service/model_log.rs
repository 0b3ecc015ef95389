//! The model gateway's meter (issue 46, step 1): every request an agent
//! made to the model, as the gateway in the egress service read the
//! upstream's answer — tokens, status, request id, list cost — kept in the
//! hive's store per agent and shown by `hivectl model-log` (host.sock
//! `model_log`).
//!
//! The path: the gateway sends one meter frame per request on the agent's
//! connection ([`crate::wire::model_log`]); the daemon (`server::
//! egress_socket`), which knows the agent from its socket, hands each row
//! here, and it is written at once in a job of the store's writer (group
//! commit: many rows one fsync). Rejected: batching them in memory as the
//! egress audit does ([`super::egress_audit`]), which would lose the last
//! quarter second of spend with the daemon — and spend is what budgets
//! will be decided on (step 2). A request is a few a second per agent at
//! most, so a write each is cheap.
//!
//! The rows are the spend (step 2 of issue 46): written with their hour's
//! sums (`store::model_log`), they feed `hivectl usage`, the roster's
//! spend today, `/metrics` and every budget, which are evaluated again
//! once each row is committed ([`super::usage::Usage::metered`]).
//!
//! Kept by a plain `destroy`, deleted by `destroy --purge`, as the egress
//! audit is (`store::purge`).

use super::{Hive, HiveError};
use crate::hive::arguments;
use crate::store::model_log;
use crate::wire::ident::Ident;
use crate::wire::model_log::{DEFAULT_ROWS_PER_AGENT, MeterRow, ModelLogRow};

impl Hive {
    /// Record one model request of `agent`: written in a job of the
    /// store's writer now, then counted and the budgets evaluated with it
    /// ([`Hive::meter`]). Never waits; call it from a task of the runtime.
    pub fn record_model_request(&self, agent: &Ident, row: MeterRow) {
        let hive = self.clone();
        let agent = agent.clone();
        tokio::spawn(async move {
            if let Err(err) = hive.meter(&agent, row).await {
                tracing::error!(agent = %agent, "{agent}: a metered model request could not be recorded: {err}");
            }
        });
    }

    /// Commit one model request of `agent` with its hour's sums, then
    /// count it and evaluate the budgets with it, so a budget it reached
    /// holds the agent's next `recv` once this returns.
    pub async fn meter(&self, agent: &Ident, row: MeterRow) -> Result<(), HiveError> {
        let (n, kept) = (agent.clone(), row.clone());
        self.store()
            .run(move |c| model_log::write(c, &n, &[row], DEFAULT_ROWS_PER_AGENT))
            .await?;
        self.usage().metered(agent, &kept).await;
        Ok(())
    }

    /// Agent `name`'s newest `limit` model requests, oldest first. A
    /// destroyed agent's are kept until a purge; a name with neither rows
    /// nor an agent is unknown.
    pub async fn model_log(&self, name: &Ident, limit: u32) -> Result<Vec<ModelLogRow>, HiveError> {
        arguments::check_model_log_limit(limit)?;
        self.kept_rows(name, move |c, n| model_log::recent(c, n, limit))
            .await
    }
}

#[cfg(test)]
#[path = "model_log_tests.rs"]
mod tests;
