//! `hive-c0re serve`: start-up, serving, and a bounded drain on SIGTERM.
//!
//! The composition root: it builds the store, the driver, the hive service
//! and the front doors, and wires them together; every rule and query it
//! needs at start-up is a service call ([`crate::service::startup`]).
//!
//! Order matters for `Type=notify`: READY=1 goes out only after the store is
//! migrated, host.sock accepts, every agent socket and the manager socket
//! are bound and the driver's first view is loaded, so a unit that is
//! `active` is a daemon that answers correctly. Agent sockets are always
//! bound by the daemon itself (not activated) and removed on exit; whatever
//! is at their paths at start (a stale socket, or what an agent left in its
//! `/run/hive`) is replaced without being followed. One daemon per state
//! directory: an exclusive lock is taken before anything else. The agenda's timer ticks once
//! before READY=1 (catch-up) and then every second. Containers are units of
//! their own: stopping the daemon never stops them.

use std::collections::HashMap;
use std::os::fd::OwnedFd;
use std::path::PathBuf;
use std::sync::Arc;
use std::time::Duration;

use anyhow::Context;
use tokio::signal::unix::{SignalKind, signal};
use tokio_util::sync::CancellationToken;
use tokio_util::task::TaskTracker;

use crate::clock::SystemClock;
use crate::config::{ADMIN_GROUP, Config, DriverKind};
use crate::containers::ContainerDriver;
use crate::containers::fake::FakeDriver;
use crate::containers::unavailable::Unavailable;
use crate::server::agent_sockets::SocketRegistry;
use crate::server::{host, listener};
use crate::service::Hive;
use crate::service::startup;
use crate::systemd::activation::{self, HOST_FD_NAME, WEB_FD_NAME};
use crate::systemd::dbus::{Settings, SystemdDriver};
use crate::systemd::notify;
use crate::wire::ident::Ident;

/// How often handled messages past their retention are deleted.
pub const VACUUM_EVERY: Duration = Duration::from_secs(600);

/// How long in-flight requests may take to finish after SIGTERM.
pub const DRAIN_DEADLINE: Duration = Duration::from_secs(10);

/// Most reactor threads, however many CPUs the host has.
pub const MAX_WORKERS: usize = 4;

/// Most threads of the runtime's blocking pool.
pub const MAX_BLOCKING_THREADS: usize = 16;

/// Raise the soft `RLIMIT_NOFILE` to the hard limit (systemd's default soft
/// limit of 1,024 is below one fd per agent socket plus one per connection
/// at 1,000 agents), log both, and warn when the limit is below what a full
/// hive may hold (`budget`, [`Config::fd_budget`]).
fn raise_fd_limit(budget: u64) {
    use nix::sys::resource::{Resource, getrlimit, setrlimit};
    let limit = match getrlimit(Resource::RLIMIT_NOFILE) {
        Ok((soft, hard)) if soft < hard => match setrlimit(Resource::RLIMIT_NOFILE, hard, hard) {
            Ok(()) => {
                tracing::info!(was = soft, soft = hard, hard, "raised the open files limit");
                hard
            }
            Err(e) => {
                tracing::warn!(soft, hard, "cannot raise the open files limit: {e}");
                soft
            }
        },
        Ok((soft, hard)) => {
            tracing::info!(soft, hard, "open files limit");
            soft
        }
        Err(e) => {
            tracing::warn!("cannot read the open files limit: {e}");
            return;
        }
    };
    if limit < budget {
        tracing::warn!(
            limit,
            budget,
            "the open files limit {limit} is below the {budget} a full hive may hold \
             (max_agents x (agent_max_connections + 2) + {}); raise LimitNOFILE= in \
             the unit or lower max_agents",
            crate::config::FD_RESERVE
        );
    }
}

/// Run the daemon until SIGTERM/SIGINT. Call from a single-threaded `main`:
/// it takes the activation fds before starting the runtime.
pub fn serve(config: Config) -> anyhow::Result<()> {
    let fds = activation::take_named_fds().context("read socket activation")?;
    anyhow::ensure!(
        config.demo_agents.is_none() || config.driver == DriverKind::Fake,
        "--demo-agents needs --driver fake: with real containers, each agent runs its own \
         harness and Claude Code"
    );
    raise_fd_limit(config.fd_budget());
    if config.driver == DriverKind::Systemd {
        let caps = crate::systemd::dbus::inotify::InotifyCaps {
            instances: config.agent_inotify_instances,
            watches: config.agent_inotify_watches,
        };
        for said in crate::systemd::dbus::inotify::check_host(config.max_agents, caps) {
            tracing::warn!("{said}");
        }
        // Once, here: each start says only "unlimited" in its own line.
        let agents = config.state_dir.join("agents");
        let required = config.agent_disk_quota_required;
        if config.agent_disk_quota.is_some()
            && let Some(said) = crate::systemd::dbus::quota::check_host(&agents, required)
        {
            tracing::warn!("{said}");
        }
    }
    for said in config.deprecations() {
        tracing::warn!("config: {said}");
    }
    // Threads are bounded whatever the host's size or the hive's: a few
    // reactor workers, and a small blocking pool (file system calls,
    // journalctl); the store has its own writer and readers.
    let workers = std::thread::available_parallelism().map_or(2, |n| n.get().min(MAX_WORKERS));
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(workers)
        .max_blocking_threads(MAX_BLOCKING_THREADS)
        .enable_all()
        .build()
        .context("start the async runtime")?;
    runtime.block_on(run(config, fds))
}

async fn run(config: Config, mut fds: HashMap<String, OwnedFd>) -> anyhow::Result<()> {
    // Before anything is touched: a second daemon on this state directory
    // stops here, naming the first.
    let _lock = startup::lock_state_dir(&config.state_dir)?;
    notify::status("opening the store");
    let store = startup::open_store(&config.database()).await?;

    notify::status("loading container states");
    startup::import_pause_markers(&store, &config)
        .await
        .context("read the pause markers of agents from before the upgrade")?;
    let names = startup::container_names(&store, &config).await?;
    let driver = build_driver(&config, names).await;
    if let Err(err) = driver.resync().await {
        tracing::warn!("first container view incomplete: {err}");
    }
    let demo = demo_agents(&config, driver.as_ref())?;
    let hive = Hive::new(config.clone(), store, driver, Arc::new(SystemClock))?;
    // Before any agent socket serves: a budget reached before the restart
    // still holds its agents' next turns.
    notify::status("checking budgets");
    hive.usage()
        .check_spend(false)
        .await
        .context("evaluate the budgets (spend caps)")?;
    // Catch up: what fell due while the daemon was down goes out now, once.
    notify::status("delivering what fell due while stopped");
    match hive.tick().await {
        Ok(done) => tracing::info!(?done, "agenda caught up"),
        Err(err) => tracing::error!("agenda catch-up failed: {err}; the timer retries"),
    }

    let (listener, bound_path) =
        take_listener(&mut fds, HOST_FD_NAME, config.host_socket(), Some(0o660))?;
    // The dashboard: host.sock's audience (0660 when we bind it ourselves).
    let (web_listener, web_bound) =
        take_listener(&mut fds, WEB_FD_NAME, config.web_socket(), Some(0o660))?;
    let listener = tokio::net::UnixListener::from_std(listener).context("register host.sock")?;
    let web_listener =
        tokio::net::UnixListener::from_std(web_listener).context("register web.sock")?;

    let shutdown = CancellationToken::new();
    let tasks = TaskTracker::new();

    // After host.sock: a second daemon is refused there, before it could
    // touch the first one's agent sockets.
    notify::status("binding agent sockets");
    // The rest of the fds are agent sockets systemd kept for us.
    let sockets = Arc::new(
        SocketRegistry::new(shutdown.clone(), tasks.clone())
            .with_fd_store(notify::fd_store_enabled(), fds),
    );
    hive.set_agent_sockets(sockets.clone());
    // One stored fd per agent plus the manager's: past the unit's
    // FileDescriptorStoreMax= systemd drops the extra ones, which are then
    // bound again after a restart (refusing connects meanwhile).
    if let Some(max) = notify::fd_store_max().filter(|_| notify::fd_store_enabled())
        && u64::try_from(config.max_agents).unwrap_or(u64::MAX) >= max
    {
        tracing::warn!(
            "max_agents ({}) reaches FileDescriptorStoreMax= ({max}): raise the unit's \
             FileDescriptorStoreMax= and FDSTORE= above it",
            config.max_agents
        );
    }
    sockets
        .open_manager(&hive)
        .context("bind the manager socket")?;
    hive.open_agent_sockets().await?;
    for name in sockets.forget_unclaimed() {
        tracing::warn!(fd = %name, "dropped a stored fd no managed agent claims");
    }

    // After the first container view (a spawn's effect is read from it) and
    // with the agents' sockets bound (a finished spawn's socket is there).
    notify::status("finishing spawns and destroys a crash interrupted");
    hive.reconcile_registry().await?;
    notify::status("ending approvals a crash interrupted");
    hive.reconcile_interrupted().await?;
    // Agents that predate config repos get theirs (tagged deployed/0).
    notify::status("seeding config repos of agents that have none");
    hive.seed_missing_configs().await?;
    // After the registry is whole: which agents the hive's base left behind.
    notify::status("checking which agents need an update");
    let stale = hive.check_bases().await?;
    let _updating = hive.auto_update(stale);

    tokio::spawn(hive.clone().watch_units());
    tokio::spawn(hive.clone().run_timer(shutdown.clone()));
    tokio::spawn(hive.messaging().clone().run_notifier(shutdown.clone()));
    tokio::spawn(vacuum_messages(hive.clone(), shutdown.clone()));
    tokio::spawn(hive.usage().clone().watch_spend(shutdown.clone()));
    // After the budgets' first evaluation (before any agent socket served).
    tokio::spawn(crate::server::egress_control::run(
        hive.clone(),
        shutdown.clone(),
    ));
    if let Some((agents, active, changes)) = demo {
        tasks.spawn(crate::containers::demo::run(
            agents,
            active,
            changes,
            shutdown.clone(),
        ));
    }
    if crate::swarm::start(hive.clone(), shutdown.clone())
        .await
        .context("join the swarm")?
    {
        notify::status("joining the swarm");
    }
    let accept = {
        let (hive, shutdown2) = (hive.clone(), shutdown.clone());
        tokio::spawn(listener::accept_loop(
            listener,
            "host.sock",
            shutdown.clone(),
            tasks.clone(),
            move |stream| host::serve(hive.clone(), stream, shutdown2.clone()),
        ))
    };

    let web =
        crate::web::Web::new(hive.clone(), shutdown.clone()).context("start the dashboard")?;
    let web = tokio::spawn(crate::web::serve(web_listener, web));

    // Handlers go in before READY=1: a SIGTERM right after readiness must
    // drain, not kill.
    let stop = stop_signal()?;
    let agents = hive.list().await?.len();
    notify::ready(&format!("serving host.sock; {agents} agents"));

    stop.await;
    notify::stopping("draining connections");
    shutdown.cancel();
    let _ = accept.await;
    tasks.close();
    tasks.spawn(async move {
        let _ = web.await;
    });
    if tokio::time::timeout(DRAIN_DEADLINE, tasks.wait())
        .await
        .is_err()
    {
        tracing::warn!("connections still open after the drain deadline; closing them");
    }
    sockets.remove_files();
    // Ours to remove: we bound them. An activated socket is systemd's.
    for path in [bound_path, web_bound].into_iter().flatten() {
        let _ = std::fs::remove_file(path);
    }
    tracing::info!("stopped; containers keep running");
    Ok(())
}

/// Delete handled messages past the retention window, now and then every
/// [`VACUUM_EVERY`], until shutdown.
async fn vacuum_messages(hive: Hive, shutdown: CancellationToken) {
    let mut tick = tokio::time::interval(VACUUM_EVERY);
    loop {
        tokio::select! {
            () = shutdown.cancelled() => return,
            _ = tick.tick() => {
                if let Err(err) = hive.vacuum_messages().await {
                    tracing::warn!("message vacuum failed: {err}");
                }
            }
        }
    }
}

/// A listener from activation by its fd `name`, else bound by us at `path`
/// (then `mode` applied, and the path returned, to remove on exit).
fn take_listener(
    fds: &mut HashMap<String, OwnedFd>,
    name: &str,
    path: PathBuf,
    mode: Option<u32>,
) -> anyhow::Result<(std::os::unix::net::UnixListener, Option<PathBuf>)> {
    let file = path.file_name().map(|f| f.to_string_lossy().into_owned());
    let file = file.unwrap_or_default();
    let (listener, bound) = match fds.remove(name) {
        Some(fd) => {
            tracing::info!("{file} handed over by systemd");
            (activation::listener_from_fd(name, fd)?, None)
        }
        None => {
            // What the .socket units declare, whatever the umask:
            // DirectoryMode=0751, SocketMode=0660, root:hive-admin.
            if let Some(dir) = path.parent() {
                activation::make_dir(dir, 0o751)?;
            }
            let l = activation::bind(&path)?;
            if let Some(mode) = mode {
                activation::set_mode_and_group(&path, mode, ADMIN_GROUP)
                    .with_context(|| format!("set the mode of {file}"))?;
            }
            tracing::info!(path = %path.display(), "{file} bound by the daemon (not socket-activated)");
            (l, Some(path))
        }
    };
    listener
        .set_nonblocking(true)
        .with_context(|| format!("make {file} non-blocking"))?;
    Ok((listener, bound))
}

/// What `--demo-agents` follows: where the harnesses run, the units
/// active now and the driver's changes (taken before any start).
type Demo = (
    crate::containers::demo::DemoAgents,
    Vec<Ident>,
    tokio::sync::broadcast::Receiver<crate::containers::UnitChange>,
);

/// `--demo-agents` (the fake driver only, checked at the start of
/// [`serve`]): harnesses for its running units.
fn demo_agents(config: &Config, driver: &dyn ContainerDriver) -> anyhow::Result<Option<Demo>> {
    let Some(program) = config.demo_agents.clone() else {
        return Ok(None);
    };
    let manager = Ident::new(crate::config::MANAGER)?;
    let agents = crate::containers::demo::DemoAgents {
        program,
        runtime_dir: config.runtime_dir.clone(),
        dir: config.state_dir.join("demo-agents"),
        manager,
    };
    let changes = driver.changes();
    let active = driver
        .view()
        .into_iter()
        .filter(|(_, s)| s.is_running())
        .map(|(n, _)| n)
        .collect();
    tracing::info!(
        "demo agents: each running agent runs {} with its scripted stand-in of Claude Code",
        agents.program.display()
    );
    Ok(Some((agents, active, changes)))
}

/// The container driver the config asks for. Without a reachable system
/// bus the daemon still serves the roster and approvals, and lifecycle verbs
/// say why they cannot act.
async fn build_driver(config: &Config, names: Vec<Ident>) -> Arc<dyn ContainerDriver> {
    match config.driver {
        DriverKind::Fake => Arc::new(
            FakeDriver::with_containers(config.profile, names)
                .with_job_delay(config.fake_job_delay),
        ),
        DriverKind::Systemd => {
            let settings = Settings::from_config(config, names);
            match SystemdDriver::connect(config.profile, settings).await {
                Ok(driver) => Arc::new(driver),
                Err(err) => {
                    tracing::error!("container driver unavailable: {err}");
                    Arc::new(Unavailable::new(err.to_string()))
                }
            }
        }
    }
}

/// Install SIGTERM/SIGINT handlers now; the future resolves on either.
fn stop_signal() -> anyhow::Result<impl std::future::Future<Output = ()>> {
    let mut term = signal(SignalKind::terminate()).context("watch SIGTERM")?;
    let mut int = signal(SignalKind::interrupt()).context("watch SIGINT")?;
    Ok(async move {
        tokio::select! {
            _ = term.recv() => {}
            _ = int.recv() => {}
        }
    })
}
