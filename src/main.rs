//! `hive-c0re`: parse, run, print the error chain, exit.

use std::path::PathBuf;
use std::process::ExitCode;

use clap::{Parser, Subcommand};
use hive_c0re::config::{Config, DriverKind, Overrides};
use hive_c0re::systemd::dbus::inotify::InotifyCaps;

/// mimalloc, not glibc's malloc: see Cargo.toml (issue 31's profile).
#[global_allocator]
static ALLOCATOR: mimalloc::MiMalloc = mimalloc::MiMalloc;

#[derive(Debug, Parser)]
#[command(name = "hive-c0re", version, about = "The hive's host daemon")]
struct Cli {
    #[command(subcommand)]
    command: Command,
}

#[derive(Debug, Subcommand)]
enum Command {
    /// Run the daemon (socket-activated by hive-c0re.socket, or standalone).
    Serve {
        /// JSON config file; flags below override it [default:
        /// /etc/hive-c0re/config.json when it exists].
        #[arg(long)]
        config: Option<PathBuf>,
        /// Database and agents' state [default: /var/lib/hyperhive].
        #[arg(long)]
        state_dir: Option<PathBuf>,
        /// Sockets [default: /run/hyperhive].
        #[arg(long)]
        runtime_dir: Option<PathBuf>,
        /// Container driver [default: systemd].
        #[arg(long, value_enum)]
        driver: Option<DriverKind>,
        /// The hive's public domain (enables URLs).
        #[arg(long)]
        domain: Option<String>,
        /// With `--driver fake`: each container start takes this long (a
        /// slowly booting container), for tests of the answer budget.
        #[arg(long, value_name = "MS")]
        fake_job_delay_ms: Option<u64>,
        /// With `--driver fake`: each running agent runs the real harness
        /// (`hive-agent run`) with a scripted stand-in of Claude Code
        /// (`hive-agent demo-model`), so the demo's agents do turns and
        /// answer. Its `hive-agent` is the one beside this program.
        #[arg(long)]
        demo_agents: bool,
    },
    /// The egress proxy agents' connections are handed to by the daemon
    /// (hive-c0re-egress.service, socket-activated by
    /// hive-c0re-egress.socket): the hive's only process with a network.
    Egress {
        /// Bind this socket (mode 0600) when systemd passes none [default:
        /// /run/hyperhive/egress-dialer.sock].
        #[arg(long)]
        socket: Option<PathBuf>,
        /// The model gateway's upstream, an https:// URL (agents' requests
        /// to the model go there, with the host's credential).
        #[arg(long, env = "HIVE_MODEL_UPSTREAM", default_value = hive_c0re::egress::upstream::DEFAULT_UPSTREAM)]
        model_upstream: String,
        /// A PEM file of CA certificates the gateway trusts for its
        /// upstream besides the host's store (a stand-in's, a relay's).
        #[arg(long, env = "HIVE_MODEL_CA")]
        model_ca: Option<PathBuf>,
    },
    /// Cap the inotify instances and watches of a container's user
    /// namespace: run by the daemon as a transient unit after it starts a
    /// container (issue 44), single-threaded, since Linux refuses
    /// `setns(CLONE_NEWUSER)` to a multi-threaded process.
    #[command(hide = true)]
    LimitUserns {
        /// The container's leader (its init, from machined).
        #[arg(long)]
        leader: u32,
        #[arg(long)]
        inotify_instances: std::num::NonZeroU32,
        #[arg(long)]
        inotify_watches: std::num::NonZeroU32,
    },
    /// Hold an agent's directories to a project quota: run by the daemon
    /// as a transient unit before it starts a container (issue 44), since
    /// its own sandbox forbids quotactl.
    #[command(hide = true)]
    SetQuota {
        /// The project id (the agent's user-range base; not 0).
        #[arg(long, value_parser = clap::value_parser!(u32).range(1..))]
        project: u32,
        /// The hard limit in bytes.
        #[arg(long)]
        bytes: u64,
        /// The hard limit in inodes.
        #[arg(long)]
        inodes: u64,
        /// A directory put in the project (absolute; its last component is
        /// not followed); repeated.
        #[arg(long = "dir", required = true)]
        dirs: Vec<PathBuf>,
    },
}

/// `hive-c0re set-quota`: each directory in the project, the limits set.
fn set_quota(
    dirs: &[PathBuf],
    project: u32,
    limits: hive_c0re::systemd::dbus::quota::DiskLimits,
) -> anyhow::Result<()> {
    if let Some(dir) = dirs.iter().find(|d| !d.is_absolute()) {
        anyhow::bail!("{} is not an absolute path", dir.display());
    }
    let used = hive_c0re::systemd::dbus::quota::apply(dirs, project, limits)?;
    for (dir, used) in dirs.iter().zip(used) {
        println!(
            "{}: project {project}, limits {} bytes and {} inodes, {} bytes and {} inodes \
             used{}",
            dir.display(),
            limits.bytes,
            limits.inodes,
            used.bytes,
            used.inodes,
            if used.walked {
                " (its files put in the project)"
            } else {
                ""
            }
        );
    }
    Ok(())
}

/// `hive-c0re limit-userns`: before any thread starts (no runtime here).
fn limit_userns(leader: u32, caps: InotifyCaps) -> anyhow::Result<()> {
    let (instances, watches) = hive_c0re::systemd::dbus::inotify::apply(leader, caps)?;
    println!(
        "user namespace of process {leader}: max_inotify_instances {instances}, \
         max_inotify_watches {watches}"
    );
    Ok(())
}

/// `hive-c0re egress`: the socket systemd passed, or `socket` bound here;
/// then the service until killed.
fn egress(
    socket: Option<PathBuf>,
    model_upstream: &str,
    model_ca: Option<&std::path::Path>,
) -> anyhow::Result<()> {
    use hive_c0re::systemd::activation;
    let passed = activation::take_named_fds()?.into_iter().next();
    let listener = match passed {
        Some((name, fd)) => activation::listener_from_fd(&name, fd)?,
        None => {
            let path = socket.unwrap_or_else(|| {
                PathBuf::from(hive_c0re::config::DEFAULT_RUNTIME_DIR)
                    .join(hive_c0re::config::EGRESS_DIALER_SOCKET_NAME)
            });
            let listener = activation::bind(&path)?;
            std::fs::set_permissions(&path, std::os::unix::fs::PermissionsExt::from_mode(0o600))?;
            listener
        }
    };
    listener.set_nonblocking(true)?;
    let runtime = tokio::runtime::Builder::new_multi_thread()
        .worker_threads(2)
        .enable_all()
        .build()?;
    runtime.block_on(async move {
        let listener = tokio::net::UnixListener::from_std(listener)?;
        let gateway = model_gateway(model_upstream, model_ca);
        tracing::info!("egress service ready");
        hive_c0re::egress::service::run(listener, gateway).await;
        Ok(())
    })
}

/// The model gateway to `upstream` (TLS: the host's roots and `ca`'s),
/// credentials from `$CREDENTIALS_DIRECTORY`; or, when it cannot be set
/// up, why — said now in the journal and to each model request, while the
/// proxy serves on (a bad CA file should not cut every agent's egress).
fn model_gateway(
    upstream: &str,
    ca: Option<&std::path::Path>,
) -> hive_c0re::egress::service::ModelGateway {
    use hive_c0re::egress::{gateway, upstream as up};
    let built = up::Upstream::parse(upstream).and_then(|u| Ok((u, up::tls_config(ca)?)));
    match built {
        Ok((upstream, tls)) => {
            let dir = std::env::var_os("CREDENTIALS_DIRECTORY").map(PathBuf::from);
            tracing::info!(
                "model gateway: upstream https://{}, credentials {}",
                upstream.authority(),
                dir.as_ref()
                    .map_or("none loaded".to_owned(), |d| format!("in {}", d.display()))
            );
            Ok(std::sync::Arc::new(gateway::Gateway::new(
                upstream,
                tls,
                dir,
                gateway::HEAD_TIMEOUT,
            )))
        }
        Err(err) => {
            let why = hive_c0re::errors::chain(&err);
            tracing::error!("model gateway not set up: {why}");
            Err(why.into())
        }
    }
}

/// `--demo-agents`: the `hive-agent` beside this program, which must exist.
fn demo_program(wanted: bool) -> anyhow::Result<Option<PathBuf>> {
    if !wanted {
        return Ok(None);
    }
    let exe = std::env::current_exe()?;
    let program = exe.with_file_name("hive-agent");
    anyhow::ensure!(
        program.is_file(),
        "--demo-agents runs {}, which does not exist: build it beside hive-c0re \
         (cargo build --bins)",
        program.display()
    );
    Ok(Some(program))
}

fn main() -> ExitCode {
    let cli = Cli::parse();
    match hive_c0re::logging::init() {
        Ok(target) => tracing::debug!(?target, "logging"),
        Err(err) => {
            eprintln!("hive-c0re: {err:#}");
            return ExitCode::FAILURE;
        }
    }
    let result = match cli.command {
        Command::Serve {
            config,
            state_dir,
            runtime_dir,
            driver,
            domain,
            fake_job_delay_ms,
            demo_agents,
        } => demo_program(demo_agents)
            .and_then(|demo_agents| {
                Ok(Config::with_overrides(Overrides {
                    file: config,
                    state_dir,
                    runtime_dir,
                    driver,
                    domain,
                    fake_job_delay: fake_job_delay_ms.map(std::time::Duration::from_millis),
                    demo_agents,
                })?)
            })
            .and_then(hive_c0re::daemon::serve),
        Command::Egress {
            socket,
            model_upstream,
            model_ca,
        } => egress(socket, &model_upstream, model_ca.as_deref()),
        Command::SetQuota {
            project,
            bytes,
            inodes,
            dirs,
        } => set_quota(
            &dirs,
            project,
            hive_c0re::systemd::dbus::quota::DiskLimits { bytes, inodes },
        ),
        Command::LimitUserns {
            leader,
            inotify_instances,
            inotify_watches,
        } => limit_userns(
            leader,
            InotifyCaps {
                instances: inotify_instances,
                watches: inotify_watches,
            },
        ),
    };
    match result {
        Ok(()) => ExitCode::SUCCESS,
        Err(err) => {
            tracing::error!("{err:#}");
            eprintln!("hive-c0re: {err:#}");
            ExitCode::FAILURE
        }
    }
}
