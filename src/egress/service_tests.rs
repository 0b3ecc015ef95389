//! The egress service's side of the daemon's connection, over real
//! sockets: the dial line names the agent and its list, the rest is the
//! agent's request.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};

use super::*;
use crate::testing::id;
use crate::wire::egress::EgressPattern;

fn line(agent: &str, allow: &[&str]) -> String {
    let request = DialRequest {
        agent: id(agent),
        allow: allow
            .iter()
            .map(|p| EgressPattern::new(p).unwrap())
            .collect(),
    };
    format!("{}\n", serde_json::to_string(&request).unwrap())
}

/// Write `bytes` as the daemon would and read everything the service
/// answers; its outcome.
async fn dial(bytes: String) -> (String, Outcome) {
    let (mut daemon, service) = UnixStream::pair().unwrap();
    let task = tokio::spawn(serve_dialled(service));
    daemon.write_all(bytes.as_bytes()).await.unwrap();
    let mut out = Vec::new();
    daemon.read_to_end(&mut out).await.unwrap();
    // The agent hangs up, which ends the tunnel's other direction.
    drop(daemon);
    (
        String::from_utf8_lossy(&out).into_owned(),
        task.await.unwrap(),
    )
}

#[tokio::test]
async fn the_dial_lines_agent_and_list_decide_and_the_tunnel_follows_in_the_same_connection() {
    let target = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = target.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut s, _) = target.accept().await.unwrap();
        let mut got = [0u8; 4];
        s.read_exact(&mut got).await.unwrap();
        s.write_all(b"pong").await.unwrap();
    });
    let allowed = format!("127.0.0.1:{port}");
    let request = format!(
        "{}CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nping",
        line("alice", &[&allowed])
    );
    let (text, outcome) = dial(request).await;
    assert_eq!(text, "HTTP/1.1 200 Connection established\r\n\r\npong");
    assert!(
        matches!(outcome, Outcome::Allowed { up: 4, down: 4, .. }),
        "{outcome:?}"
    );
}

#[tokio::test]
async fn a_host_off_the_lines_list_is_refused_naming_the_lines_agent() {
    let request = format!(
        "{}CONNECT example.org:443 HTTP/1.1\r\n\r\n",
        line("bob", &["api.anthropic.com:443"])
    );
    let (text, outcome) = dial(request).await;
    assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
    assert!(
        text.contains("example.org:443 is not on agent bob's allow-list"),
        "{text}"
    );
    assert_eq!(
        outcome,
        Outcome::Refused {
            host: "example.org".into()
        }
    );
}

#[tokio::test]
async fn a_connection_without_a_valid_dial_line_is_answered_503_and_dials_nothing() {
    for bytes in [
        "CONNECT example.org:443 HTTP/1.1\r\n\r\n".to_owned(),
        "{\"agent\":\"../x\",\"allow\":[]}\n".to_owned(),
        "{\"agent\":\"a\",\"allow\":[\"*\"]}\n".to_owned(),
    ] {
        let (text, outcome) = dial(bytes.clone()).await;
        assert!(text.starts_with("HTTP/1.1 503 "), "{bytes:?}: {text}");
        assert_eq!(outcome, Outcome::Failed, "{bytes:?}");
    }
}
