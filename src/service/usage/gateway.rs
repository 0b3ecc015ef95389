//! The budgets' holds as the model gateway enforces them (issue 46): the
//! held agents of [`super::SpendState`], each with the budget's words, the
//! command that raises it and how long a held request waits (the config's
//! `budget_hold_secs`). The daemon's door pushes them to the egress service
//! whenever they change (`server::egress_control`) and puts an agent's own
//! hold on each of its connections' dial lines; the gateway holds that
//! agent's model requests while it is held.

use std::collections::BTreeMap;

use tokio::sync::watch;

use super::Usage;
use crate::hive::spend::Hold;
use crate::wire::egress::{GatewayHold, HoldsLine, MAX_HOLD_WAIT_MS};
use crate::wire::ident::Ident;

/// The held agents, watched: the line to send now, and a wait for the
/// next change.
#[derive(Debug)]
pub struct GatewayHolds {
    held: watch::Receiver<BTreeMap<Ident, Hold>>,
    wait_ms: u64,
}

impl GatewayHolds {
    /// Every hold now, as the egress service takes it; seen from now on.
    pub fn line(&mut self) -> HoldsLine {
        let wait_ms = self.wait_ms;
        HoldsLine {
            holds: self
                .held
                .borrow_and_update()
                .iter()
                .map(|(name, hold)| (name.clone(), hold.at_gateway(wait_ms)))
                .collect(),
        }
    }

    /// Wait until the holds change since the last [`GatewayHolds::line`];
    /// `false` when the hive is gone.
    pub async fn changed(&mut self) -> bool {
        self.held.changed().await.is_ok()
    }
}

impl Usage {
    /// The held agents, for the push to the egress service.
    pub fn gateway_holds(&self) -> GatewayHolds {
        GatewayHolds {
            held: self.state.spend.watch_held(),
            wait_ms: self.hold_wait_ms(),
        }
    }

    /// The hold on `name` now, for its connection's dial line.
    pub fn gateway_hold(&self, name: &Ident) -> Option<GatewayHold> {
        let hold = self.state.spend.hold(name)?;
        Some(hold.at_gateway(self.hold_wait_ms()))
    }

    /// `budget_hold_secs` in ms, at most the day the service takes.
    fn hold_wait_ms(&self) -> u64 {
        let secs = self.state.settings.budget_hold_secs;
        secs.saturating_mul(1000).min(MAX_HOLD_WAIT_MS)
    }
}
