//! Each agent container's own inotify caps, and the host's limits that must
//! hold them (issue 44).
//!
//! Linux counts inotify instances and watches per user *and* up the chain
//! of user namespaces: a process of an agent's container is charged to its
//! user in the container's namespace and, at the same time, to the
//! namespace's owner — root — in the host's. Without a cap of its own, an
//! agent took 105 of root's 128 instances (`fs.inotify.max_user_instances`)
//! and every root process of the host (a new container's systemd,
//! journald, Claude Code in every other agent) got `Too many open files`.
//! A new user namespace starts with no cap (`INT_MAX`); its own
//! `/proc/sys/user/max_inotify_instances` and `max_inotify_watches` (seen
//! only from inside it, writable with `CAP_SYS_RESOURCE` in it) bound each
//! of its users, the agent's included.
//!
//! Decisions:
//! - **The caps are written from the host, by a helper systemd runs**:
//!   after the hive starts or restarts a container, the driver reads the
//!   container's leader from machined (`Leader`) and starts a transient
//!   oneshot unit running `hive-c0re limit-userns --leader <pid> ...`
//!   ([`apply`]): a fresh single-threaded process that joins the leader's
//!   user namespace (`setns`, which Linux refuses to a multi-threaded
//!   process, so never from the daemon's runtime) and writes both values.
//!   The sysctls under `/proc/sys/user` are those of the *writer's* user
//!   namespace, so the host's `/proc` serves. The agent cannot raise its
//!   cap: it runs as an unprivileged user in its container, without
//!   `CAP_SYS_RESOURCE` there.
//! - **A transient unit, not a child of the daemon** (through
//!   `crate::command`): the daemon's own sandbox forbids every step —
//!   `RestrictNamespaces=mnt pid` makes `setns(CLONE_NEWUSER)` fail
//!   (seccomp, inherited by children), and `ProtectKernelTunables=yes`
//!   mounts `/proc/sys` read-only. Loosening both for one write per start
//!   would let the daemon (and whatever it runs: journalctl, git, nix)
//!   create user namespaces and change any tunable. systemd already starts
//!   every container for the daemon (root over D-Bus), so a transient unit
//!   gives it no power it did not have; the helper's unit has a sandbox of
//!   its own ([`transient_properties`]).
//! - Rejected: **a unit inside the agent's image** writing its own caps at
//!   boot — nspawn mounts `/proc/sys` read-only in the container, locked by
//!   its user namespace (its root cannot remount it: `isolation.sh` of the
//!   real-systemd tier checks), and a container root able to set the caps
//!   could raise them again; **an nspawn
//!   setting** — `.nspawn` files have none for sysctls (only OCI bundles
//!   carry `linux.sysctl`, and the hive does not run them).
//! - **When**: after the hive's start or restart job is done, and at the
//!   daemon's start for every container already running. Until the helper
//!   has run (a fraction of a second), a new namespace has no cap of its
//!   own; the agent's processes start later, from `hive-agent.service`
//!   inside. A container started otherwise while the daemon runs
//!   (`machinectl start`, a reboot from inside) gets its caps at the hive's
//!   next start or restart of it, or the daemon's next start. Rejected for
//!   now: acting on every unit that turns active in the view (the
//!   dispatcher must never wait on a call, and the hive's own starts would
//!   be capped twice). A failure is logged as a warning naming the agent,
//!   and the container keeps running: refusing the start would take an
//!   agent down for a fault of the host's.
//! - **Where `/proc/sys` is read-only** (a host that is itself a
//!   container, as the real-systemd test-bed), the helper remounts it
//!   read-write in a mount namespace of its own before joining
//!   ([`writable_proc_sys`]); nothing else of the host's is writable to it.
//! - **The host's limits** must hold every agent at its cap: the NixOS
//!   module sets `fs.inotify.max_user_instances` and `max_user_watches`
//!   from `max_agents`, `systemd/hive-c0re.sysctl` does it for other
//!   distributions (at the default `max_agents`), and the daemon warns at
//!   start when the host's are lower ([`host_shortfalls`]).

use std::io::Write as _;
use std::num::NonZeroU32;
use std::path::Path;

use zbus::zvariant::Value;

use super::{Shared, proxies};
use crate::containers::{Outcome, machine_name};
use crate::wire::ident::Ident;

/// How long the helper's oneshot may take (it opens two files and writes
/// two numbers).
const HELPER_WAIT: std::time::Duration = std::time::Duration::from_secs(30);

/// An agent container's caps: instances and watches per user in its user
/// namespace (`/proc/sys/user/max_inotify_*`).
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct InotifyCaps {
    pub instances: NonZeroU32,
    pub watches: NonZeroU32,
}

/// Instances a container's own services (its systemd, journald, logind)
/// hold beside the agent's, counted per agent in what the host must hold.
pub const CONTAINER_SERVICES_INSTANCES: u64 = 16;
/// Watches the same services hold.
pub const CONTAINER_SERVICES_WATCHES: u64 = 1024;
/// Instances kept for the host's own root processes (systemd, journald,
/// udev, the daemon's journalctl runs...): the kernel's default per user.
pub const HOST_RESERVE_INSTANCES: u64 = 128;
/// Watches kept for the host's own root processes.
pub const HOST_RESERVE_WATCHES: u64 = 65_536;

/// Where the host's limits are read (the init user namespace's, root's).
pub const HOST_INSTANCES_PATH: &str = "/proc/sys/fs/inotify/max_user_instances";
pub const HOST_WATCHES_PATH: &str = "/proc/sys/fs/inotify/max_user_watches";
/// The caller's user namespace's caps (the helper writes them after
/// joining the container's namespace).
const USERNS_INSTANCES_PATH: &str = "/proc/sys/user/max_inotify_instances";
const USERNS_WATCHES_PATH: &str = "/proc/sys/user/max_inotify_watches";

/// The host limits a full hive needs: (instances, watches) =
/// `max_agents` × (cap + the container's services) + the host's reserve.
/// The NixOS module computes the same sums.
pub fn host_needs(max_agents: usize, caps: InotifyCaps) -> (u64, u64) {
    let agents = max_agents as u64;
    let instances = u64::from(caps.instances.get()) + CONTAINER_SERVICES_INSTANCES;
    let watches = u64::from(caps.watches.get()) + CONTAINER_SERVICES_WATCHES;
    (
        agents
            .saturating_mul(instances)
            .saturating_add(HOST_RESERVE_INSTANCES),
        agents
            .saturating_mul(watches)
            .saturating_add(HOST_RESERVE_WATCHES),
    )
}

/// One sysctl file's text as a number (`None`: unreadable or not a number).
pub fn parse_sysctl(text: &str) -> Option<u64> {
    text.trim().parse().ok()
}

/// What to warn about at start, given the host's `max_user_instances` and
/// `max_user_watches` as read (`None`: could not be read): one sentence per
/// limit below [`host_needs`], or that it could not be read.
pub fn host_shortfalls(
    instances: Option<u64>,
    watches: Option<u64>,
    max_agents: usize,
    caps: InotifyCaps,
) -> Vec<String> {
    let (need_instances, need_watches) = host_needs(max_agents, caps);
    let mut said = Vec::new();
    for (sysctl, have, need, per_agent, reserve) in [
        (
            "fs.inotify.max_user_instances",
            instances,
            need_instances,
            format!(
                "agent_inotify_instances {} + {CONTAINER_SERVICES_INSTANCES}",
                caps.instances
            ),
            HOST_RESERVE_INSTANCES,
        ),
        (
            "fs.inotify.max_user_watches",
            watches,
            need_watches,
            format!(
                "agent_inotify_watches {} + {CONTAINER_SERVICES_WATCHES}",
                caps.watches
            ),
            HOST_RESERVE_WATCHES,
        ),
    ] {
        match have {
            None => said.push(format!(
                "cannot read {sysctl}: whether the host holds a full hive is unknown"
            )),
            Some(have) if have < need => said.push(format!(
                "{sysctl} is {have}, below the {need} needed by max_agents agents at \
                 their inotify caps ({max_agents} x ({per_agent}) + {reserve} for the \
                 host's own root processes): agents' inotify instances and watches count \
                 against root's; install hive-c0re.sysctl (or set it with \
                 boot.kernel.sysctl) or lower max_agents"
            )),
            Some(_) => {}
        }
    }
    said
}

/// Read the host's limits and return [`host_shortfalls`].
pub fn check_host(max_agents: usize, caps: InotifyCaps) -> Vec<String> {
    let read = |path: &str| {
        std::fs::read_to_string(path)
            .ok()
            .and_then(|t| parse_sysctl(&t))
    };
    host_shortfalls(
        read(HOST_INSTANCES_PATH),
        read(HOST_WATCHES_PATH),
        max_agents,
        caps,
    )
}

/// The transient unit that caps `machine`'s namespace (one name per
/// machine: a second start while one runs is refused by systemd, not run
/// twice).
pub fn helper_unit(machine: &str) -> String {
    format!("hive-c0re-limits-{machine}.service")
}

/// The helper's argv: `hive-c0re limit-userns` (hidden) with the leader
/// and both caps.
pub fn helper_argv(exe: &str, leader: u32, caps: InotifyCaps) -> Vec<String> {
    vec![
        exe.to_owned(),
        "limit-userns".to_owned(),
        "--leader".to_owned(),
        leader.to_string(),
        "--inotify-instances".to_owned(),
        caps.instances.to_string(),
        "--inotify-watches".to_owned(),
        caps.watches.to_string(),
    ]
}

/// The helper's unit: a oneshot (its start job ends when it exits, `done`
/// or `failed`), collected even when it failed, with a sandbox of its own:
/// no network, the file system read-only but for `/proc/sys` (which it
/// writes), no new privileges.
pub fn transient_properties(
    exe: &str,
    argv: Vec<String>,
    machine: &str,
) -> Vec<(&'static str, Value<'static>)> {
    vec![
        (
            "Description",
            Value::from(format!("hive-c0re: inotify caps of {machine}")),
        ),
        ("Type", Value::from("oneshot")),
        ("CollectMode", Value::from("inactive-or-failed")),
        (
            "ExecStart",
            Value::from(vec![(exe.to_owned(), argv, false)]),
        ),
        ("ProtectSystem", Value::from("strict")),
        ("ProtectHome", Value::from("yes")),
        ("PrivateNetwork", Value::from(true)),
        ("PrivateTmp", Value::from(true)),
        ("NoNewPrivileges", Value::from(true)),
    ]
}

/// Why the helper could not cap a namespace.
#[derive(Debug, thiserror::Error)]
pub enum HelperError {
    /// The leader's namespace file could not be opened (it exited, or the
    /// pid is wrong).
    #[error("cannot open {path}: {source}")]
    Open {
        path: String,
        source: std::io::Error,
    },
    /// The leader runs in the helper's own user namespace (a container
    /// without `PrivateUsers=`): there is no cap of its own to set, and
    /// writing here would change the host's.
    #[error(
        "process {leader} shares the host's user namespace: its inotify instances are \
         root's and it has no cap of its own (is the container without a user range?)"
    )]
    SharedNamespace { leader: u32 },
    /// `/proc/sys` is read-only here and could not be made writable in a
    /// mount namespace of the helper's own.
    #[error("/proc/sys is read-only and cannot be remounted for the helper: {errno}")]
    ReadOnly { errno: nix::Error },
    /// `setns(CLONE_NEWUSER)` was refused.
    #[error("cannot join the user namespace of process {leader}: {errno}")]
    Join { leader: u32, errno: nix::Error },
    /// A cap could not be written or read back.
    #[error("{path}: {source}")]
    Write {
        path: &'static str,
        source: std::io::Error,
    },
    /// The value read back is not the one written.
    #[error("{path} reads {read:?} after writing {wrote}")]
    NotTaken {
        path: &'static str,
        wrote: u32,
        read: String,
    },
}

/// `hive-c0re limit-userns`: join `leader`'s user namespace and write its
/// caps; the values read back. Must run in a single-threaded process.
pub fn apply(leader: u32, caps: InotifyCaps) -> Result<(u32, u32), HelperError> {
    let path = format!("/proc/{leader}/ns/user");
    let open = |path: &str| {
        std::fs::File::open(path).map_err(|source| HelperError::Open {
            path: path.to_owned(),
            source,
        })
    };
    let target = open(&path)?;
    let own = open("/proc/self/ns/user")?;
    let ident = |f: &std::fs::File| {
        use std::os::unix::fs::MetadataExt as _;
        f.metadata().map(|m| (m.dev(), m.ino()))
    };
    let same = match (ident(&target), ident(&own)) {
        (Ok(a), Ok(b)) => a == b,
        (Err(source), _) | (_, Err(source)) => return Err(HelperError::Open { path, source }),
    };
    if same {
        return Err(HelperError::SharedNamespace { leader });
    }
    // Before joining: in the container's namespace the helper could not
    // remount anything of the host's.
    writable_proc_sys()?;
    nix::sched::setns(&target, nix::sched::CloneFlags::CLONE_NEWUSER)
        .map_err(|errno| HelperError::Join { leader, errno })?;
    Ok((
        write_cap(USERNS_INSTANCES_PATH, caps.instances.get())?,
        write_cap(USERNS_WATCHES_PATH, caps.watches.get())?,
    ))
}

/// Make `/proc/sys` writable for this process alone where it is mounted
/// read-only: a host that is itself a container (nspawn mounts `/proc/sys`
/// read-only; the real-systemd test-bed is one). In a mount namespace of
/// its own (nothing it mounts reaches the host), the helper remounts the
/// `/proc/sys` bind read-write; on an ordinary host it is writable already
/// and nothing is done. Only the joined namespace's own caps are written
/// through it.
fn writable_proc_sys() -> Result<(), HelperError> {
    use nix::mount::{MsFlags, mount};
    use nix::sys::statvfs::{FsFlags, statvfs};
    let read_only = statvfs("/proc/sys/user")
        .map(|s| s.flags().contains(FsFlags::ST_RDONLY))
        .unwrap_or(false);
    if !read_only {
        return Ok(());
    }
    let remount = |errno| HelperError::ReadOnly { errno };
    nix::sched::unshare(nix::sched::CloneFlags::CLONE_NEWNS).map_err(remount)?;
    mount(
        None::<&str>,
        "/",
        None::<&str>,
        MsFlags::MS_REC | MsFlags::MS_PRIVATE,
        None::<&str>,
    )
    .map_err(remount)?;
    mount(
        None::<&str>,
        "/proc/sys",
        None::<&str>,
        MsFlags::MS_REMOUNT
            | MsFlags::MS_BIND
            | MsFlags::MS_NOSUID
            | MsFlags::MS_NODEV
            | MsFlags::MS_NOEXEC,
        None::<&str>,
    )
    .map_err(remount)
}

/// Write `value` to the sysctl at `path` and read it back.
fn write_cap(path: &'static str, value: u32) -> Result<u32, HelperError> {
    let io = |source| HelperError::Write { path, source };
    let mut file = std::fs::OpenOptions::new()
        .write(true)
        .open(Path::new(path))
        .map_err(io)?;
    file.write_all(format!("{value}\n").as_bytes())
        .map_err(io)?;
    let read = std::fs::read_to_string(path).map_err(io)?;
    match parse_sysctl(&read) {
        Some(v) if v == u64::from(value) => Ok(value),
        _ => Err(HelperError::NotTaken {
            path,
            wrote: value,
            read: read.trim().to_owned(),
        }),
    }
}

impl Shared {
    /// After a start or restart that is done: cap the container's user
    /// namespace ([`apply`], through its transient unit). Never fails the
    /// verb; what went wrong is a warning naming the agent.
    pub(super) async fn cap_inotify(&self, name: &Ident, outcome: Outcome) {
        let Some((caps, exe)) = &self.settings.inotify else {
            return;
        };
        if outcome != Outcome::Done {
            return;
        }
        match self.run_helper(name, *caps, exe).await {
            Ok(()) => tracing::info!(
                agent = %name,
                instances = caps.instances,
                watches = caps.watches,
                "{name}: inotify caps set in its user namespace"
            ),
            Err(e) => tracing::warn!(
                agent = %name,
                "{name}: its inotify caps could not be set ({e}); its instances count \
                 against root's without a cap of their own until its next start"
            ),
        }
    }

    /// At connect: [`Self::cap_inotify`] for every container the view
    /// shows running (the caps are set again where they were: the same
    /// values).
    pub(super) async fn cap_running(&self) {
        if self.settings.inotify.is_none() {
            return;
        }
        let running: Vec<Ident> = self
            .view()
            .snapshot()
            .into_iter()
            .filter(|(_, state)| state.is_running())
            .map(|(name, _)| name)
            .collect();
        for name in running {
            self.cap_inotify(&name, Outcome::Done).await;
        }
    }

    async fn run_helper(&self, name: &Ident, caps: InotifyCaps, exe: &Path) -> Result<(), String> {
        let machine = machine_name(name);
        let leader = proxies::machine_leader(&self.conn(), &machine)
            .await
            .map_err(|e| format!("its leader is not known to machined: {e}"))?;
        let exe = exe
            .to_str()
            .ok_or_else(|| format!("the binary's path {exe:?} is not UTF-8"))?;
        let unit = helper_unit(&machine);
        let props = transient_properties(exe, helper_argv(exe, leader, caps), &machine);
        self.run_oneshot(&unit, &props, HELPER_WAIT).await
    }
}

#[cfg(test)]
#[path = "inotify_tests.rs"]
mod tests;
