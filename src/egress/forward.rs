//! The model gateway's request on its way upstream ([`super::gateway`]):
//! the sentinel recognized, hop-by-hop headers dropped both ways, the
//! agent's credential replaced by the host's.

use bytes::Bytes;
use http_body_util::Full;
use hyper::Request;
use hyper::header::{self, HeaderMap, HeaderName, HeaderValue};

use super::upstream::Credential;

/// The prefix of the harness's sentinel credential: what Claude Code in a
/// container holds instead of a secret (`hive-agent`'s `ANTHROPIC_AUTH_TOKEN`).
pub const SENTINEL_PREFIX: &str = "hive-sentinel-";

/// The `anthropic-beta` flag an OAuth token needs on the Messages API.
pub const OAUTH_BETA: &str = "oauth-2025-04-20";

/// Whether the request carries the harness's sentinel as its credential.
pub(super) fn carries_sentinel(headers: &HeaderMap) -> bool {
    let sentinel = |v: &HeaderValue| {
        v.to_str().is_ok_and(|s| {
            s.strip_prefix("Bearer ")
                .unwrap_or(s)
                .trim()
                .starts_with(SENTINEL_PREFIX)
        })
    };
    headers.get("x-api-key").is_some_and(sentinel)
        || headers.get(header::AUTHORIZATION).is_some_and(sentinel)
}

/// Headers that belong to one hop, never forwarded either way.
const HOP_BY_HOP: &[&str] = &[
    "connection",
    "keep-alive",
    "proxy-connection",
    "proxy-authorization",
    "proxy-authenticate",
    "te",
    "trailer",
    "transfer-encoding",
    "upgrade",
];

pub(super) fn strip_hop_by_hop(headers: &mut HeaderMap) {
    let named: Vec<HeaderName> = headers
        .get_all(header::CONNECTION)
        .iter()
        .filter_map(|v| v.to_str().ok())
        .flat_map(|v| v.split(','))
        .filter_map(|n| HeaderName::from_bytes(n.trim().as_bytes()).ok())
        .collect();
    for name in named {
        headers.remove(name);
    }
    for name in HOP_BY_HOP {
        headers.remove(*name);
    }
}

/// The request as it goes upstream: the same method, path and query, the
/// agent's headers but its credential, hop-by-hop ones and
/// `Accept-Encoding` (the meter reads the answer: asked uncompressed),
/// `Host` the upstream's, the host's credential in.
pub(super) fn upstream_request(
    authority: &str,
    parts: &hyper::http::request::Parts,
    credential: Option<&Credential>,
    body: Bytes,
) -> Option<Request<Full<Bytes>>> {
    let path_and_query = parts
        .uri
        .path_and_query()
        .map_or("/", |p| p.as_str())
        .to_owned();
    let uri = format!("https://{}{path_and_query}", authority);
    let mut headers = parts.headers.clone();
    strip_hop_by_hop(&mut headers);
    headers.remove(header::HOST);
    headers.remove(header::ACCEPT_ENCODING);
    headers.remove(header::CONTENT_LENGTH);
    if let Some(credential) = credential {
        headers.remove("x-api-key");
        headers.remove(header::AUTHORIZATION);
        match credential {
            Credential::ApiKey(key) => {
                let mut v = HeaderValue::from_str(key).ok()?;
                v.set_sensitive(true);
                headers.insert("x-api-key", v);
            }
            Credential::OAuth(token) => {
                let mut v = HeaderValue::from_str(&format!("Bearer {token}")).ok()?;
                v.set_sensitive(true);
                headers.insert(header::AUTHORIZATION, v);
                let beta = headers
                    .get_all("anthropic-beta")
                    .iter()
                    .filter_map(|v| v.to_str().ok())
                    .flat_map(|v| v.split(','))
                    .map(str::trim)
                    .filter(|v| !v.is_empty())
                    .map(str::to_owned)
                    .collect::<Vec<_>>();
                if !beta.iter().any(|b| b == OAUTH_BETA) {
                    let mut all = beta;
                    all.push(OAUTH_BETA.to_owned());
                    headers.insert(
                        "anthropic-beta",
                        HeaderValue::from_str(&all.join(",")).ok()?,
                    );
                }
            }
        }
    }
    headers.insert(header::HOST, HeaderValue::from_str(authority).ok()?);
    headers.insert(
        header::ACCEPT_ENCODING,
        HeaderValue::from_static("identity"),
    );
    let mut req = Request::builder()
        .method(parts.method.clone())
        .uri(uri)
        .body(Full::new(body))
        .ok()?;
    *req.headers_mut() = headers;
    Some(req)
}
