//! What hivectl asks of its surroundings before it sends anything: the
//! default socket, and agent names for shell completion (asked of
//! hive-c0re). Apart from `args` so the subcommands defined beside it
//! (`budget`) use them without a circle.

use std::path::PathBuf;

use crate::config::{DEFAULT_RUNTIME_DIR, HOST_SOCKET_NAME};
use crate::wire::host::HostRequest;

/// The default `--socket`: `/run/hyperhive/host.sock`.
pub fn default_socket() -> PathBuf {
    PathBuf::from(DEFAULT_RUNTIME_DIR).join(HOST_SOCKET_NAME)
}

/// Completion of agent names: asked of hive-c0re when the shell completes
/// (a short budget, nothing offered when it cannot be reached).
pub fn agent_names() -> clap_complete::engine::ArgValueCandidates {
    clap_complete::engine::ArgValueCandidates::new(|| {
        let socket = std::env::var_os("HIVE_SOCKET")
            .map(PathBuf::from)
            .unwrap_or_else(default_socket);
        let client =
            crate::client::Client::new(socket).with_budget(std::time::Duration::from_millis(500));
        match client.call(&HostRequest::List) {
            Ok(reply) => reply
                .response
                .agents
                .unwrap_or_default()
                .iter()
                .map(|n| clap_complete::engine::CompletionCandidate::new(n.as_str()))
                .collect(),
            Err(_) => Vec::new(),
        }
    })
}
