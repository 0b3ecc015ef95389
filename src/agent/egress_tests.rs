//! The forwarder over real sockets: a TCP client on loopback, a unix
//! listener standing in for the hive's egress socket.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::UnixListener;

use super::*;

#[tokio::test]
async fn every_byte_goes_to_the_egress_socket_and_its_answer_comes_back() {
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("egress.sock");
    let hive = UnixListener::bind(&path).unwrap();
    let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(forward(listener, path));
    let standin = tokio::spawn(async move {
        let (mut s, _) = hive.accept().await.unwrap();
        let mut got = vec![0u8; 64];
        let n = s.read(&mut got).await.unwrap();
        s.write_all(b"HTTP/1.1 403 Forbidden\r\n\r\nno")
            .await
            .unwrap();
        s.shutdown().await.unwrap();
        got.truncate(n);
        got
    });
    let mut client = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    client
        .write_all(b"CONNECT example.org:443 HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let mut answer = String::new();
    client.read_to_string(&mut answer).await.unwrap();
    assert_eq!(answer, "HTTP/1.1 403 Forbidden\r\n\r\nno");
    assert_eq!(
        standin.await.unwrap(),
        b"CONNECT example.org:443 HTTP/1.1\r\n\r\n"
    );
    task.abort();
}

#[tokio::test]
async fn without_the_hives_socket_a_connection_is_closed_not_left_hanging() {
    let dir = tempfile::tempdir().unwrap();
    let listener = bind("127.0.0.1:0".parse().unwrap()).await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(forward(listener, dir.path().join("egress.sock")));
    let mut client = TcpStream::connect(("127.0.0.1", port)).await.unwrap();
    client
        .write_all(b"CONNECT x:443 HTTP/1.1\r\n\r\n")
        .await
        .unwrap();
    let mut answer = Vec::new();
    let read = tokio::time::timeout(
        std::time::Duration::from_secs(5),
        client.read_to_end(&mut answer),
    );
    assert!(read.await.is_ok(), "the connection was left open");
    assert!(answer.is_empty());
    task.abort();
}

#[tokio::test]
async fn the_forwarder_refuses_to_listen_beyond_loopback() {
    let err = bind("0.0.0.0:0".parse().unwrap()).await.unwrap_err();
    assert!(matches!(err, ForwardError::NotLoopback(_)), "{err}");
}

#[test]
fn the_proxy_variables_point_both_spellings_at_the_forwarder_and_keep_loopback_direct() {
    let env = proxy_env(4123);
    let get = |k: &str| env.iter().find(|(n, _)| n == k).map(|(_, v)| v.as_str());
    for k in ["HTTPS_PROXY", "https_proxy", "HTTP_PROXY", "http_proxy"] {
        assert_eq!(get(k), Some("http://127.0.0.1:4123"), "{k}");
    }
    assert_eq!(get("NO_PROXY"), Some("localhost,127.0.0.1,::1"));
    assert_eq!(get("no_proxy"), get("NO_PROXY"));
}

#[test]
fn the_egress_socket_is_the_agent_sockets_sibling() {
    assert_eq!(
        egress_socket(Path::new("/run/hive/mcp.sock")),
        PathBuf::from("/run/hive/egress.sock")
    );
}

#[test]
fn claude_gets_the_forwarder_as_its_base_url_and_a_sentinel_unless_it_has_its_own() {
    let env = model_env(4100, false, false, "h-alice\n");
    assert_eq!(
        env,
        [
            (
                "ANTHROPIC_BASE_URL".to_owned(),
                "http://127.0.0.1:4100".to_owned()
            ),
            (
                "ANTHROPIC_AUTH_TOKEN".to_owned(),
                "hive-sentinel-h-alice".to_owned()
            ),
        ]
    );
    // The agent's own base URL and its own login are left alone.
    assert_eq!(model_env(4100, true, true, "h-alice"), []);
    // A host name is never more than a name in the sentinel.
    let env = model_env(4100, true, false, "h-x; rm -rf /");
    assert_eq!(env[0].1, "hive-sentinel-h-xrm-rf");
}
