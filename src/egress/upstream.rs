//! The model gateway's way to the upstream (issue 46): where it is, the
//! TLS it is reached over, and the credential the host holds for it.
//!
//! - **One upstream, configured on the service** (`--model-upstream`,
//!   default `https://api.anthropic.com`): the connector dials it whatever
//!   the request's URI says, so nothing an agent sends can steer the
//!   gateway elsewhere. `https` only: the credential never crosses a wire
//!   in the clear.
//! - **Verified TLS with the host's roots** (`rustls-native-certs`: the
//!   system store, as `curl` on the host trusts it) plus an optional extra
//!   CA file (`--model-ca`: a test's stand-in, an operator's relay).
//!   Rejected: a bundled root list (webpki-roots), which would differ from
//!   the host's without a word and age with the package; and turning
//!   verification off for a stand-in, which a test would then not test.
//! - **Credentials are systemd credentials of the service**
//!   (`LoadCredential=NAME:PATH` or `LoadCredentialEncrypted=`): read from
//!   `$CREDENTIALS_DIRECTORY/NAME` for each request of a connection naming it, so a
//!   rotated file is used by the next request without a restart. The
//!   value is never logged, never in a `Debug`, never sent to the daemon.

use std::future::Future;
use std::io;
use std::path::{Path, PathBuf};
use std::pin::Pin;
use std::sync::Arc;
use std::task::{Context, Poll};

use hyper::Uri;
use hyper_util::client::legacy::connect::{Connected, Connection};
use hyper_util::rt::TokioIo;
use rustls::pki_types::pem::PemObject;
use rustls::pki_types::{CertificateDer, ServerName};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::net::TcpStream;
use tokio_rustls::TlsConnector;
use tokio_rustls::client::TlsStream;

use crate::wire::model_log::CredentialName;

/// The upstream by default.
pub const DEFAULT_UPSTREAM: &str = "https://api.anthropic.com";

/// The upstream as configured: an `https://host[:port]` URL, no path.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Upstream {
    pub host: String,
    pub port: u16,
}

/// Why the upstream or its TLS cannot be set up.
#[derive(Debug, thiserror::Error)]
pub enum UpstreamError {
    #[error(
        "the model upstream {0:?} is not an https://host[:port] URL (no path, no user, no query)"
    )]
    BadUrl(String),
    #[error("cannot read the model upstream's extra CA file {path}: {source}")]
    Ca {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
    #[error("the model upstream's extra CA file {0} holds no usable PEM certificate")]
    NoCa(PathBuf),
    #[error(
        "no trusted root certificate at all: the host's store is empty and no extra CA was given"
    )]
    NoRoots,
}

impl Upstream {
    /// Parse `https://host[:port]` (a trailing `/` allowed).
    pub fn parse(url: &str) -> Result<Self, UpstreamError> {
        let bad = || UpstreamError::BadUrl(url.to_owned());
        let rest = url.strip_prefix("https://").ok_or_else(bad)?;
        let rest = rest.strip_suffix('/').unwrap_or(rest);
        if rest.is_empty() || rest.contains(['/', '@', '?', '#']) {
            return Err(bad());
        }
        let (host, port) = match super::host_port(rest, 443) {
            Some(hp) => hp,
            None => return Err(bad()),
        };
        Ok(Self { host, port })
    }

    /// `host[:port]` as a `Host` header says it.
    pub fn authority(&self) -> String {
        let host = if self.host.contains(':') {
            format!("[{}]", self.host)
        } else {
            self.host.clone()
        };
        if self.port == 443 {
            host
        } else {
            format!("{host}:{}", self.port)
        }
    }
}

/// The TLS client configuration: the host's roots and `extra_ca`'s.
pub fn tls_config(extra_ca: Option<&Path>) -> Result<rustls::ClientConfig, UpstreamError> {
    let mut roots = rustls::RootCertStore::empty();
    let native = rustls_native_certs::load_native_certs();
    for err in &native.errors {
        tracing::warn!("model gateway: a host root certificate could not be read: {err}");
    }
    let (added, _ignored) = roots.add_parsable_certificates(native.certs);
    if let Some(path) = extra_ca {
        let text = std::fs::read(path).map_err(|source| UpstreamError::Ca {
            path: path.to_owned(),
            source,
        })?;
        let certs: Vec<CertificateDer<'static>> = CertificateDer::pem_slice_iter(&text)
            .filter_map(Result::ok)
            .collect();
        let (extra, _) = roots.add_parsable_certificates(certs);
        if extra == 0 {
            return Err(UpstreamError::NoCa(path.to_owned()));
        }
    } else if added == 0 {
        return Err(UpstreamError::NoRoots);
    }
    let provider = Arc::new(rustls::crypto::ring::default_provider());
    let config = rustls::ClientConfig::builder_with_provider(provider)
        .with_safe_default_protocol_versions()
        .map_err(|_| UpstreamError::NoRoots)?
        .with_root_certificates(roots)
        .with_no_client_auth();
    Ok(config)
}

/// Dials the one upstream, TLS on top, for hyper's pooled client.
#[derive(Clone)]
pub struct Connector {
    upstream: Arc<Upstream>,
    tls: TlsConnector,
}

impl std::fmt::Debug for Connector {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.debug_struct("Connector")
            .field("upstream", &self.upstream)
            .finish_non_exhaustive()
    }
}

impl Connector {
    pub fn new(upstream: Upstream, tls: rustls::ClientConfig) -> Self {
        Self {
            upstream: Arc::new(upstream),
            tls: TlsConnector::from(Arc::new(tls)),
        }
    }
}

/// One TLS connection to the upstream.
#[derive(Debug)]
pub struct Conn(TlsStream<TcpStream>);

impl Connection for Conn {
    fn connected(&self) -> Connected {
        Connected::new()
    }
}

impl AsyncRead for Conn {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_read(cx, buf)
    }
}

impl AsyncWrite for Conn {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        Pin::new(&mut self.0).poll_write(cx, buf)
    }
    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_flush(cx)
    }
    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.0).poll_shutdown(cx)
    }
}

type Connecting = Pin<Box<dyn Future<Output = io::Result<TokioIo<Conn>>> + Send>>;

impl tower_service::Service<Uri> for Connector {
    type Response = TokioIo<Conn>;
    type Error = io::Error;
    type Future = Connecting;

    fn poll_ready(&mut self, _: &mut Context<'_>) -> Poll<io::Result<()>> {
        Poll::Ready(Ok(()))
    }

    /// The configured upstream, whatever `_uri` says.
    fn call(&mut self, _uri: Uri) -> Connecting {
        let upstream = Arc::clone(&self.upstream);
        let tls = self.tls.clone();
        Box::pin(async move {
            let tcp = TcpStream::connect((upstream.host.as_str(), upstream.port)).await?;
            let _ = tcp.set_nodelay(true);
            let name = ServerName::try_from(upstream.host.clone())
                .map_err(|e| io::Error::new(io::ErrorKind::InvalidInput, e))?;
            let stream = tls.connect(name, tcp).await?;
            Ok(TokioIo::new(Conn(stream)))
        })
    }
}

/// A credential the host holds, as its file says it: an OAuth token of
/// `claude setup-token` (`sk-ant-oat...`) goes as `Authorization: Bearer`,
/// anything else as an API key (`x-api-key`).
#[derive(Clone, PartialEq, Eq)]
pub enum Credential {
    ApiKey(String),
    OAuth(String),
}

impl std::fmt::Debug for Credential {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self {
            Self::ApiKey(_) => f.write_str("ApiKey(<not shown>)"),
            Self::OAuth(_) => f.write_str("OAuth(<not shown>)"),
        }
    }
}

/// Why a named credential cannot be used.
#[derive(Debug, thiserror::Error)]
pub enum CredentialError {
    #[error(
        "credential {0} is not loaded: hive-c0re-egress.service has no credentials directory (add LoadCredential={0}:PATH to it)"
    )]
    NoDirectory(CredentialName),
    #[error(
        "credential {name} is not loaded into hive-c0re-egress.service (LoadCredential={name}:PATH): {source}"
    )]
    Missing {
        name: CredentialName,
        #[source]
        source: io::Error,
    },
    #[error(
        "credential {0} is empty or not one line of printable ASCII (an API key or a token of `claude setup-token`)"
    )]
    Malformed(CredentialName),
}

/// The prefix of Claude's long-lived OAuth tokens.
pub const OAUTH_PREFIX: &str = "sk-ant-oat";

impl Credential {
    /// Credential `name` from `dir` (`$CREDENTIALS_DIRECTORY`).
    pub fn load(dir: Option<&Path>, name: &CredentialName) -> Result<Self, CredentialError> {
        let dir = dir.ok_or_else(|| CredentialError::NoDirectory(name.clone()))?;
        let text = std::fs::read_to_string(dir.join(name.as_str())).map_err(|source| {
            CredentialError::Missing {
                name: name.clone(),
                source,
            }
        })?;
        Self::parse(&text).ok_or_else(|| CredentialError::Malformed(name.clone()))
    }

    /// A credential file's text: one line (surrounding whitespace dropped)
    /// of printable ASCII.
    pub fn parse(text: &str) -> Option<Self> {
        let value = text.trim();
        if value.is_empty() || !value.bytes().all(|b| b.is_ascii_graphic()) {
            return None;
        }
        Some(if value.starts_with(OAUTH_PREFIX) {
            Self::OAuth(value.to_owned())
        } else {
            Self::ApiKey(value.to_owned())
        })
    }
}

#[cfg(test)]
#[path = "upstream_tests.rs"]
mod tests;
