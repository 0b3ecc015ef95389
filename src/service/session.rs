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
            self.notify_manager(if now {
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
mod tests {
    use crate::store::agents;
    use crate::testing::{config_in, hive_at, id};

    async fn manager_events(hive: &super::Hive) -> Vec<String> {
        crate::testing::manager_events(hive, &["needs_login", "logged_in"]).await
    }

    #[tokio::test]
    async fn a_login_change_reaches_the_roster_and_the_manager_once_per_change() {
        let dir = tempfile::tempdir().unwrap();
        let (hive, _driver) = hive_at(config_in(dir.path()), 1000);
        let alice = id("alice");
        hive.spawn(&alice).await.unwrap();
        hive.report_session(&alice, Some(true), None).await.unwrap();
        hive.report_session(&alice, Some(true), None).await.unwrap();
        assert_eq!(
            manager_events(&hive).await,
            [r#"{"event":"needs_login","agent":"alice"}"#]
        );
        let record = |h: super::Hive| async move {
            h.store()
                .run(|c| agents::get(c, &id("alice")))
                .await
                .unwrap()
                .unwrap()
        };
        assert!(record(hive.clone()).await.needs_login);
        hive.report_session(&alice, Some(false), Some("claude-opus-4-1".into()))
            .await
            .unwrap();
        assert_eq!(
            manager_events(&hive).await,
            [
                r#"{"event":"needs_login","agent":"alice"}"#,
                r#"{"event":"logged_in","agent":"alice"}"#
            ]
        );
        let r = record(hive.clone()).await;
        assert!(!r.needs_login);
        assert_eq!(r.active_model.as_deref(), Some("claude-opus-4-1"));
        // A model-only report leaves the login as it is.
        hive.report_session(&alice, None, Some("m2".into()))
            .await
            .unwrap();
        assert!(!record(hive.clone()).await.needs_login);
        assert_eq!(manager_events(&hive).await.len(), 2);
    }

    #[tokio::test]
    async fn a_report_for_an_unmanaged_name_is_refused() {
        let dir = tempfile::tempdir().unwrap();
        let (hive, _driver) = hive_at(config_in(dir.path()), 1000);
        let err = hive
            .report_session(&id("ghost"), Some(true), None)
            .await
            .unwrap_err();
        assert!(err.to_string().contains("ghost"), "{err}");
    }
}
