//! Logs for the operator and the manager: an agent's container journal and
//! the host journal, through the validated journalctl runner.

use super::{Hive, HiveError};
use crate::config::DriverKind;
use crate::systemd::journal::query::UnitFilter;
use crate::systemd::journal::{Follow, HostJournalRequest, JournalEntry, JournalQuery};
use crate::wire::ident::Ident;

impl Hive {
    /// Refuse a container journal the fake driver cannot have (journalctl
    /// would only say it cannot open the system bus).
    fn require_container_journal(&self, name: &Ident) -> Result<(), HiveError> {
        let config = self.config();
        if config.driver == DriverKind::Fake && config.journal_directory.is_none() {
            return Err(HiveError::NoContainerJournal(name.clone()));
        }
        Ok(())
    }

    fn agent_query(
        name: &Ident,
        lines: Option<u32>,
        unit: Option<&str>,
    ) -> Result<JournalQuery, HiveError> {
        let mut query = JournalQuery::agent_logs(name.clone(), lines);
        query.unit = unit.map(UnitFilter::new).transpose()?;
        Ok(query)
    }

    /// The newest entries of an agent's container journal.
    pub async fn agent_logs(
        &self,
        name: &Ident,
        lines: Option<u32>,
        unit: Option<&str>,
    ) -> Result<Vec<JournalEntry>, HiveError> {
        self.require(name).await?;
        self.require_container_journal(name)?;
        let query = Self::agent_query(name, lines, unit)?;
        tracing::debug!(agent = %name, "{name}: reading container journal");
        Ok(self.journal().read(&query).await?)
    }

    /// Follow an agent's container journal from its newest entries on.
    pub async fn follow_agent_logs(
        &self,
        name: &Ident,
        lines: Option<u32>,
        unit: Option<&str>,
    ) -> Result<Follow, HiveError> {
        self.require(name).await?;
        self.require_container_journal(name)?;
        let query = Self::agent_query(name, lines, unit)?;
        Ok(self.journal().follow(&query)?)
    }

    /// The host journal, filtered.
    pub async fn host_journal(
        &self,
        request: &HostJournalRequest<'_>,
    ) -> Result<Vec<JournalEntry>, HiveError> {
        let query = JournalQuery::host_journal(request)?;
        Ok(self.journal().read(&query).await?)
    }

    /// Follow the host journal, filtered, from its newest entries on.
    pub async fn follow_host_journal(
        &self,
        request: &HostJournalRequest<'_>,
    ) -> Result<Follow, HiveError> {
        let query = JournalQuery::host_journal(request)?.followed()?;
        Ok(self.journal().follow(&query)?)
    }
}
