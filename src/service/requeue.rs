//! A harness's requeue: every popped-unacked message of its agent waits
//! again, and the turn it did not report is over. It spans two rooms (the
//! messaging room's inboxes, the usage room's live turn), so it is the
//! façade's, not either room's: neither knows of the other's state.

use super::{Hive, HiveError};
use crate::wire::ident::Ident;

impl Hive {
    /// Every popped-unacked message of `agent` waits again (the messaging
    /// room's `requeue_inflight`), and the turn it did not report is over:
    /// a harness starting (or giving a failed turn's messages back) has no
    /// turn in progress. The agent's door calls this.
    pub async fn requeue_inflight(&self, agent: &Ident) -> Result<usize, HiveError> {
        let count = self.messaging().requeue_inflight(agent).await?;
        self.usage().end_unreported_turn(agent);
        Ok(count)
    }
}
