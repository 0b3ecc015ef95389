//! `show`: one approval and, for a fetched config proposal, what it
//! changes against what is deployed (`main..proposal/<id>`), for the
//! operator to review before approving.
//!
//! Decision: the diff is git's own (`--stat --summary`, the patch with
//! renames), made in the hive's applied repo with no external diff, no
//! textconv and no attributes; it is text, capped ([`PATCH_CAP`]), with
//! every control character but newline and tab replaced, so a proposal
//! cannot drive the operator's terminal; binary files and symlinks are
//! flagged. Nothing of it is ever rendered as HTML.

use super::{Hive, HiveError};
use crate::hive::proposal::Tag;
use crate::store::approvals;
use crate::wire::host::{ApprovalKind, Review};

/// The most bytes of patch `show` answers.
pub const PATCH_CAP: usize = 64 << 10;

impl Hive {
    /// Approval `id` and, if it is a fetched proposal, its diff.
    pub async fn review(&self, id: i64) -> Result<Review, HiveError> {
        let approval = self
            .store()
            .read(move |c| approvals::get(c, id))
            .await?
            .ok_or(HiveError::UnknownApproval(id))?;
        let mut review = Review {
            approval,
            stat: String::new(),
            patch: String::new(),
            truncated: false,
            flagged: Vec::new(),
        };
        let row = &review.approval;
        if row.kind != ApprovalKind::ApplyCommit || row.fetched_sha.is_none() {
            return Ok(review);
        }
        let tag = format!("refs/tags/{}", Tag::Proposal.name(row.id));
        let (stat, patch, truncated, flagged) = self
            .repos()
            .diff(&row.agent, "refs/heads/main", &tag, PATCH_CAP)
            .await?;
        review.stat = printable(&stat);
        review.patch = printable(&patch);
        review.truncated = truncated;
        review.flagged = flagged.iter().map(|f| printable(f)).collect();
        Ok(review)
    }
}

/// `text` with every control character but newline and tab as `?`.
pub fn printable(text: &str) -> String {
    text.chars()
        .map(|c| {
            if c.is_control() && c != '\n' && c != '\t' {
                '?'
            } else {
                c
            }
        })
        .collect()
}
