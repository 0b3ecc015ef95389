//! The answer budget: how long a request waits for its work before the
//! door answers "still in progress" while the work goes on.
//!
//! Decision: a file of its own, used by lifecycle verbs and by approvals
//! (an approved spawn runs within it), so neither of those reaches into
//! the other for it.

use std::future::Future;
use std::time::Duration;

use super::HiveError;

/// How long a request waits for its work before answering "still in
/// progress" (clients give up after 5 s).
pub const ANSWER_BUDGET: Duration = Duration::from_secs(4);

/// Run `work` in its own task; answer with its result if it ends within the
/// budget, else [`HiveError::StillRunning`] while it goes on.
pub(crate) async fn within_budget<T: Send + 'static>(
    verb: &'static str,
    agents: Vec<String>,
    work: impl Future<Output = T> + Send + 'static,
) -> Result<T, HiveError> {
    match tokio::time::timeout(ANSWER_BUDGET, tokio::spawn(work)).await {
        Ok(Ok(value)) => Ok(value),
        Ok(Err(join)) => Err(HiveError::Internal(format!("{verb} task ended: {join}"))),
        Err(_) => Err(HiveError::StillRunning { verb, agents }),
    }
}
