//! Claude Code lifecycle hooks (verb `hook_event`, sent by `hive-agent
//! hook`): the payload taken in by the seed's rules ([`crate::hive::hooks`]),
//! kept whole among the agent's newest events, the session state it implies
//! set on the row and pushed to subscribers at once, and the manager told
//! when the agent has waited on a person longer than
//! `attention_after_secs` (`HelperEvent::NeedsAttention`).

use std::time::Duration;

use super::{Hive, HiveError};
use crate::clock::rfc3339;
use crate::hive::hooks::{Attention, HookEvent};
use crate::store::hooks;
use crate::wire::events::HelperEvent;
use crate::wire::host::SessionState;
use crate::wire::ident::Ident;
use crate::wire::notify::NotifyEvent;

impl Hive {
    /// Take in one hook payload from `agent` (of an interactive session:
    /// its transcript is counted); the state it moved to, if any.
    pub async fn hook_event(
        &self,
        agent: &Ident,
        payload: String,
    ) -> Result<Option<SessionState>, HiveError> {
        self.hook_event_from(agent, payload, false).await
    }

    /// Take in one hook payload from `agent`; the state it moved to, if any.
    /// A refused payload stores nothing. Unless `headless` (a harness
    /// turn's Claude, which `report_turn` counts), the transcript it names
    /// is read for new spend ([`Hive::count_transcript`]); a failure there
    /// is logged and changes nothing else.
    pub async fn hook_event_from(
        &self,
        agent: &Ident,
        payload: String,
        headless: bool,
    ) -> Result<Option<SessionState>, HiveError> {
        let received = std::time::Instant::now();
        let event = HookEvent::parse(payload.as_bytes())?;
        let pointer = if headless {
            None
        } else {
            crate::hive::transcript::pointer(&event.raw)
        };
        let now = self.now();
        let n = agent.clone();
        let moved = self
            .transact(move |c| {
                let tx = crate::store::immediate(c)?;
                let Some(current) = hooks::session(&tx, &n)? else {
                    return Err(HiveError::UnknownAgent(n));
                };
                let next = event
                    .next(current.as_ref().map(|a| a.state))
                    .map(|(state, message)| Attention {
                        state,
                        message,
                        since: now,
                    });
                hooks::record(&tx, &n, now, &event.name, &event.raw, next.as_ref())?;
                tx.commit()?;
                Ok(next)
            })
            .await?;
        if let Some(next) = &moved {
            self.publish(agent).await;
            self.inner.metrics.hook_reached_roster(received.elapsed());
            if next.state.needs_person() {
                self.mail().to_operator(NotifyEvent::NeedsPerson {
                    agent: agent.clone(),
                    state: next.state,
                    message: next.message.clone(),
                });
                self.arm_attention(agent.clone(), next.clone());
            }
        }
        // After the roster has the state: the read is the slower part.
        if let Some((path, session)) = pointer
            && let Err(err) = self.count_transcript(agent, &path, session).await
        {
            tracing::warn!(agent = %agent, "transcript not counted: {err}");
        }
        Ok(moved.map(|next| next.state))
    }

    /// After `attention_after_secs`, tell the manager if `agent` is still
    /// in the state `entered` (same state, same since).
    fn arm_attention(&self, agent: Ident, entered: Attention) {
        let after = self.config().attention_after_secs;
        if after == 0 || agent == self.config().manager() {
            return;
        }
        let hive = self.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_secs(after)).await;
            let n = agent.clone();
            let still = match hive.store().run(move |c| hooks::session(c, &n)).await {
                Ok(Some(Some(now))) => now == entered,
                Ok(_) => false,
                Err(err) => {
                    tracing::warn!(%agent, "attention timer cannot read the session: {err}");
                    false
                }
            };
            if still {
                hive.mail()
                    .to_manager(HelperEvent::NeedsAttention {
                        agent: agent.to_string(),
                        state: entered.state,
                        message: entered.message,
                        since: rfc3339(entered.since),
                    })
                    .await;
            }
        });
    }
}

#[cfg(test)]
#[path = "hooks_tests.rs"]
mod tests;
