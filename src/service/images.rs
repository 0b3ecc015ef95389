//! `images` and `prune_images`: the agent images the host has and which
//! agent runs which (`hivectl image ls`), and the removal of the versions
//! no agent uses (`hivectl image prune`), as the driver records them.

use super::budget::within_budget;
use super::{Hive, HiveError};
use crate::wire::images::ImageRow;

impl Hive {
    /// Every image version the driver keeps and the managed agents of
    /// each (an agent the driver has no record of is not listed).
    pub async fn images(&self) -> Result<Vec<ImageRow>, HiveError> {
        let agents = self.list().await?;
        self.driver()
            .images(&agents)
            .await
            .map_err(HiveError::Images)
    }

    /// Remove the versions no container uses but the newest (with
    /// `dry_run`, only name them); their names. In the build queue, so no
    /// spawn, rebuild or restart runs meanwhile (the driver also holds the
    /// lock of every settings write: a start that creates a container
    /// waits too); within the answer budget, the removal going on past it.
    pub async fn prune_images(&self, dry_run: bool) -> Result<Vec<String>, HiveError> {
        let hive = self.clone();
        let work = async move {
            let _queue = hive.build_queue().await;
            hive.driver().prune_images(dry_run).await
        };
        within_budget("prune", vec!["the agent images".into()], work)
            .await?
            .map_err(HiveError::Images)
    }
}

#[cfg(test)]
#[path = "images_tests.rs"]
mod tests;
