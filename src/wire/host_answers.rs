//! [`HostResponse`]'s constructors for the answers of one agent's or the
//! hive's facts (`urls`, `egress_log`, `model_log`, `inspect_agent`): beside
//! `host.rs`, which holds the request and response shapes, so neither file
//! grows past what one reads at once.

use super::egress_audit::EgressLogRow;
use super::host::{HiveUrls, HostResponse};
use super::inspect::AgentInspect;
use super::model_log::ModelLogRow;

impl HostResponse {
    pub fn urls(urls: HiveUrls) -> Self {
        Self {
            urls: Some(urls),
            ..Self::success()
        }
    }

    pub fn egress_log(rows: Vec<EgressLogRow>) -> Self {
        Self {
            egress_log: Some(rows),
            ..Self::success()
        }
    }

    pub fn model_log(rows: Vec<ModelLogRow>) -> Self {
        Self {
            model_log: Some(rows),
            ..Self::success()
        }
    }

    pub fn inspect(facts: AgentInspect) -> Self {
        Self {
            inspect: Some(Box::new(facts)),
            ..Self::success()
        }
    }
}
