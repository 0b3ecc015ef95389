//! The swarm door: this hive on NATS JetStream, beside its peers.
//!
//! Every hive keeps its own SQLite broker as the source of truth; the bus
//! only carries what one hive committed to another, and the roster. The
//! design, its guarantees, the NATS permissions and what it does not do are
//! in `src/swarm/README.md` (the top-level directories are fixed, so the
//! design document lives beside the code it describes).
//!
//! - [`relay`]: outbox → bus. Publishes unsent outbox rows in order, with
//!   `Nats-Msg-Id` = the swarm-wide id, marks each sent after its ack.
//! - [`inbound`]: bus → inbox. A durable pull consumer on this hive's
//!   subject; each batch is stored in one transaction, then acked.
//! - [`roster`]: this hive's rows into the key-value bucket, every hive's
//!   rows out of it.
//! - [`names`]: every subject, stream, bucket and key, in one place.
//!
//! Decisions:
//! - **The daemon does not wait for the bus.** The client connects (and
//!   reconnects, for ever) in the background; until then cross-hive sends
//!   wait in the outbox and the hive serves as usual. Rejected: refusing to
//!   start without NATS, which would make a bus outage a hive outage.
//! - **A door like the sockets**: it uses only the service and the wire,
//!   so the store's and the rules' shapes can change under it.

mod inbound;
pub mod names;
pub mod permissions;
mod relay;
mod roster;

use std::path::{Path, PathBuf};
use std::time::Duration;

use async_nats::jetstream::{self, stream};
use tokio_util::sync::CancellationToken;

use crate::config::SwarmConfig;
use crate::service::Hive;
pub use names::Names;

/// Why the swarm cannot be joined as configured. The daemon refuses to
/// start: the operator fixes the config.
#[derive(Debug, thiserror::Error)]
pub enum SwarmError {
    /// A file the `swarm` section names cannot be read.
    #[error("cannot read the swarm's {what} {path}")]
    File {
        what: &'static str,
        path: PathBuf,
        #[source]
        source: std::io::Error,
    },
    /// A `urls` entry is not a NATS URL.
    #[error("swarm url {url:?} is not a NATS server address: {reason}")]
    Url { url: String, reason: String },
    /// The `swarm` section has no `urls`.
    #[error("the swarm section lists no `urls`; add the NATS servers")]
    NoUrls,
}

/// How long a JetStream request (publish ack, API call) may take before it
/// is retried.
pub const BUS_TIMEOUT: Duration = Duration::from_secs(5);

/// Join the swarm the config names, if any: connect in the background and
/// spawn the relay, the inbound consumer and the roster tasks, which run
/// until `shutdown`. `Ok(false)`: no swarm configured, nothing started.
pub async fn start(hive: Hive, shutdown: CancellationToken) -> Result<bool, SwarmError> {
    let config = hive.config();
    let (Some(swarm), Some(hive_name), Some(swarm_name)) = (
        config.swarm.clone(),
        config.hive_name.clone(),
        config.swarm_name.clone(),
    ) else {
        return Ok(false);
    };
    let names = Names {
        swarm: swarm_name,
        hive: hive_name,
    };
    let client = connect(&swarm, &names, &hive).await?;
    let js = jetstream::ContextBuilder::new()
        .timeout(BUS_TIMEOUT)
        .build(client);
    tracing::info!(hive = %names.hive, swarm = %names.swarm, "joining the swarm");
    let bus = Bus {
        hive,
        js,
        names,
        replicas: swarm.replicas,
        shutdown,
    };
    tokio::spawn(relay::run(bus.clone()));
    tokio::spawn(inbound::run(bus.clone()));
    tokio::spawn(roster::run(bus));
    Ok(true)
}

/// What every task of the door works with.
#[derive(Debug, Clone)]
struct Bus {
    hive: Hive,
    js: jetstream::Context,
    names: Names,
    /// Replicas of the stream and bucket it creates.
    replicas: usize,
    shutdown: CancellationToken,
}

impl Bus {
    /// Run `attempt` until it succeeds (logging each failure as `what`,
    /// with a growing pause between tries); `None` on shutdown.
    async fn until_ok<T, E, F, Fut>(&self, what: &str, mut attempt: F) -> Option<T>
    where
        E: std::fmt::Display,
        F: FnMut() -> Fut,
        Fut: std::future::Future<Output = Result<T, E>>,
    {
        let mut backoff = Backoff::new();
        loop {
            match attempt().await {
                Ok(value) => return Some(value),
                Err(err) => tracing::warn!("swarm: {what}: {err}"),
            }
            if !backoff.wait(&self.shutdown).await {
                return None;
            }
        }
    }

    /// The swarm's stream, created when missing.
    async fn stream(&self) -> Option<stream::Stream> {
        let what = format!("stream {} not reachable", self.names.stream());
        self.until_ok(&what, || {
            self.js
                .get_or_create_stream(stream_config(&self.names, self.replicas))
        })
        .await
    }
}

async fn connect(
    swarm: &SwarmConfig,
    names: &Names,
    hive: &Hive,
) -> Result<async_nats::Client, SwarmError> {
    if swarm.urls.is_empty() {
        return Err(SwarmError::NoUrls);
    }
    let mut addrs = Vec::with_capacity(swarm.urls.len());
    for url in &swarm.urls {
        let addr: async_nats::ServerAddr =
            url.parse().map_err(|e: std::io::Error| SwarmError::Url {
                url: url.clone(),
                reason: e.to_string(),
            })?;
        addrs.push(addr);
    }
    let mut options = async_nats::ConnectOptions::new()
        .name(format!("hive-c0re {}", names.hive))
        .custom_inbox_prefix(names.inbox_prefix())
        .retry_on_initial_connect()
        .max_reconnects(None)
        .request_timeout(Some(BUS_TIMEOUT))
        .event_callback({
            // A refusal (a permission violation above all) is the server's
            // `-ERR`, which the library otherwise retries without a word:
            // the operator sees it in the log and in `status --swarm`.
            let hive = hive.clone();
            move |event| {
                let hive = hive.clone();
                async move {
                    match event {
                        async_nats::Event::ServerError(_) | async_nats::Event::ClientError(_) => {
                            hive.swarm_bus_error(event.to_string());
                        }
                        other => tracing::info!("swarm bus: {other}"),
                    }
                }
            }
        });
    if let Some(path) = &swarm.credentials_file {
        options = options
            .credentials_file(path)
            .await
            .map_err(|source| file_error("credentials file", path, source))?;
    }
    if let (Some(user), Some(path)) = (&swarm.user, &swarm.password_file) {
        let text = tokio::fs::read_to_string(path)
            .await
            .map_err(|source| file_error("password file", path, source))?;
        let password = text.lines().next().unwrap_or("").to_owned();
        options = options.user_and_password(user.clone(), password);
    }
    if let Some(ca) = &swarm.tls_ca_file {
        options = options.add_root_certificates(ca.clone()).require_tls(true);
    }
    options.connect(addrs).await.map_err(|e| SwarmError::Url {
        url: swarm.urls.join(","),
        reason: e.to_string(),
    })
}

fn file_error(what: &'static str, path: &Path, source: std::io::Error) -> SwarmError {
    SwarmError::File {
        what,
        path: path.to_path_buf(),
        source,
    }
}

/// The swarm's message stream: every hive's inbox subjects, kept until the
/// destination's consumer acks (work-queue retention: each subject has one
/// consumer), file storage, replicated, with JetStream's de-duplication
/// window on `Nats-Msg-Id`.
fn stream_config(names: &Names, replicas: usize) -> stream::Config {
    stream::Config {
        name: names.stream(),
        subjects: vec![names.stream_subjects()],
        retention: stream::RetentionPolicy::WorkQueue,
        storage: stream::StorageType::File,
        num_replicas: replicas,
        duplicate_window: Duration::from_secs(120),
        ..Default::default()
    }
}

/// Backoff for a bus operation that failed: doubles from 100 ms to 5 s.
#[derive(Debug)]
struct Backoff(Duration);

impl Backoff {
    fn new() -> Self {
        Self(Duration::from_millis(100))
    }

    fn reset(&mut self) {
        self.0 = Duration::from_millis(100);
    }

    /// Wait the current delay (or until shutdown: then `false`).
    async fn wait(&mut self, shutdown: &CancellationToken) -> bool {
        let delay = self.0;
        self.0 = (self.0 * 2).min(Duration::from_secs(5));
        tokio::select! {
            () = shutdown.cancelled() => false,
            () = tokio::time::sleep(delay) => true,
        }
    }
}
