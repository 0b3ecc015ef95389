//! The manager's config repo binds (`/hive/proposed`, `/hive/applied`)
//! at a plain start: a manager container made by a daemon from before the
//! binds has settings without them, and used to get them only at
//! `hivectl rebuild`. Now a start of the manager re-renders its settings
//! first when the driver reads them back without the binds.
//!
//! Decision: only the manager, only when the binds are missing, only when
//! it is not running: every other difference between its settings and
//! its spec is `needs_update`'s business (a rebuild the operator or
//! `auto_update` chooses), and settings the daemon did not write (an
//! installation's own manager container) are left alone. Rejected:
//! re-rendering every agent's settings at every start, which would apply
//! a changed base without the rebuild that records it.

use super::Hive;
use crate::containers::{DriverError, Outcome};
use crate::wire::ident::Ident;

impl Hive {
    /// Start `name`'s container (see the module docs for the manager's).
    pub(super) async fn start_container(&self, name: &Ident) -> Result<Outcome, DriverError> {
        let running = self.driver().state(name).is_some_and(|u| u.is_running());
        if *name == self.config().manager()
            && !running
            && self.driver().has_repo_binds(name).await? == Some(false)
        {
            let spec = self
                .container_spec(name)
                .await
                .map_err(|e| DriverError::Setup(e.to_string()))?;
            tracing::info!(agent = %name, "{name}: its settings lack the config repo binds (made by an older hive-c0re); rendering them again before the start");
            self.driver().rebuild(name, &spec).await?;
        }
        self.driver().start(name).await
    }
}

#[cfg(test)]
#[path = "repo_binds_tests.rs"]
mod tests;
