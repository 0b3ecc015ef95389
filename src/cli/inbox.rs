//! `hivectl inbox show ID`: one message of the operator's inbox, whole
//! (the listing, `hivectl inbox`, shortens bodies to a table cell); its
//! text is `render::inbox_message`.
//!
//! host.sock's `inbox` with `id` answers that one row (`messages: [row]`)
//! or refuses with `unknown_item`. A daemon older than the field ignores it
//! and answers its newest rows: the asked one is taken from them, and when
//! it is not among them hivectl says so itself, with the same code's exit
//! status.

use clap::Subcommand;

use crate::wire::host::{HostRequest, HostResponse};

/// `inbox show`; none lists.
#[derive(Debug, Clone, PartialEq, Eq, Subcommand)]
pub enum InboxAction {
    /// Print one message whole: who sent it, when, what it answers, then
    /// its body line by line.
    #[command(after_help = "Examples:\n  hivectl inbox show 7\n  hivectl inbox show 7 --json")]
    Show {
        /// The message's id, as `hivectl inbox` shows it.
        id: i64,
    },
}

/// The request of `inbox show ID`.
pub fn request(id: i64) -> HostRequest {
    HostRequest::Inbox {
        limit: None,
        id: Some(id),
    }
}

/// Why a successful answer to `inbox show ID` still has no message `ID`
/// (a daemon older than the `id` field answered its newest rows); `None`
/// for any other request or when the message is there.
pub fn not_answered(request: &HostRequest, response: &HostResponse) -> Option<String> {
    let HostRequest::Inbox { id: Some(id), .. } = request else {
        return None;
    };
    let rows = response.messages.as_deref().unwrap_or(&[]);
    (!rows.iter().any(|m| m.id == *id)).then(|| {
        format!(
            "message {id} is not among the newest messages hive-c0re answered (it is older than \
             this hivectl and cannot fetch one by id); `hivectl --json inbox -n N` shows bodies whole"
        )
    })
}

#[cfg(test)]
#[path = "inbox_tests.rs"]
mod tests;
