//! The egress service's side of the daemon's connection, over real
//! sockets: the dial line names the agent and its list, the rest is the
//! agent's request.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};

use super::*;
use crate::testing::id;
use crate::wire::egress::EgressPattern;
use crate::wire::egress_audit::VERDICT_PREFIX;

fn line(agent: &str, allow: &[&str]) -> String {
    line_asking(agent, allow, 0)
}

/// The dial line asking for the verdict protocol `verdict` (0: none).
fn line_asking(agent: &str, allow: &[&str], verdict: u32) -> String {
    let request = DialRequest {
        agent: id(agent),
        allow: allow
            .iter()
            .map(|p| EgressPattern::new(p).unwrap())
            .collect(),
        verdict,
        meter: 0,
        credential: None,
        hold: None,
    };
    format!("{}\n", serde_json::to_string(&request).unwrap())
}

/// Write `bytes` as the daemon would and read everything the service
/// answers; its outcome.
async fn dial(bytes: String) -> (String, Outcome) {
    dial_with(bytes, Arc::new(Audit::default())).await
}

/// [`dial`] with the service's shared per-agent state.
async fn dial_with(bytes: String, audit: Arc<Audit>) -> (String, Outcome) {
    let (mut daemon, service) = UnixStream::pair().unwrap();
    let gateway: ModelGateway = Err("not set up in this test".into());
    let task =
        tokio::spawn(
            async move { serve_dialled(service, &audit, &gateway, &Board::default()).await },
        );
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

#[tokio::test]
async fn an_agent_over_its_connection_rate_is_answered_429_and_another_agent_is_not() {
    let audit = Arc::new(Audit::default());
    let now = Instant::now();
    for _ in 0..64 {
        assert!(audit.admit(&id("mallory"), now));
    }
    let request = |agent| {
        format!(
            "{}CONNECT example.org:443 HTTP/1.1\r\n\r\n",
            line(agent, &["api.anthropic.com:443"])
        )
    };
    let (text, outcome) = dial_with(request("mallory"), Arc::clone(&audit)).await;
    assert!(
        text.starts_with("HTTP/1.1 429 Too Many Requests\r\n"),
        "{text}"
    );
    assert!(
        text.contains("agent mallory opened more than 64 connections at once or 16 a second"),
        "{text}"
    );
    assert_eq!(outcome, Outcome::Limited);
    let (text, outcome) = dial_with(request("bob"), audit).await;
    assert!(text.starts_with("HTTP/1.1 403 "), "{text}");
    assert!(matches!(outcome, Outcome::Refused { .. }));
}

/// The verdict line at the start of `text`, and what follows it.
fn split_verdict(text: &str) -> (VerdictLine, &str) {
    let end = text.find('\n').expect("a verdict line") + 1;
    let line = VerdictLine::parse(&text.as_bytes()[..end]).expect("a valid verdict line");
    (line, &text[end..])
}

#[tokio::test]
async fn asked_for_it_the_service_says_its_verdict_in_one_line_before_any_byte_for_the_agent() {
    let target = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = target.local_addr().unwrap().port();
    tokio::spawn(async move {
        let (mut s, _) = target.accept().await.unwrap();
        s.write_all(b"pong").await.unwrap();
    });
    let allowed = format!("127.0.0.1:{port}");
    let list = [allowed.as_str()];
    let cases = [
        (
            format!("CONNECT {allowed} HTTP/1.1\r\n\r\n"),
            Verdict::Allowed,
            "HTTP/1.1 200 ",
        ),
        (
            "CONNECT example.org:443 HTTP/1.1\r\n\r\n".to_owned(),
            Verdict::Refused,
            "HTTP/1.1 403 ",
        ),
        (
            "BREW pot HTTP/1.1\r\n\r\n".to_owned(),
            Verdict::BadRequest,
            "HTTP/1.1 400 ",
        ),
    ];
    for (request, verdict, status) in cases {
        let (text, _) = dial(format!("{}{request}", line_asking("alice", &list, 1))).await;
        let (said, rest) = split_verdict(&text);
        assert_eq!(said.verdict, verdict, "{text}");
        assert!(rest.starts_with(status), "{text}");
        assert!(!rest.contains(VERDICT_PREFIX), "{text}");
        if verdict == Verdict::Allowed {
            assert_eq!(said.target.as_deref(), Some(allowed.as_str()));
            assert_eq!(said.address.as_deref(), Some(allowed.as_str()));
            assert!(rest.ends_with("pong"), "{text}");
        }
    }
    let (text, _) = dial(format!(
        "{}CONNECT example.org:443 HTTP/1.1\r\n\r\n",
        line_asking("alice", &list, 1)
    ))
    .await;
    let (said, _) = split_verdict(&text);
    assert_eq!(said.target.as_deref(), Some("example.org:443"));
    assert_eq!(said.reason.as_deref(), Some("not on its allow-list"));
}

#[tokio::test]
async fn a_429_is_said_as_limited_and_a_daemon_that_did_not_ask_gets_no_verdict_line() {
    let audit = Arc::new(Audit::default());
    let now = Instant::now();
    for _ in 0..64 {
        assert!(audit.admit(&id("mallory"), now));
    }
    let request = format!(
        "{}CONNECT example.org:443 HTTP/1.1\r\n\r\n",
        line_asking("mallory", &[], 1)
    );
    let (text, outcome) = dial_with(request, Arc::clone(&audit)).await;
    let (said, rest) = split_verdict(&text);
    assert_eq!(said.verdict, Verdict::Limited);
    assert!(rest.starts_with("HTTP/1.1 429 "), "{text}");
    assert_eq!(outcome, Outcome::Limited);
    let (text, _) =
        dial("{\"agent\":\"bob\",\"allow\":[]}\nCONNECT a.test:443 HTTP/1.1\r\n\r\n".to_owned())
            .await;
    assert!(text.starts_with("HTTP/1.1 403 "), "{text}");
}

#[test]
fn the_filter_probe_reads_eperm_as_enforced_and_a_reached_stack_as_not() {
    let err = |kind, text: &str| Err((kind, text.to_owned()));
    assert_eq!(
        address_filter(err(ErrorKind::PermissionDenied, "Operation not permitted")),
        AddressFilter::Enforced
    );
    assert_eq!(
        address_filter(err(ErrorKind::ConnectionRefused, "refused")),
        AddressFilter::NotEnforced
    );
    assert_eq!(address_filter(Ok(())), AddressFilter::NotEnforced);
    assert_eq!(
        address_filter(err(ErrorKind::TimedOut, "no answer within 1 s")),
        AddressFilter::Unknown("no answer within 1 s".into())
    );
}

#[tokio::test]
async fn without_a_filter_the_probe_of_a_closed_loopback_port_says_not_enforced() {
    // A port nobody listens on; this test process has no IPAddressDeny=.
    let port = crate::egress::egress_tests::closed_port().await;
    let sentinel = SocketAddr::from(([127, 0, 0, 1], port));
    assert_eq!(
        probe_address_filter(sentinel).await,
        AddressFilter::NotEnforced
    );
    assert_eq!(FILTER_SENTINEL.to_string(), "127.0.0.253:9");
}
