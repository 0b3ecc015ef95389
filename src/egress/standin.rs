//! Test support of the model gateway (compiled for tests only): an
//! in-process TLS stand-in of the Messages API signed by a test CA
//! (`tests/support/gateway`), a gateway to it trusting that CA, and the
//! daemon's side of a model connection (a dial line in, the frames read,
//! an HTTP client on the agent's end).

use std::convert::Infallible;
use std::path::Path;
use std::pin::Pin;
use std::sync::{Arc, Mutex};
use std::task::{Context, Poll};
use std::time::Duration;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::{Body, Frame, Incoming};
use hyper::{Request, Response};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use tokio::io::{AsyncBufReadExt, AsyncReadExt, AsyncWriteExt, BufReader};
use tokio::net::{TcpListener, UnixStream};
use tokio::sync::mpsc;

use super::audit::Audit;
use super::gateway::Gateway;
use super::holds::Board;
use super::service::{ModelGateway, serve_dialled};
use super::upstream::Upstream;
use crate::wire::egress::{DialRequest, GatewayHold};
use crate::wire::egress_audit::{Verdict, VerdictLine};
use crate::wire::model_log::{CredentialName, FrameHead, METER_VERSION, MeterRow};

pub(crate) const FIXTURES: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/tests/support/gateway");
pub(crate) const REAL_KEY: &str = "sk-ant-api03-the-real-key-held-by-the-host";
pub(crate) const REAL_OAUTH: &str = "sk-ant-oat01-the-real-token-held-by-the-host";
pub(crate) const SENTINEL: &str = "hive-sentinel-h-alice";
pub(crate) const MODEL: &str = "claude-sonnet-4-5-20250929";

/// The SSE bytes the stand-in streams: usage in message_start and the
/// running total in message_delta.
pub(crate) fn sse_events() -> Vec<Bytes> {
    let start = serde_json::json!({"type": "message_start", "message": {
        "id": "msg_1", "type": "message", "role": "assistant", "model": MODEL, "content": [],
        "usage": {"input_tokens": 1200, "output_tokens": 1, "cache_creation_input_tokens": 300,
                  "cache_read_input_tokens": 4000}}});
    let delta = serde_json::json!({"type": "message_delta",
        "delta": {"stop_reason": "end_turn"}, "usage": {"output_tokens": 57}});
    vec![
        Bytes::from(format!("event: message_start\ndata: {start}\n\n")),
        Bytes::from_static(b"event: content_block_start\ndata: {\"type\":\"content_block_start\",\"index\":0,\"content_block\":{\"type\":\"text\",\"text\":\"\"}}\n\n"),
        Bytes::from_static(b"event: content_block_delta\ndata: {\"type\":\"content_block_delta\",\"index\":0,\"delta\":{\"type\":\"text_delta\",\"text\":\"hello\"}}\n\n"),
        Bytes::from(format!("event: message_delta\ndata: {delta}\n\n")),
        Bytes::from_static(b"event: message_stop\ndata: {\"type\":\"message_stop\"}\n\n"),
    ]
}

/// What the stand-in saw of one request.
#[derive(Debug, Clone)]
pub(crate) struct Seen {
    pub path: String,
    pub headers: hyper::HeaderMap,
    pub body: Bytes,
}

/// The stand-in's state, shared with the test.
#[derive(Debug)]
pub(crate) struct Standin {
    pub seen: Mutex<Vec<Seen>>,
    /// Set when a streamed answer could not be sent on (its reader gone).
    pub cut: tokio::sync::Notify,
    /// A streamed answer's events wait for this after the first.
    pub go_on: tokio::sync::Semaphore,
}

impl Standin {
    /// The paths of the requests it saw, in order.
    pub fn paths(&self) -> Vec<String> {
        let seen = self.seen.lock().unwrap_or_else(|e| e.into_inner());
        seen.iter().map(|s| s.path.clone()).collect()
    }
}

/// A body fed from a channel, as the upstream writes.
pub(crate) struct ChanBody(mpsc::Receiver<Bytes>);

impl Body for ChanBody {
    type Data = Bytes;
    type Error = Infallible;
    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
        self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
    }
}

pub(crate) type StandinBody = http_body_util::Either<Full<Bytes>, ChanBody>;

pub(crate) async fn standin_answer(
    state: Arc<Standin>,
    req: Request<Incoming>,
) -> Response<StandinBody> {
    let path = req
        .uri()
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let headers = req.headers().clone();
    let body = req.into_body().collect().await.unwrap().to_bytes();
    state.seen.lock().unwrap().push(Seen {
        path: path.clone(),
        headers,
        body: body.clone(),
    });
    let json = |status: u16, v: serde_json::Value| {
        Response::builder()
            .status(status)
            .header("content-type", "application/json")
            .header("request-id", "req_standin_1")
            .body(StandinBody::Left(Full::new(Bytes::from(v.to_string()))))
            .unwrap()
    };
    let asked: serde_json::Value = serde_json::from_slice(&body).unwrap_or_default();
    if path.starts_with("/v1/messages/count_tokens") {
        return json(200, serde_json::json!({"input_tokens": 4321}));
    }
    if path.starts_with("/v1/models") {
        return json(200, serde_json::json!({"data": [{"id": MODEL}]}));
    }
    if asked["fail"] == 500 {
        return json(
            500,
            serde_json::json!({"type": "error", "error": {"type": "api_error", "message": "stand-in broke"}}),
        );
    }
    if asked["slow"] == true {
        tokio::time::sleep(Duration::from_secs(5)).await;
    }
    if asked["stream"] != true {
        return json(
            200,
            serde_json::json!({"id": "msg_2", "type": "message", "model": asked["model"],
                "content": [{"type": "text", "text": "hi"}],
                "usage": {"input_tokens": 10, "output_tokens": 20, "cache_creation_input_tokens": 0,
                          "cache_read_input_tokens": 5}}),
        );
    }
    let (tx, rx) = mpsc::channel(1);
    let endless = asked["endless"] == true;
    tokio::spawn(async move {
        let events = sse_events();
        for (i, event) in events.iter().enumerate() {
            if i == 1 {
                let _ = state.go_on.acquire().await.map(|p| p.forget());
            }
            if tx.send(event.clone()).await.is_err() {
                state.cut.notify_one();
                return;
            }
        }
        if !endless {
            return;
        }
        loop {
            tokio::time::sleep(Duration::from_millis(20)).await;
            if tx.send(Bytes::from_static(b": ping\n\n")).await.is_err() {
                state.cut.notify_one();
                return;
            }
        }
    });
    Response::builder()
        .header("content-type", "text/event-stream")
        .header("request-id", "req_standin_sse")
        .body(StandinBody::Right(ChanBody(rx)))
        .unwrap()
}

/// Start the stand-in on 127.0.0.1 with the fixtures' server certificate.
pub(crate) async fn standin() -> (u16, Arc<Standin>) {
    let certs: Vec<_> =
        rustls::pki_types::CertificateDer::pem_file_iter(format!("{FIXTURES}/server.pem"))
            .unwrap()
            .map(Result::unwrap)
            .collect();
    let key =
        rustls::pki_types::PrivateKeyDer::from_pem_file(format!("{FIXTURES}/server.key")).unwrap();
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ServerConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .unwrap()
        .with_no_client_auth()
        .with_single_cert(certs, key)
        .unwrap();
    let acceptor = tokio_rustls::TlsAcceptor::from(Arc::new(config));
    let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
    let port = listener.local_addr().unwrap().port();
    let state = Arc::new(Standin {
        seen: Mutex::default(),
        cut: tokio::sync::Notify::new(),
        go_on: tokio::sync::Semaphore::new(0),
    });
    let shared = Arc::clone(&state);
    tokio::spawn(async move {
        loop {
            let (tcp, _) = listener.accept().await.unwrap();
            let (acceptor, state) = (acceptor.clone(), Arc::clone(&shared));
            tokio::spawn(async move {
                let Ok(tls) = acceptor.accept(tcp).await else {
                    return;
                };
                let service = hyper::service::service_fn(move |req| {
                    let state = Arc::clone(&state);
                    async move { Ok::<_, Infallible>(standin_answer(state, req).await) }
                });
                let _ = hyper::server::conn::http1::Builder::new()
                    .serve_connection(TokioIo::new(tls), service)
                    .await;
            });
        }
    });
    (port, state)
}

/// A gateway to the stand-in on `port`, trusting `ca` (a fixture), with
/// the credentials `anthropic` (an API key) and `oauth` (a token).
pub(crate) fn gateway_to(
    port: u16,
    ca: &str,
    creds: &Path,
    head_timeout: Duration,
) -> Arc<Gateway> {
    std::fs::write(creds.join("anthropic"), format!("{REAL_KEY}\n")).unwrap();
    std::fs::write(creds.join("oauth"), REAL_OAUTH).unwrap();
    let upstream = Upstream::parse(&format!("https://127.0.0.1:{port}")).unwrap();
    let tls = super::upstream::tls_config(Some(&Path::new(FIXTURES).join(ca))).unwrap();
    Arc::new(Gateway::new(
        upstream,
        tls,
        Some(creds.to_owned()),
        head_timeout,
    ))
}

/// The daemon's side of one model connection: an HTTP client on the
/// agent's end, the frames read off the service's, rows collected.
pub(crate) struct Agent {
    pub sender: hyper::client::conn::http1::SendRequest<Full<Bytes>>,
    pub rows: mpsc::UnboundedReceiver<MeterRow>,
}

/// Dial `gateway` as agent alice with `credential`, as the daemon does.
pub(crate) async fn connect(gateway: Arc<Gateway>, credential: Option<&str>) -> Agent {
    connect_as("alice", gateway, credential, Arc::default(), None).await
}

/// [`connect`] as `agent`, the service's holds on `board`, the dial line
/// carrying `hold`.
pub(crate) async fn connect_as(
    agent: &str,
    gateway: Arc<Gateway>,
    credential: Option<&str>,
    board: Arc<Board>,
    hold: Option<GatewayHold>,
) -> Agent {
    let (mut daemon, service) = UnixStream::pair().unwrap();
    let model: ModelGateway = Ok(gateway);
    tokio::spawn(async move {
        serve_dialled(service, &Audit::default(), &model, &board).await;
    });
    let dial = DialRequest {
        agent: crate::wire::ident::Ident::new(agent).unwrap(),
        allow: Vec::new(),
        verdict: 1,
        meter: METER_VERSION,
        credential: credential.map(|c| CredentialName::new(c).unwrap()),
        hold,
    };
    let line = format!("{}\n", serde_json::to_string(&dial).unwrap());
    daemon.write_all(line.as_bytes()).await.unwrap();
    let (agent_end, pipe) = tokio::io::duplex(1 << 16);
    let (service_r, mut service_w) = daemon.into_split();
    let (mut pipe_r, mut pipe_w) = tokio::io::split(pipe);
    let (rows_tx, rows) = mpsc::unbounded_channel();
    // The agent's bytes go up as they are; the service's come framed.
    tokio::spawn(async move {
        let _ = tokio::io::copy(&mut pipe_r, &mut service_w).await;
        let _ = service_w.shutdown().await;
    });
    tokio::spawn(async move {
        let mut r = BufReader::new(service_r);
        let mut line = Vec::new();
        // After the agent's end is gone, data is dropped but the frames
        // are still read to their end: the cut request's row comes last.
        let mut agent_gone = false;
        r.read_until(b'\n', &mut line).await.unwrap();
        assert_eq!(VerdictLine::parse(&line).unwrap().verdict, Verdict::Model);
        loop {
            line.clear();
            if r.read_until(b'\n', &mut line).await.unwrap_or(0) == 0 {
                break;
            }
            match FrameHead::parse(&line).unwrap() {
                FrameHead::Data(n) => {
                    let mut data = vec![0; n];
                    r.read_exact(&mut data).await.unwrap();
                    agent_gone = agent_gone || pipe_w.write_all(&data).await.is_err();
                }
                FrameHead::Meter(row) => {
                    let _ = rows_tx.send(row);
                }
            }
        }
    });
    let (sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(agent_end))
        .await
        .unwrap();
    tokio::spawn(conn);
    Agent { sender, rows }
}

pub(crate) fn post(
    path: &str,
    auth: (&str, &str),
    body: serde_json::Value,
) -> Request<Full<Bytes>> {
    Request::post(path)
        .header("host", "127.0.0.1")
        .header(auth.0, auth.1)
        .header("content-type", "application/json")
        .header("anthropic-beta", "claude-code-20250219")
        .body(Full::new(Bytes::from(body.to_string())))
        .unwrap()
}

pub(crate) async fn next_row(agent: &mut Agent) -> MeterRow {
    tokio::time::timeout(Duration::from_secs(5), agent.rows.recv())
        .await
        .expect("a meter row within 5 s")
        .expect("the connection's rows")
}
