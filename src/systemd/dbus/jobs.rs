//! Waiting for systemd jobs.
//!
//! `StartUnit` and friends return as soon as the job is *queued*; the job is
//! done when systemd emits `JobRemoved` with the job's path and a result
//! string. The driver's one signal stream is opened (and `Subscribe()`
//! called) when it connects, long before any call, and a single dispatcher
//! task reports every `JobRemoved` to the [`Jobs`] table. The table hands the
//! result to the caller who registered that job path — or, when the signal
//! came before the caller learnt its job path (systemd can finish a job
//! before its reply to `StartUnit` is read), keeps it in a short ring of
//! recent results the caller finds on registering.
//!
//! Rejected alternatives: opening a signal stream per call (a match rule
//! round trip per verb, and a window before the `AddMatch` reply in which
//! the job can finish unseen), and polling the unit's `ActiveState` (misses
//! a quick start-then-crash and cannot tell `canceled` from `failed`).

use std::collections::{HashMap, VecDeque};
use std::time::Duration;

use tokio::sync::oneshot;

/// How many finished jobs nobody waited for are remembered. Only results
/// that overtake their caller by a few microseconds need it; jobs of other
/// clients pass through and fall out.
const RECENT: usize = 256;

/// The job table shared by the dispatcher and the callers.
#[derive(Debug, Default)]
pub struct Jobs {
    waiting: HashMap<String, oneshot::Sender<String>>,
    recent: VecDeque<(String, String)>,
}

impl Jobs {
    /// The dispatcher saw `JobRemoved(job, result)`.
    pub fn finished(&mut self, job: &str, result: &str) {
        if let Some(tx) = self.waiting.remove(job) {
            let _ = tx.send(result.to_owned());
            return;
        }
        if self.recent.len() == RECENT {
            self.recent.pop_front();
        }
        self.recent.push_back((job.to_owned(), result.to_owned()));
    }

    /// A caller learnt its job path: the result, now or later.
    pub fn watch(&mut self, job: &str) -> JobWait {
        let (tx, rx) = oneshot::channel();
        if let Some(i) = self.recent.iter().position(|(j, _)| j == job) {
            if let Some((_, result)) = self.recent.remove(i) {
                let _ = tx.send(result);
            }
        } else {
            self.waiting.insert(job.to_owned(), tx);
        }
        JobWait { rx }
    }

    /// The bus connection is gone: no result will come for any pending job
    /// (they go on in systemd), and job paths of the next connection's
    /// systemd may repeat.
    pub fn connection_lost(&mut self) {
        self.waiting.clear();
        self.recent.clear();
    }
}

/// One caller's pending job.
#[derive(Debug)]
pub struct JobWait {
    rx: oneshot::Receiver<String>,
}

/// What waiting for a job gave.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Waited {
    /// `JobRemoved` came with this result string.
    Removed(String),
    /// Not within the time given; the job goes on (wait again if you like).
    Pending,
    /// The bus connection was lost; the job's end will not be seen.
    Lost,
}

impl JobWait {
    /// Wait up to `budget` for the job's end. Can be called again after
    /// [`Waited::Pending`].
    pub async fn wait(&mut self, budget: Duration) -> Waited {
        match tokio::time::timeout(budget, &mut self.rx).await {
            Ok(Ok(result)) => Waited::Removed(result),
            Ok(Err(_)) => Waited::Lost,
            Err(_) => Waited::Pending,
        }
    }
}

/// A job result string in words, for `DriverError::JobFailed`; `None` for
/// `done`. The strings are systemd's (`job_result_to_string`).
pub fn failure_outcome(result: &str) -> Option<String> {
    let words = match result {
        "done" => return None,
        "failed" => "failed",
        "timeout" => "timed out in systemd (the unit's own timeout)",
        "canceled" => "was canceled by a later job on the same unit",
        "dependency" => "failed because a unit it depends on failed",
        "skipped" => "was skipped: a condition of the unit was not met",
        "invalid" => "is not possible for this unit",
        "assert" => "failed an assertion of the unit",
        "unsupported" => "is not supported by this unit",
        "collected" => "was dropped by systemd's garbage collection",
        "once" => "was refused: the unit may only be started once",
        other => return Some(format!("ended with systemd job result {other:?}")),
    };
    Some(words.to_owned())
}

#[cfg(test)]
#[path = "jobs_tests.rs"]
mod tests;
