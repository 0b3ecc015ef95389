//! A spawn or destroy's hold on its agent name: two of them on one name
//! would race (a destroy removing what a spawn is creating), so the second
//! is answered "still running" instead.

use super::{Hive, HiveError};
use crate::wire::ident::Ident;

/// A spawn or destroy's hold on its agent, released when dropped (however
/// the operation ends).
pub(super) struct Claim {
    hive: Hive,
    name: Ident,
}

impl Claim {
    /// Claim `name`, or answer that a spawn or destroy of it is running.
    pub(super) fn take(hive: &Hive, verb: &'static str, name: &Ident) -> Result<Self, HiveError> {
        if !hive.inner.roster.claim(name) {
            return Err(HiveError::StillRunning {
                verb,
                agents: vec![name.to_string()],
            });
        }
        Ok(Self {
            hive: hive.clone(),
            name: name.clone(),
        })
    }
}

impl Drop for Claim {
    fn drop(&mut self) {
        self.hive.inner.roster.release(&self.name);
    }
}
