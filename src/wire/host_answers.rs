//! [`HostResponse`]'s constructors for the answers of one agent's or the
//! hive's facts (`urls`, `egress_log`, `model_log`, `inspect_agent`,
//! `images`, `prune_images`), the operator's inbox and the turns, usage
//! and budgets: beside
//! `host.rs`, which holds the request and response shapes, so neither file
//! grows past what one reads at once.

use super::agent::InboxRow;
use super::egress_audit::EgressLogRow;
use super::host::{HiveUrls, HostResponse};
use super::images::ImageRow;
use super::inspect::AgentInspect;
use super::model_log::ModelLogRow;
use super::spend::BudgetRow;
use super::turns::{TurnRow, UsageRow};

impl HostResponse {
    pub fn messages(rows: Vec<InboxRow>) -> Self {
        Self {
            messages: Some(rows),
            ..Self::success()
        }
    }

    pub fn turns(rows: Vec<TurnRow>) -> Self {
        Self {
            turns: Some(rows),
            ..Self::success()
        }
    }

    pub fn usage(rows: Vec<UsageRow>) -> Self {
        Self {
            usage: Some(rows),
            ..Self::success()
        }
    }

    pub fn budgets(rows: Vec<BudgetRow>) -> Self {
        Self {
            budgets: Some(rows),
            ..Self::success()
        }
    }

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

    pub fn images(rows: Vec<ImageRow>) -> Self {
        Self {
            images: Some(rows),
            ..Self::success()
        }
    }

    pub fn pruned(versions: Vec<String>) -> Self {
        Self {
            pruned: Some(versions),
            ..Self::success()
        }
    }
}
