//! The agenda's timer: one task that fires due reminders, closes questions
//! whose TTL ran out and fires due schedules.
//!
//! Everything due is decided by the hive's [`crate::clock::Clock`], and all
//! the work is in [`Hive::tick`], so tests move a `ManualClock` and call
//! `tick()` instead of sleeping. The daemon calls `tick()` once before
//! READY=1 (catch-up: what fell due while it was down is delivered at
//! start) and then every [`TICK_EVERY`]. Each delivery is written in the
//! same transaction that marks its item done, so a tick that races another
//! (or a crash between two) never delivers twice. Rejected: sleeping until
//! the next due time, which would have to be re-armed by every new
//! reminder, edit and wall-clock jump; a one-second poll of three indexed
//! queries costs nothing.

use std::time::Duration;

use tokio_util::sync::CancellationToken;

use super::messaging::{self, Wakes};
use super::{Hive, HiveError};
use crate::hive::Recipient;
use crate::hive::agenda::REMINDER_SENDER;
use crate::store::agents::ident;
use crate::store::{immediate, reminders};

/// How often the daemon ticks.
pub const TICK_EVERY: Duration = Duration::from_secs(1);

/// What one tick did.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub struct TickReport {
    pub reminders: usize,
    pub questions_expired: usize,
    pub schedules: usize,
}

impl Hive {
    /// Do everything that is due now.
    pub async fn tick(&self) -> Result<TickReport, HiveError> {
        Ok(TickReport {
            reminders: self.deliver_due_reminders().await?,
            questions_expired: self.expire_questions().await?,
            schedules: self.fire_due_schedules().await?,
        })
    }

    /// Tick every [`TICK_EVERY`] until `shutdown`. A failed tick is logged
    /// and retried at the next one.
    pub async fn run_timer(self, shutdown: CancellationToken) {
        let mut every = tokio::time::interval(TICK_EVERY);
        every.set_missed_tick_behavior(tokio::time::MissedTickBehavior::Delay);
        loop {
            tokio::select! {
                () = shutdown.cancelled() => return,
                _ = every.tick() => {}
            }
            if let Err(err) = self.tick().await {
                tracing::error!("agenda tick failed: {err}");
            }
        }
    }

    /// Deliver every reminder due now, each once, from `reminder`.
    async fn deliver_due_reminders(&self) -> Result<usize, HiveError> {
        let now = self.now();
        let (owners, wakes) = self
            .store()
            .run(move |c| {
                let tx = immediate(c)?;
                let (mut owners, mut wakes) = (Vec::new(), Wakes::default());
                for r in reminders::due(&tx, now)? {
                    if reminders::mark_sent(&tx, r.id, now)? {
                        let owner = ident(r.owner)?;
                        let to = Recipient::Agent(owner.clone());
                        wakes.add(
                            messaging::insert(&tx, REMINDER_SENDER, &to, &r.message, None, now)?.1,
                        );
                        owners.push(owner);
                    }
                }
                tx.commit()?;
                Ok((owners, wakes))
            })
            .await?;
        self.mail().wake(wakes);
        for name in &owners {
            self.publish(name).await;
        }
        if !owners.is_empty() {
            tracing::info!(count = owners.len(), "reminders delivered");
        }
        Ok(owners.len())
    }
}
