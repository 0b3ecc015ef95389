//! The driver used when `--driver systemd` finds no system bus.
//!
//! The daemon still starts, so the operator can read the roster, approvals
//! and topology from the store; every lifecycle verb answers why it cannot
//! act. Rejected alternative: refusing to start, which hides the data the
//! operator needs most when the host is half broken.

use std::collections::HashMap;

use tokio::sync::broadcast;

use super::{
    ContainerDriver, ContainerSpec, DriverError, Outcome, StopMode, UnitChange, UnitState,
};
use crate::wire::host::Signal;
use crate::wire::ident::Ident;
use crate::wire::images::ImageRow;

/// Answers every lifecycle call with [`DriverError::Unavailable`].
#[derive(Debug)]
pub struct Unavailable {
    reason: String,
    changes: broadcast::Sender<UnitChange>,
}

impl Unavailable {
    pub fn new(reason: impl Into<String>) -> Self {
        Self {
            reason: reason.into(),
            changes: broadcast::channel(1).0,
        }
    }

    fn err(&self) -> DriverError {
        DriverError::Unavailable(self.reason.clone())
    }
}

#[async_trait::async_trait]
impl ContainerDriver for Unavailable {
    async fn resync(&self) -> Result<(), DriverError> {
        Ok(())
    }
    fn view(&self) -> HashMap<Ident, UnitState> {
        HashMap::new()
    }
    fn changes(&self) -> broadcast::Receiver<UnitChange> {
        self.changes.subscribe()
    }
    async fn create(&self, _: &Ident, _: &ContainerSpec) -> Result<(), DriverError> {
        Err(self.err())
    }
    async fn rebuild(&self, _: &Ident, _: &ContainerSpec) -> Result<Outcome, DriverError> {
        Err(self.err())
    }
    async fn exists(&self, _: &Ident) -> Result<bool, DriverError> {
        Err(self.err())
    }
    async fn images(&self, _: &[Ident]) -> Result<Vec<ImageRow>, DriverError> {
        Err(self.err())
    }
    async fn prune_images(&self, _: bool) -> Result<Vec<String>, DriverError> {
        Err(self.err())
    }
    async fn destroy(&self, _: &Ident, _: bool) -> Result<(), DriverError> {
        Err(self.err())
    }
    async fn start(&self, _: &Ident) -> Result<Outcome, DriverError> {
        Err(self.err())
    }
    async fn stop(&self, _: &Ident, _: StopMode) -> Result<Outcome, DriverError> {
        Err(self.err())
    }
    async fn restart(&self, _: &Ident) -> Result<Outcome, DriverError> {
        Err(self.err())
    }
    async fn signal(&self, _: &Ident, _: Signal) -> Result<Outcome, DriverError> {
        Err(self.err())
    }
}
