use super::*;
use tokio::net::UnixListener;

#[tokio::test]
async fn a_missing_socket_is_retried_until_the_budget_then_reported_as_restarting() {
    let dir = tempfile::tempdir().unwrap();
    let client = AgentSocket::new(dir.path().join("mcp.sock"));
    let started = std::time::Instant::now();
    let err = client
        .call(&Request::Status, Duration::from_millis(700))
        .await
        .unwrap_err();
    assert!(matches!(err, SocketError::Restarting { .. }), "{err}");
    assert!(err.to_string().contains("restarting"), "{err}");
    assert!(started.elapsed() >= Duration::from_millis(300));
}

#[tokio::test]
async fn a_socket_that_appears_during_the_budget_is_used() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.sock");
    let client = AgentSocket::new(&path);
    let late = path.clone();
    let server = tokio::spawn(async move {
        tokio::time::sleep(Duration::from_millis(300)).await;
        let listener = UnixListener::bind(&late).unwrap();
        let (stream, _) = listener.accept().await.unwrap();
        let (r, mut w) = stream.into_split();
        let mut line = String::new();
        BufReader::new(r).read_line(&mut line).await.unwrap();
        assert_eq!(line, "{\"cmd\":\"status\"}\n");
        w.write_all(b"{\"kind\":\"status\",\"unread\":4}\n")
            .await
            .unwrap();
    });
    let answer = client
        .call(&Request::Status, Duration::from_secs(5))
        .await
        .unwrap();
    assert_eq!(answer, Response::Status { unread: 4 });
    server.await.unwrap();
}

#[tokio::test]
async fn a_peer_that_hangs_up_mid_answer_is_no_answer_not_a_crash() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("mcp.sock");
    let listener = UnixListener::bind(&path).unwrap();
    tokio::spawn(async move {
        let (mut stream, _) = listener.accept().await.unwrap();
        stream.write_all(b"{\"kind\":").await.unwrap();
    });
    let err = AgentSocket::new(&path)
        .call(&Request::Status, Duration::from_secs(5))
        .await
        .unwrap_err();
    assert!(matches!(err, SocketError::NoAnswer { .. }), "{err}");
}
