//! The registry of agent sockets over real unix sockets (fake driver).

use crate::testing::{config_in, hive_at, id};
use std::sync::Arc;

use super::*;

fn hive(dir: &tempfile::TempDir) -> (Hive, Arc<SocketRegistry>) {
    let (hive, _) = hive_at(config_in(dir.path()), 1);
    let registry = Arc::new(SocketRegistry::new(
        CancellationToken::new(),
        TaskTracker::new(),
    ));
    hive.set_agent_sockets(registry.clone());
    (hive, registry)
}

#[tokio::test]
async fn spawn_binds_the_socket_and_destroy_removes_it() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, registry) = hive(&dir);
    hive.spawn(&id("alice")).await.unwrap();
    let path = dir.path().join("run/agents/alice/mcp.sock");
    assert!(path.exists());
    assert_eq!(registry.open_agents(), vec![id("alice")]);
    // Opening again is a no-op, not a second bind.
    registry.open(&hive, &id("alice")).unwrap();
    hive.destroy(&id("alice"), false).await.unwrap();
    assert!(!path.exists());
    assert!(registry.open_agents().is_empty());
}

/// An agent's directory is writable from its container: a socket it
/// bound there itself used to make the daemon refuse ("already
/// running"). Now the daemon's socket replaces it.
#[tokio::test]
async fn a_socket_someone_else_bound_at_the_agents_path_is_replaced_by_the_daemons() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, registry) = hive(&dir);
    let path = dir.path().join("run/agents/zed/mcp.sock");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    let someone_else = std::os::unix::net::UnixListener::bind(&path).unwrap();
    someone_else.set_nonblocking(true).unwrap();
    hive.spawn(&id("zed")).await.unwrap();
    assert_eq!(registry.open_agents(), vec![id("zed")]);
    let mut conn = tokio::net::UnixStream::connect(&path).await.unwrap();
    use tokio::io::{AsyncBufReadExt, AsyncWriteExt};
    conn.write_all(b"{\"cmd\":\"status\"}\n").await.unwrap();
    let mut line = String::new();
    tokio::io::BufReader::new(conn)
        .read_line(&mut line)
        .await
        .unwrap();
    assert!(line.contains("\"kind\":\"status\""), "{line}");
    assert!(
        someone_else.accept().is_err(),
        "the impostor got the connection"
    );
}

#[tokio::test]
async fn a_stale_socket_file_is_replaced_and_the_manager_gets_its_own_path() {
    let dir = tempfile::tempdir().unwrap();
    let (hive, registry) = hive(&dir);
    let path = dir.path().join("run/manager/mcp.sock");
    std::fs::create_dir_all(path.parent().unwrap()).unwrap();
    drop(std::os::unix::net::UnixListener::bind(&path).unwrap());
    assert_eq!(registry.open_manager(&hive).unwrap(), path);
    assert!(std::os::unix::net::UnixStream::connect(&path).is_ok());
    registry.remove_files();
    assert!(!path.exists());
}
