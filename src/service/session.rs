//! What an agent's harness reports of its Claude session: `needs_login`
//! and `active_model` on the roster, and the manager told when an agent
//! needs a login or has just logged in (`NeedsLogin` / `LoggedIn`).
//!
//! The harness reports (verb `report_session`) rather than the daemon
//! watching state directories: only the harness knows which model a turn
//! ran and which environment logs Claude in, and the host then parses no
//! file an untrusted container writes. Events fire on a change only, so a
//! harness restarting in a loop does not flood the manager.

use super::{Hive, HiveError};
use crate::hive::arguments;
use crate::store::agents;
use crate::wire::events::HelperEvent;
use crate::wire::ident::Ident;

impl Hive {
    /// Record `agent`'s report; tell the manager when `needs_login` changed.
    pub async fn report_session(
        &self,
        agent: &Ident,
        needs_login: Option<bool>,
        active_model: Option<String>,
    ) -> Result<(), HiveError> {
        arguments::check_model(active_model.as_deref())?;
        // The host holds the model credential (the model gateway puts it
        // on every request): no agent needs a login of its own, whatever
        // its harness sees in its container.
        let needs_login = needs_login.map(|n| n && self.config().model_credential.is_none());
        let n = agent.clone();
        let before = self
            .store()
            .run(move |c| agents::set_session(c, &n, needs_login, active_model.as_deref()))
            .await?;
        let Some(before) = before else {
            return Err(HiveError::UnknownAgent(agent.clone()));
        };
        if let Some(now) = needs_login
            && now != before
            && *agent != self.config().manager()
        {
            let agent = agent.to_string();
            self.mail()
                .to_manager(if now {
                    HelperEvent::NeedsLogin { agent }
                } else {
                    HelperEvent::LoggedIn { agent }
                })
                .await;
        }
        self.publish(agent).await;
        Ok(())
    }
}

#[cfg(test)]
#[path = "session_tests.rs"]
mod tests;
