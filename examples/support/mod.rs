//! The benchmarks' common set-up: a hive in-process with the fake driver, a
//! real SQLite file in a temp dir, `agents` agents spawned, and host.sock
//! served.

#![allow(dead_code)] // each benchmark uses a different part of this

use std::path::Path;
use std::sync::Arc;
use std::time::Duration;

use hive_c0re::clock::SystemClock;
use hive_c0re::config::{Config, DriverKind};
use hive_c0re::containers::fake::FakeDriver;
use hive_c0re::server::{host, listener};
use hive_c0re::service::Hive;
use hive_c0re::store::Store;
use hive_c0re::wire::ident::Ident;
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

pub struct Bench {
    pub dir: tempfile::TempDir,
    pub config: Config,
    pub rt: tokio::runtime::Runtime,
    pub driver: Arc<FakeDriver>,
    pub hive: Hive,
    /// The hive's store (for set-up a service call would take too long for).
    pub store: Store,
    pub shutdown: CancellationToken,
}

/// Await `tasks` (spawned at once); every latency they measured, sorted.
pub async fn gather(tasks: Vec<tokio::task::JoinHandle<Vec<Duration>>>) -> Vec<Duration> {
    let mut all = Vec::new();
    for t in tasks {
        all.extend(t.await.unwrap());
    }
    all.sort();
    all
}

/// A listener bound at `path`, on the current runtime.
pub fn listen(path: &Path) -> tokio::net::UnixListener {
    let l = hive_c0re::systemd::activation::bind(path).unwrap();
    l.set_nonblocking(true).unwrap();
    tokio::net::UnixListener::from_std(l).unwrap()
}

/// `agent-0` .. `agent-<n-1>` spawned, the unit watcher running, host.sock
/// served at `config.host_socket()`.
pub fn hive_with(agents: usize) -> Bench {
    let dir = tempfile::tempdir().unwrap();
    let config = Config {
        state_dir: dir.path().join("state"),
        runtime_dir: dir.path().join("run"),
        driver: DriverKind::Fake,
        // The benchmarks' agents plus the manager.
        max_agents: agents + 1,
        ..Config::default()
    };
    let rt = tokio::runtime::Runtime::new().unwrap();
    let driver = Arc::new(FakeDriver::new(config.profile));
    let shutdown = CancellationToken::new();
    let store = Store::open(&config.database()).unwrap();
    let hive = rt.block_on(async {
        let hive = Hive::new(
            config.clone(),
            store.clone(),
            driver.clone(),
            Arc::new(SystemClock),
        )
        .unwrap();
        for i in 0..agents {
            hive.spawn_now(&Ident::new(format!("agent-{i}")).unwrap())
                .await
                .unwrap();
        }
        tokio::spawn(hive.clone().watch_units());
        let (h, sd) = (hive.clone(), shutdown.clone());
        tokio::spawn(listener::accept_loop(
            listen(&config.host_socket()),
            "host.sock",
            shutdown.clone(),
            TaskTracker::new(),
            move |s| host::serve(h.clone(), s, sd.clone()),
        ));
        hive
    });
    Bench {
        dir,
        config,
        rt,
        driver,
        hive,
        store,
        shutdown,
    }
}
