//! The roster's rows, built and published: one agent's row from the
//! registry, its reminders, the driver's view, the crash marker and the
//! usage room's spend facts; pushed to the roster's subscribers.
//!
//! Decision: a handle of its own, not `Hive` methods, so the usage room
//! can be given it as its [`usage::Publish`] port (a cap holding or
//! letting an agent go changes its row) without a back-reference to the
//! façade. It reads the spend facts through the usage room's
//! [`usage::SpendState`] readers, never a façade field. The roster is
//! still the façade's (`roster`, `roster_state`); when it becomes a room
//! this handle is its publishing side.

use std::collections::HashMap;
use std::sync::Arc;

use super::roster_state::RosterState;
use super::{HiveError, usage};
use crate::containers::{ContainerDriver, UnitState};
use crate::hive::roster::{self, AgentRecord, RowInputs};
use crate::store::{Store, agents, reminders};
use crate::wire::host::AgentStatusRow;
use crate::wire::ident::Ident;

#[derive(Debug, Clone)]
pub(super) struct RosterRows {
    store: Store,
    driver: Arc<dyn ContainerDriver>,
    /// The hive's domain (the rows' URLs).
    domain: Option<String>,
    roster: Arc<RosterState>,
    spend: Arc<usage::SpendState>,
}

impl RosterRows {
    pub(super) fn new(
        store: Store,
        driver: Arc<dyn ContainerDriver>,
        domain: Option<String>,
        roster: Arc<RosterState>,
        spend: Arc<usage::SpendState>,
    ) -> Self {
        Self {
            store,
            driver,
            domain,
            roster,
            spend,
        }
    }

    /// The row of `record`, given its unit and its pending reminders.
    fn row_of(
        &self,
        record: &AgentRecord,
        unit: Option<&UnitState>,
        pending_reminders: u64,
    ) -> AgentStatusRow {
        roster::row(RowInputs {
            record,
            unit,
            pending_reminders,
            domain: self.domain.as_deref(),
            crashed: self.roster.is_crashed(&record.name),
            budget: self.spend.words(&record.name),
            spent_today: self.spend.today(&record.name),
        })
    }

    /// Every row, built from the store's records, the pause markers and
    /// the driver's view (start-up, and after changes were lost).
    pub(super) fn build(
        &self,
        records: &[AgentRecord],
        mut reminders: HashMap<String, u64>,
    ) -> Vec<AgentStatusRow> {
        let view = self.driver.view();
        records
            .iter()
            .map(|record| {
                let pending = reminders.remove(record.name.as_str()).unwrap_or(0);
                self.row_of(record, view.get(&record.name), pending)
            })
            .collect()
    }

    /// The current row of one agent, if managed.
    pub(super) async fn row(&self, name: &Ident) -> Result<Option<AgentStatusRow>, HiveError> {
        let n = name.clone();
        let Some((record, pending_reminders)) = self
            .store
            .read(move |c| {
                let count = reminders::count_pending(c, Some(n.as_str()))?;
                Ok(agents::get(c, &n)?.map(|r| (r, count)))
            })
            .await?
        else {
            return Ok(None);
        };
        let unit: Option<UnitState> = self.driver.state(name);
        Ok(Some(self.row_of(&record, unit.as_ref(), pending_reminders)))
    }

    /// Bring an agent's row in the roster up to date and push it to
    /// subscribers (an agent no longer managed leaves the roster).
    pub(super) async fn publish(&self, name: &Ident) {
        // Taken before the read: if a newer publish (or reload) of this
        // agent finishes first, this one's older row is dropped.
        let ticket = self.roster.ticket();
        match self.row(name).await {
            Ok(Some(row)) => self.roster.put(row, ticket),
            Ok(None) => self.roster.remove(name, ticket),
            Err(err) => tracing::warn!(agent = %name, "{name}: cannot build roster row: {err:#}"),
        }
    }
}

#[async_trait::async_trait]
impl usage::Publish for RosterRows {
    async fn publish(&self, agent: &Ident) {
        RosterRows::publish(self, agent).await;
    }
}
