//! Telling the operator away from the dashboard: the site's
//! `notify_command` runs with one JSON event on its stdin
//! ([`crate::wire::notify`]) when an agent starts needing a person, an
//! approval is queued, or a container crashes.
//!
//! Decisions:
//! - **It never holds up the hive.** An event is handed to one worker task
//!   through a bounded queue ([`QUEUE`]); a full queue drops the event with
//!   a warning. The worker runs one command at a time, each for at most
//!   [`RUN_LIMIT`], and logs a failure at warn; nothing waits on it.
//! - **Rate-limited per event and agent**: a second run for the same event
//!   name and agent within `notify_interval_secs` is dropped (debug log),
//!   so a flapping agent sends one page, not hundreds.
//! - argv from the config, no shell ([`crate::command`]).

use std::collections::HashMap;
use std::sync::{Mutex, PoisonError};
use std::time::{Duration, Instant};

use tokio::sync::mpsc;

use super::Hive;
use crate::wire::notify::{Notification, NotifyEvent};

/// Events waiting for the worker at most.
const QUEUE: usize = 64;
/// How long one run may take before it is killed.
const RUN_LIMIT: Duration = Duration::from_secs(30);

/// The queue to the worker; the receiving end until the worker takes it.
#[derive(Debug)]
pub(super) struct NotifyState {
    tx: mpsc::Sender<Notification>,
    rx: Mutex<Option<mpsc::Receiver<Notification>>>,
}

impl Default for NotifyState {
    fn default() -> Self {
        let (tx, rx) = mpsc::channel(QUEUE);
        Self {
            tx,
            rx: Mutex::new(Some(rx)),
        }
    }
}

impl Hive {
    /// Queue `event` for `notify_command`, if one is configured; never
    /// waits.
    pub(crate) fn notify_operator(&self, event: NotifyEvent) {
        if self.config().notify_command.is_empty() {
            return;
        }
        let name = event.name();
        let at = self.now();
        if let Err(mpsc::error::TrySendError::Full(n)) =
            self.inner.notify.tx.try_send(Notification { at, event })
        {
            tracing::warn!(agent = %n.event.agent(), "notify_command is behind: {name} event dropped");
        }
    }

    /// The worker: run `notify_command` for each queued event, one at a
    /// time, until `shutdown`. Started once by the daemon; a second call
    /// returns at once.
    pub async fn run_notifier(self, shutdown: tokio_util::sync::CancellationToken) {
        let taken = self
            .inner
            .notify
            .rx
            .lock()
            .unwrap_or_else(PoisonError::into_inner)
            .take();
        let Some(mut rx) = taken else { return };
        let interval = Duration::from_secs(self.config().notify_interval_secs);
        let mut last: HashMap<(&'static str, String), Instant> = HashMap::new();
        while let Some(n) = tokio::select! {
            () = shutdown.cancelled() => None,
            n = rx.recv() => n,
        } {
            let key = (n.event.name(), n.event.agent().to_string());
            if last.get(&key).is_some_and(|t| t.elapsed() < interval) {
                tracing::debug!(agent = %key.1, "{}: {} not notified again within {interval:?}", key.1, key.0);
                continue;
            }
            last.insert(key, Instant::now());
            self.notify_once(&n).await;
        }
    }

    async fn notify_once(&self, n: &Notification) {
        let Ok(mut line) = serde_json::to_vec(n) else {
            return;
        };
        line.push(b'\n');
        let argv = &self.config().notify_command;
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
