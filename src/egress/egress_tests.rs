//! The proxy against real sockets: a unix socket pair for the agent's end
//! (as the per-agent socket would hand it), a TCP listener on this host's
//! loopback as the target.

use tokio::io::{AsyncReadExt, AsyncWriteExt};
use tokio::net::{TcpListener, UnixStream};

use super::*;
use crate::testing::id;

fn allow(patterns: &[&str]) -> AllowList {
    AllowList::parse(patterns).unwrap()
}

/// A target on 127.0.0.1 that answers `reply` to whatever it gets, and
/// hands what it got back through the join handle.
async fn target(reply: &'static [u8]) -> (u16, tokio::task::JoinHandle<Vec<u8>>) {
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let task = tokio::spawn(async move {
        let (mut s, _) = listener.accept().await.unwrap();
        let mut got = vec![0u8; 4096];
        let n = s.read(&mut got).await.unwrap();
        got.truncate(n);
        s.write_all(reply).await.unwrap();
        s.shutdown().await.unwrap();
        got
    });
    (port, task)
}

/// The agent's end of a connection the proxy serves for `agent` under
/// `list`, after `request` was written to it; the proxy's outcome.
async fn ask(
    agent: &str,
    list: &AllowList,
    request: &str,
) -> (UnixStream, tokio::task::JoinHandle<Outcome>) {
    let (mut mine, proxy_end) = UnixStream::pair().unwrap();
    let (name, list) = (id(agent), list.clone());
    let proxy =
        tokio::spawn(async move { serve(proxy_end, &name, &list, &Audit::default()).await });
    mine.write_all(request.as_bytes()).await.unwrap();
    (mine, proxy)
}

async fn read_all(s: &mut UnixStream) -> String {
    let mut out = Vec::new();
    s.read_to_end(&mut out).await.unwrap();
    String::from_utf8_lossy(&out).into_owned()
}

#[test]
fn patterns_match_hosts_ports_and_subdomains_without_case() {
    let list = allow(&["api.anthropic.com:443", "*.example.org", "localhost:8080"]);
    assert!(list.allows("api.anthropic.com", 443));
    assert!(list.allows("API.Anthropic.com", 443));
    assert!(!list.allows("api.anthropic.com", 80));
    assert!(!list.allows("evil-api.anthropic.com", 443));
    assert!(list.allows("a.b.example.org", 1));
    assert!(!list.allows("example.org", 443), "*.x is not x itself");
    assert!(!list.allows("badexample.org", 443));
    assert!(list.allows("localhost", 8080));
    assert!(!AllowList::default().allows("localhost", 8080));
    assert_eq!(
        AllowList::parse(&["api.anthropic.com:443"]).map(|l| l.0.len()),
        Ok(1)
    );
    for bad in [
        "",
        "a b",
        "host:0",
        "host:99999",
        "*.",
        "a..b",
        "http://x",
        "x/y",
    ] {
        assert_eq!(
            AllowList::parse(&[bad]),
            Err(BadPattern(bad.into())),
            "{bad:?}"
        );
    }
}

#[test]
fn request_heads_become_a_tunnel_or_an_origin_form_request() {
    assert_eq!(
        parse_head(b"CONNECT api.anthropic.com:443 HTTP/1.1\r\nHost: x\r\n\r\n"),
        Some(Request::Connect {
            host: "api.anthropic.com".into(),
            port: 443
        })
    );
    let Some(Request::Http { host, port, head }) = parse_head(
        b"GET http://Example.org:8080/a?b HTTP/1.1\r\nHost: example.org\r\n\
          Proxy-Authorization: x\r\nConnection: keep-alive\r\n\r\n",
    ) else {
        panic!("not parsed");
    };
    assert_eq!((host.as_str(), port), ("example.org", 8080));
    assert_eq!(
        String::from_utf8(head).unwrap(),
        "GET /a?b HTTP/1.1\r\nHost: example.org\r\nConnection: close\r\n\r\n"
    );
    for bad in [
        &b"GET /relative HTTP/1.1\r\n\r\n"[..],
        b"CONNECT a b HTTP/1.1\r\n\r\n",
        b"GET https://x/ HTTP/1.1\r\n\r\n",
        b"CONNECT bad_host!:443 HTTP/1.1\r\n\r\n",
    ] {
        assert_eq!(parse_head(bad), None, "{}", String::from_utf8_lossy(bad));
    }
}

#[tokio::test]
async fn an_allowed_connect_tunnels_bytes_both_ways() {
    let (port, got) = target(b"from the target").await;
    let list = allow(&[&format!("127.0.0.1:{port}")]);
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\nfrom the agent");
    let (mut agent, proxy) = ask("alice", &list, &request).await;
    let text = read_all(&mut agent).await;
    assert_eq!(
        text,
        "HTTP/1.1 200 Connection established\r\n\r\nfrom the target"
    );
    assert_eq!(got.await.unwrap(), b"from the agent");
    drop(agent);
    match proxy.await.unwrap() {
        Outcome::Allowed { host, up, down } => {
            assert_eq!((host.as_str(), up, down), ("127.0.0.1", 14, 15));
        }
        other => panic!("{other:?}"),
    }
}

#[tokio::test]
async fn a_host_not_on_the_list_is_refused_with_a_403_naming_it_and_how_to_ask() {
    let (port, _never) = target(b"").await;
    let list = allow(&["api.anthropic.com:443"]);
    let request = format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n");
    let (mut agent, proxy) = ask("bob", &list, &request).await;
    let text = read_all(&mut agent).await;
    assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
    assert!(
        text.contains(&format!(
            "localhost:{port} is not on agent bob's allow-list"
        )),
        "{text}"
    );
    assert!(text.contains("Ask your operator to allow it"), "{text}");
    assert!(
        text.contains(&format!("request_egress tool (host \"localhost:{port}\"")),
        "{text}"
    );
    assert_eq!(
        proxy.await.unwrap(),
        Outcome::Refused {
            host: "localhost".into()
        }
    );
}

#[tokio::test]
async fn plain_http_is_forwarded_in_origin_form_and_the_answer_comes_back() {
    let (port, got) = target(b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nhi").await;
    let list = allow(&["127.0.0.1"]);
    let request = format!("GET http://127.0.0.1:{port}/x HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n");
    let (mut agent, proxy) = ask("carl", &list, &request).await;
    let text = read_all(&mut agent).await;
    assert!(text.ends_with("\r\n\r\nhi"), "{text}");
    assert_eq!(
        String::from_utf8(got.await.unwrap()).unwrap(),
        "GET /x HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n"
    );
    drop(agent);
    assert!(matches!(proxy.await.unwrap(), Outcome::Allowed { .. }));
}

#[tokio::test]
async fn garbage_is_a_400_and_a_dead_target_a_502() {
    let list = allow(&["127.0.0.1"]);
    let (mut agent, proxy) = ask("dan", &list, "HELLO\r\n\r\n").await;
    assert!(read_all(&mut agent).await.starts_with("HTTP/1.1 400 "));
    assert_eq!(proxy.await.unwrap(), Outcome::Failed);
    let port = closed_port().await;
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    let (mut agent, proxy) = ask("dan", &list, &request).await;
    assert!(read_all(&mut agent).await.starts_with("HTTP/1.1 502 "));
    assert_eq!(proxy.await.unwrap(), Outcome::Failed);
}

#[tokio::test]
async fn an_allowed_name_resolving_to_loopback_is_refused_naming_the_address_and_never_dialled() {
    // Before issue 44 this tunnelled to the host's loopback listener.
    let (port, never) = target(b"the host's loopback service").await;
    let list = allow(&[&format!("localhost:{port}")]);
    let request = format!("CONNECT localhost:{port} HTTP/1.1\r\n\r\n");
    let (mut agent, proxy) = ask("eve", &list, &request).await;
    let text = read_all(&mut agent).await;
    assert!(text.starts_with("HTTP/1.1 403 Forbidden\r\n"), "{text}");
    assert!(
        text.contains(&format!("localhost:{port} resolved to ")) && text.contains("loopback"),
        "{text}"
    );
    assert!(text.contains("grant its IP literal"), "{text}");
    assert_eq!(
        proxy.await.unwrap(),
        Outcome::Refused {
            host: "localhost".into()
        }
    );
    assert!(!never.is_finished(), "the loopback target was dialled");
}

#[tokio::test]
async fn a_wildcard_matching_an_ip_literal_does_not_open_loopback() {
    let (port, never) = target(b"").await;
    let list = allow(&["*.0.0.1"]);
    let request = format!("CONNECT 127.0.0.1:{port} HTTP/1.1\r\n\r\n");
    let (mut agent, proxy) = ask("eve", &list, &request).await;
    let text = read_all(&mut agent).await;
    assert!(
        text.contains(&format!("127.0.0.1:{port} is a loopback address")),
        "{text}"
    );
    assert!(matches!(proxy.await.unwrap(), Outcome::Refused { .. }));
    assert!(!never.is_finished());
}

#[test]
fn only_an_exact_pattern_grants_an_ip_literal() {
    let list = allow(&["127.0.0.2:47021", "*.0.0.1", "10.1.2.3", "example.org"]);
    assert!(list.grants_literal("127.0.0.2", 47021));
    assert!(!list.grants_literal("127.0.0.2", 47022));
    assert!(!list.grants_literal("127.0.0.1", 80), "a wildcard");
    assert!(list.grants_literal("10.1.2.3", 1));
    assert!(!list.grants_literal("example.org", 80), "a name");
    assert!(
        !list.grants_literal("0177.0.0.1", 80),
        "not a canonical literal"
    );
}

#[tokio::test]
async fn an_unfinished_request_head_is_answered_408_at_its_deadline() {
    // Before issue 44 a head never finished held the task for ever.
    let (mut mine, proxy_end) = UnixStream::pair().unwrap();
    let list = allow(&["127.0.0.1"]);
    let proxy = tokio::spawn(async move {
        let deadline = std::time::Duration::from_millis(200);
        serve_within(
            proxy_end,
            &id("sly"),
            &list,
            &Audit::default(),
            deadline,
            false,
            None,
        )
        .await
    });
    mine.write_all(b"CONNECT 127.0.0.1:1 HTTP/1.1\r\nX-Slow: ")
        .await
        .unwrap();
    let text = tokio::time::timeout(std::time::Duration::from_secs(5), read_all(&mut mine))
        .await
        .expect("no answer within 5 s");
    assert!(
        text.starts_with("HTTP/1.1 408 Request Timeout\r\n"),
        "{text}"
    );
    assert!(
        text.contains("no complete request head within 0.2 s"),
        "{text}"
    );
    assert_eq!(proxy.await.unwrap(), Outcome::Failed);
}

/// A loopback port nobody listens on (bound, then closed).
pub(super) async fn closed_port() -> u16 {
    TcpListener::bind("127.0.0.1:0")
        .await
        .unwrap()
        .local_addr()
        .unwrap()
        .port()
}
