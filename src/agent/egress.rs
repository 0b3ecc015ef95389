//! The egress forwarder inside the container: a TCP listener on the
//! container's loopback whose every connection is relayed, byte for byte,
//! to the hive's egress proxy on the agent's `egress.sock` (beside
//! `mcp.sock` in `/run/hive`). The container has no network but its
//! loopback, so this is its only way out; the proxy on the host checks the
//! agent's allow-list, resolves the name and dials.
//!
//! `hive-agent run` starts one on an ephemeral port and hands Claude (and
//! everything it runs) `HTTPS_PROXY`/`HTTP_PROXY` pointing at it
//! ([`proxy_env`]); `hive-agent egress-forward` runs one alone, on a port
//! of your choice, for a shell (`machinectl shell`).
//!
//! Nothing is parsed here: the request goes to the host as it came, and
//! the host's answer (a tunnel, a response, a 403) comes back as it is.

use std::net::SocketAddr;
use std::path::{Path, PathBuf};

use tokio::io::copy_bidirectional_with_sizes;
use tokio::net::{TcpListener, TcpStream, UnixStream};

/// Bytes each direction copies at once (as the hive's side does; the
/// agent may not import its proxy module).
const COPY_BUF: usize = 64 * 1024;

/// The egress socket's file name, beside the agent socket.
pub const EGRESS_SOCKET_NAME: &str = "egress.sock";

/// The egress socket beside agent socket `socket`.
pub fn egress_socket(socket: &Path) -> PathBuf {
    socket.with_file_name(EGRESS_SOCKET_NAME)
}

/// Why the forwarder could not start.
#[derive(Debug, thiserror::Error)]
pub enum ForwardError {
    #[error("the egress forwarder listens on loopback only, not {0}")]
    NotLoopback(SocketAddr),
    #[error("cannot listen on {addr} for the egress forwarder")]
    Bind {
        addr: SocketAddr,
        #[source]
        source: std::io::Error,
    },
}

/// Listen on `addr`, a loopback address (port 0: any free port).
pub async fn bind(addr: SocketAddr) -> Result<TcpListener, ForwardError> {
    if !addr.ip().is_loopback() {
        return Err(ForwardError::NotLoopback(addr));
    }
    TcpListener::bind(addr)
        .await
        .map_err(|source| ForwardError::Bind { addr, source })
}

/// The proxy variables for a forwarder on `port`, both spellings (curl
/// reads only the lowercase `http_proxy`; Node's and Python's clients read
/// either). Loopback stays direct: it is the container's own.
pub fn proxy_env(port: u16) -> Vec<(String, String)> {
    let url = format!("http://127.0.0.1:{port}");
    let direct = "localhost,127.0.0.1,::1".to_owned();
    let mut env = Vec::new();
    for (k, v) in [
        ("HTTPS_PROXY", &url),
        ("HTTP_PROXY", &url),
        ("NO_PROXY", &direct),
    ] {
        env.push((k.to_owned(), v.clone()));
        env.push((k.to_ascii_lowercase(), v.clone()));
    }
    env
}

/// The model gateway's variables for Claude, for a forwarder on `port`
/// (issue 46): `ANTHROPIC_BASE_URL` at the forwarder itself — a request in
/// origin form (`POST /v1/messages`) goes through it to the hive's model
/// gateway, which knows the agent from its socket — unless the agent's
/// own configuration names a base URL (`has_base_url`); and, unless the
/// agent has a login of its own (`own_login`), a sentinel credential
/// (`ANTHROPIC_AUTH_TOKEN=hive-sentinel-<host>`): not a secret, only what
/// makes Claude Code send its requests, which the gateway answers with the
/// host's credential put in its place.
pub fn model_env(
    port: u16,
    has_base_url: bool,
    own_login: bool,
    host: &str,
) -> Vec<(String, String)> {
    let mut env = Vec::new();
    if !has_base_url {
        env.push((
            "ANTHROPIC_BASE_URL".to_owned(),
            format!("http://127.0.0.1:{port}"),
        ));
    }
    if !own_login {
        let host: String = host
            .chars()
            .filter(|c| c.is_ascii_alphanumeric() || *c == '-')
            .take(64)
            .collect();
        env.push((
            "ANTHROPIC_AUTH_TOKEN".to_owned(),
            format!("{SENTINEL_PREFIX}{host}"),
        ));
    }
    env
}

/// What the harness's sentinel credential starts with (the gateway's
/// `SENTINEL_PREFIX`; the agent may not import the gateway).
pub const SENTINEL_PREFIX: &str = "hive-sentinel-";

/// Relay every connection `listener` accepts to `socket` until the task is
/// dropped. A connection the hive does not take (no socket: the daemon is
/// restarting, or this is not a hive container) is closed, and logged.
pub async fn forward(listener: TcpListener, socket: PathBuf) {
    loop {
        let (client, _) = match listener.accept().await {
            Ok(accepted) => accepted,
            Err(err) => {
                tracing::warn!("egress forwarder: accept failed: {err}");
                tokio::time::sleep(std::time::Duration::from_millis(100)).await;
                continue;
            }
        };
        let socket = socket.clone();
        tokio::spawn(relay(client, socket));
    }
}

async fn relay(mut client: TcpStream, socket: PathBuf) {
    let mut hive = match UnixStream::connect(&socket).await {
        Ok(s) => s,
        Err(err) => {
            tracing::warn!(
                "egress forwarder: cannot reach the hive at {}: {err}",
                socket.display()
            );
            return;
        }
    };
    let _ = client.set_nodelay(true);
    let _ = copy_bidirectional_with_sizes(&mut client, &mut hive, COPY_BUF, COPY_BUF).await;
}

#[cfg(test)]
#[path = "egress_tests.rs"]
mod tests;
