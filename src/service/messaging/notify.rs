//! Telling the operator away from the dashboard: the site's
//! `notify_command` runs with one JSON event on its stdin
//! ([`crate::wire::notify`]) when an agent starts needing a person, an
//! approval is queued, or a container crashes.
//!
//! Decisions:
//! - **It never holds up the hive.** An event is handed to one worker task
//!   through a queue ([`super::notify_state`]) and nothing waits on it.
//!   The worker runs one command at a time, each for at most
//!   [`RUN_LIMIT`], and logs a failure at warn.
//! - **Rate-limited per event and agent, before queueing**: an event of
//!   the same name for the same agent accepted within
//!   `notify_interval_secs` is dropped at once (debug log), so a flapping
//!   agent sends one page, not hundreds, and a flood takes no place.
//! - **Fair per agent**: each agent has its own place in the queue and the
//!   worker serves agents in turn, so one agent's events never drop
//!   another's (issue 44: one agent's approval spam filled the old 64-slot
//!   queue and another's approval was never told).
//! - argv from the config, no shell ([`crate::command`]).

use std::time::Duration;

use super::notify_state::Pushed;
use super::{Mail, Messaging};
use crate::wire::notify::{Notification, NotifyEvent};

/// How long one run may take before it is killed.
const RUN_LIMIT: Duration = Duration::from_secs(30);

impl Mail {
    /// Queue `event` for `notify_command`, if one is configured; never
    /// waits.
    pub(crate) fn to_operator(&self, event: NotifyEvent) {
        let settings = &self.state.settings;
        if settings.notify_command.is_empty() {
            return;
        }
        let interval = i64::try_from(settings.notify_interval_secs).unwrap_or(i64::MAX);
        let (name, agent) = (event.name(), event.agent().clone());
        let at = self.state.clock.now_unix();
        let notify = &self.state.notify;
        if notify.push(Notification { at, event }, interval) == Pushed::TooSoon {
            tracing::debug!(%agent, "{agent}: {name} not notified again within {interval} s");
        }
    }
}

impl Messaging {
    /// The worker: run `notify_command` for each queued event, one at a
    /// time, agent after agent, until `shutdown`. Started once by the
    /// daemon; a second call returns at once.
    pub async fn run_notifier(self, shutdown: tokio_util::sync::CancellationToken) {
        let notify = &self.state.notify;
        if !notify.take() {
            return;
        }
        while !shutdown.is_cancelled() {
            match notify.pop() {
                Some(n) => self.notify_once(&n).await,
                None => tokio::select! {
                    () = shutdown.cancelled() => return,
                    () = notify.ready() => {}
                },
            }
        }
    }

    async fn notify_once(&self, n: &Notification) {
        let Ok(mut line) = serde_json::to_vec(n) else {
            return;
        };
        line.push(b'\n');
        let argv = &self.state.settings.notify_command;
        let run = crate::command::run_fed("notify_command", argv, &[], Some(&line));
        let agent = n.event.agent();
        match tokio::time::timeout(RUN_LIMIT, run).await {
            Ok(Ok(_)) => tracing::debug!(%agent, "notify_command ran for {}", n.event.name()),
            Ok(Err(err)) => {
                tracing::warn!(%agent, "notify_command for {} failed: {err}", n.event.name())
            }
            Err(_) => {
                tracing::warn!(%agent, "notify_command for {} killed after {RUN_LIMIT:?}", n.event.name())
            }
        }
    }
}

#[cfg(test)]
#[path = "notify_tests.rs"]
mod tests;
