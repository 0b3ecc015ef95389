//! The container settings files the driver writes: the nspawn profile's
//! `<nspawn_dir>/h-<n>.nspawn` and the nixos profile's
//! `<nixos_containers_dir>/h-<n>.conf`.
//!
//! Decisions:
//! - File names are built only from the agent's [`Ident`]; every value put
//!   inside (bind paths, environment) is checked first, and a value that
//!   would need quoting rules of the target format is refused with a message
//!   naming it, rather than escaped: a wrong escape silently changes a bind
//!   mount, a refusal is seen at spawn.
//! - Files are written to a temporary name and renamed, so systemd never
//!   reads a half-written file.
//!
//! Container side of the binds: the agent's runtime directory is `/run/hive`
//! (its `mcp.sock` lives there) and its state directory is `/var/lib/hive`;
//! the manager's container also sees the config repos (both profiles):
//! `<state_dir>/proposed` read-write at `/hive/proposed`, `<state_dir>/applied`
//! read-only at `/hive/applied` (the spec's [`RepoBinds`]).

use std::fmt::Write as _;
use std::io;
use std::path::{Path, PathBuf};

use crate::containers::{ContainerSpec, RepoBinds, machine_name};
use crate::hive::proposal::{MANAGER_APPLIED_DIR, MANAGER_PROPOSED_DIR};
use crate::wire::ident::Ident;

/// Where the runtime directory appears inside the container.
pub const CONTAINER_RUNTIME_DIR: &str = "/run/hive";
/// Where the state directory appears inside the container.
pub const CONTAINER_STATE_DIR: &str = "/var/lib/hive";

/// Why a settings file could not be written.
#[derive(Debug, thiserror::Error)]
pub enum FileError {
    #[error("{what} {value:?} cannot go into a container settings file: {why}")]
    Value {
        what: &'static str,
        value: String,
        why: &'static str,
    },
    #[error("cannot write {path}")]
    Io {
        path: PathBuf,
        #[source]
        source: io::Error,
    },
}

fn check_path(what: &'static str, p: &Path) -> Result<String, FileError> {
    let s = p.to_str().unwrap_or_default();
    let bad = |why| FileError::Value {
        what,
        value: p.display().to_string(),
        why,
    };
    if !p.is_absolute() {
        return Err(bad("it must be an absolute path"));
    }
    let allowed = |b: u8| b.is_ascii_alphanumeric() || matches!(b, b'/' | b'.' | b'_' | b'-');
    if s.is_empty() || !s.bytes().all(allowed) || s.split('/').any(|c| c == "..") {
        return Err(bad(
            "use only a-z, A-Z, 0-9, '/', '.', '_' and '-', and no '..'",
        ));
    }
    Ok(s.to_owned())
}

fn check_env(key: &str, value: &str, no_spaces: bool) -> Result<(), FileError> {
    let key_ok = key
        .bytes()
        .enumerate()
        .all(|(i, b)| b == b'_' || b.is_ascii_alphabetic() || (i > 0 && b.is_ascii_digit()));
    if key.is_empty() || !key_ok {
        return Err(FileError::Value {
            what: "environment variable name",
            value: key.to_owned(),
            why: "use A-Z, a-z, 0-9 and '_', not starting with a digit",
        });
    }
    let bad_char = |c: char| c.is_control() || c == '"' || c == '\\' || (no_spaces && c == ' ');
    if value.chars().any(bad_char) {
        return Err(FileError::Value {
            what: "environment value of",
            value: key.to_owned(),
            why: if no_spaces {
                "it must not contain control characters, quotes, backslashes or spaces"
            } else {
                "it must not contain control characters, quotes or backslashes"
            },
        });
    }
    Ok(())
}

/// `<dir>/h-<name>.nspawn`.
pub fn nspawn_path(dir: &Path, name: &Ident) -> PathBuf {
    dir.join(format!("{}.nspawn", machine_name(name)))
}

/// `<dir>/h-<name>.conf`.
pub fn nixos_conf_path(dir: &Path, name: &Ident) -> PathBuf {
    dir.join(format!("{}.conf", machine_name(name)))
}

/// Ids in each agent container's user range (the range's base is chosen by
/// `super::userns`).
pub const USER_RANGE: u32 = 0x1_0000;

/// The harness's user inside every agent container (`agent`, from
/// `systemd/hive-agent.sysusers`): the owner of `/var/lib/hive` and
/// `/run/hive` and the only user that may connect to the agent's sockets.
pub const AGENT_UID: u32 = 1000;

/// The first line of every settings file the daemon writes; a file without
/// it is an installation's own (the manager's) and left alone.
const HEADER: &str = "# Written by hive-c0re for agent ";

/// Capabilities the nspawn profile takes from the container's default set
/// (all of them only ever in the container's own user namespace). None is
/// needed by systemd or a coding agent inside:
/// - `CAP_NET_RAW`: raw and packet sockets (sniffing, forged packets); the
///   container has only its loopback anyway;
/// - `CAP_MKNOD`: device nodes (the device cgroup refuses opening them, and
///   a user namespace cannot create them);
/// - `CAP_LINUX_IMMUTABLE`: chattr +i, a file the hive could not remove;
/// - `CAP_SYS_TTY_CONFIG`: vhangup and console ioctls;
/// - `CAP_AUDIT_CONTROL`, `CAP_AUDIT_WRITE`: the kernel's audit log (journald
///   inside reads none).
pub const DROPPED_CAPABILITIES: &str = "CAP_NET_RAW CAP_MKNOD CAP_LINUX_IMMUTABLE \
CAP_SYS_TTY_CONFIG CAP_AUDIT_CONTROL CAP_AUDIT_WRITE";

/// The `.nspawn` file of agent `name`, whose user range starts at `base`
/// ([`super::userns`]):
/// - `PrivateUsers=<base>:65536` and `PrivateUsersOwnership=chown`: its own
///   user namespace; nspawn shifts the image's ownership into the range on
///   the first start (the daemon did the bound directories);
/// - its `/usr` as `usr` says ([`Usr`]): the shared image's version
///   ([`super::images`]) or the host's bound read-only (a template with an
///   empty `usr/`); inside either shows as owned by `nobody` (the host's
///   root is not in the range), so its setuid programs give nothing.
///   Rejected: the `idmap` bind option, which systemd 252 applies to an
///   attached mount: Linux refuses that ("Failed to map ids for bind mount
///   ...: Device or resource busy", seen in the test-bed on Linux 6.18).
///   [`Usr::Own`]: the container runs its image's own full copy;
/// - `Private=yes` without a veth: a network namespace with only its
///   loopback; the agent reaches the hive through its sockets;
/// - [`DROPPED_CAPABILITIES`];
/// - the manager's (`spec.repos`): `Bind=<proposed>:/hive/proposed` and
///   `BindReadOnly=<applied>:/hive/applied`. The repos in the first belong
///   to the container's user (the driver hands them over at each start,
///   [`super::userns::hand_over`]); the second stays the host's root's,
///   readable by its mode (`0604`/`0705`), and read-only whatever a mode says.
pub fn render_nspawn(
    name: &Ident,
    spec: &ContainerSpec,
    base: u32,
    usr: &Usr,
) -> Result<String, FileError> {
    let runtime = check_path("runtime directory", &spec.runtime_dir)?;
    let state = check_path("state directory", &spec.state_dir)?;
    let repos = spec.repos.as_ref().map(repo_binds).transpose()?;
    let mut out = format!("{HEADER}{name}; rewritten on rebuild.\n");
    let _ = writeln!(
        out,
        "[Exec]\nPrivateUsers={base}:{USER_RANGE}\nDropCapability={DROPPED_CAPABILITIES}"
    );
    for (k, v) in &spec.env {
        check_env(k, v, false)?;
        let _ = writeln!(out, "Environment=\"{k}={v}\"");
    }
    out.push_str("\n[Files]\nPrivateUsersOwnership=chown\n");
    match usr {
        Usr::Own => {}
        Usr::Host => out.push_str(HOST_USR_BIND),
        Usr::Shared(dir) => {
            let dir = check_path("shared image directory", dir)?;
            let _ = writeln!(out, "BindReadOnly={dir}:/usr");
        }
    }
    let _ = writeln!(out, "Bind={runtime}:{CONTAINER_RUNTIME_DIR}");
    let _ = writeln!(out, "Bind={state}:{CONTAINER_STATE_DIR}");
    if let Some((proposed, applied)) = repos {
        let _ = writeln!(out, "Bind={proposed}:{MANAGER_PROPOSED_DIR}");
        let _ = writeln!(out, "BindReadOnly={applied}:{MANAGER_APPLIED_DIR}");
    }
    out.push_str("\n[Network]\nPrivate=yes\nVirtualEthernet=no\n");
    Ok(out)
}

/// The host sides of the repo binds, checked.
fn repo_binds(repos: &RepoBinds) -> Result<(String, String), FileError> {
    Ok((
        check_path("proposed repos directory", &repos.proposed)?,
        check_path("applied repos directory", &repos.applied)?,
    ))
}

/// The line that binds the host's `/usr` into a container.
const HOST_USR_BIND: &str = "BindReadOnly=/usr\n";

/// Where a container's `/usr` comes from (nspawn profile); its `.nspawn`
/// file says which, so an agent keeps it until a rebuild moves it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Usr {
    /// Its image's own (a full copy of a self-contained image, as
    /// `systemd/image/build` made every agent before the shared image).
    Own,
    /// The host's, bound read-only (a template with an empty `usr/`).
    Host,
    /// A version of the shared agent image (its `usr` directory in the
    /// store, [`super::images`]), bound read-only.
    Shared(PathBuf),
}

/// What a `.nspawn` file this daemon wrote says (this version or an
/// earlier one, e.g. one still saying `PrivateUsers=no`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NspawnFile {
    /// Its binds and environment (no limits: those are not in the file).
    pub spec: ContainerSpec,
    /// The user range it names; `None`: none.
    pub base: Option<u32>,
    /// Its `/usr`: `Host` for every file before self-contained images (the
    /// agent's image was cloned from a template without one).
    pub usr: Usr,
}

/// Read back a `.nspawn` file this daemon wrote; `None` for a file that is
/// not ours.
pub fn parse_nspawn(text: &str) -> Option<NspawnFile> {
    if !text.starts_with(HEADER) {
        return None;
    }
    let mut spec = ContainerSpec {
        runtime_dir: PathBuf::new(),
        state_dir: PathBuf::new(),
        cpu_quota: None,
        memory_max: None,
        tasks_max: None,
        env: Vec::new(),
        repos: None,
        system: None,
    };
    let mut base = None;
    let mut usr = Usr::Own;
    let (mut proposed, mut applied) = (None, None);
    for line in text.lines() {
        if let Some(v) = line.strip_prefix("PrivateUsers=") {
            base = v.split(':').next().and_then(|b| b.parse().ok());
        } else if let Some(kv) = line.strip_prefix("Environment=\"") {
            let (k, v) = kv.strip_suffix('"')?.split_once('=')?;
            spec.env.push((k.to_owned(), v.to_owned()));
        } else if let Some(bind) = line.strip_prefix("Bind=") {
            match bind.split_once(':') {
                Some((src, CONTAINER_RUNTIME_DIR)) => spec.runtime_dir = src.into(),
                Some((src, CONTAINER_STATE_DIR)) => spec.state_dir = src.into(),
                Some((src, MANAGER_PROPOSED_DIR)) => proposed = Some(PathBuf::from(src)),
                _ => {}
            }
        } else if let Some((src, dst)) = line
            .strip_prefix("BindReadOnly=")
            .and_then(|b| b.split_once(':'))
        {
            match dst {
                MANAGER_APPLIED_DIR => applied = Some(PathBuf::from(src)),
                "/usr" => usr = Usr::Shared(src.into()),
                _ => {}
            }
        } else if HOST_USR_BIND.strip_suffix('\n') == Some(line) {
            usr = Usr::Host;
        }
    }
    if let (Some(proposed), Some(applied)) = (proposed, applied) {
        spec.repos = Some(RepoBinds { proposed, applied });
    }
    let found = |p: &Path| !p.as_os_str().is_empty();
    (found(&spec.runtime_dir) && found(&spec.state_dir)).then_some(NspawnFile { spec, base, usr })
}

/// The NixOS container config of agent `name` (read by NixOS's
/// `container@.service` as an environment file), isolated as the nspawn
/// profile's `.nspawn` file isolates (see [`render_nspawn`]):
/// - `PRIVATE_NETWORK=1` and no `HOST_ADDRESS`/`LOCAL_ADDRESS`: nspawn's
///   `--private-network` without a veth, a network namespace with only its
///   loopback; the agent's way out is its runtime directory's `egress.sock`
///   (bound with `/run/hive`), through the harness's forwarder;
/// - `--private-users=<base>:65536` (the same range the nspawn profile
///   allocates and records, [`super::userns`]) with
///   `--private-users-ownership=chown`, as extra flags rather than NixOS's
///   `PRIVATE_USERS=`, which older NixOS releases ignore;
/// - `--drop-capability=` [`DROPPED_CAPABILITIES`];
/// - the built system, no autostart (the hive starts it), binds and
///   environment as extra nspawn flags. The unit's script splits
///   `EXTRA_NSPAWN_FLAGS` on spaces, so environment values with spaces are
///   refused here.
pub fn render_nixos_conf(
    name: &Ident,
    system: &Path,
    spec: &ContainerSpec,
    base: u32,
) -> Result<String, FileError> {
    let system = check_path("system closure", system)?;
    let runtime = check_path("runtime directory", &spec.runtime_dir)?;
    let state = check_path("state directory", &spec.state_dir)?;
    let mut flags = format!(
        "--private-users={base}:{USER_RANGE} --private-users-ownership=chown \
         --drop-capability={} \
         --bind={runtime}:{CONTAINER_RUNTIME_DIR} --bind={state}:{CONTAINER_STATE_DIR}",
        DROPPED_CAPABILITIES.replace(' ', ",")
    );
    // The manager's config repos, as the nspawn profile binds them.
    if let Some((proposed, applied)) = spec.repos.as_ref().map(repo_binds).transpose()? {
        let _ = write!(
            flags,
            " --bind={proposed}:{MANAGER_PROPOSED_DIR} --bind-ro={applied}:{MANAGER_APPLIED_DIR}"
        );
    }
    for (k, v) in &spec.env {
        check_env(k, v, true)?;
        let _ = write!(flags, " --setenv={k}={v}");
    }
    Ok(format!(
        "{HEADER}{name}; rewritten on rebuild.\n\
         SYSTEM_PATH={system}\nPRIVATE_NETWORK=1\nAUTO_START=0\nEXTRA_NSPAWN_FLAGS=\"{flags}\"\n"
    ))
}

/// A nixos config this daemon wrote before its containers had user ranges
/// (`PRIVATE_NETWORK=0`, no `--private-users=`), moved into range `base`:
/// the same text with a private network and the isolating flags in front
/// of its own. `None` for a file that is not ours or is already isolated.
/// Its state and runtime directories (its binds) come with it, for the
/// adoption of their ownership ([`super::userns::ensure`]).
pub fn isolate_nixos_conf(text: &str, base: u32) -> Option<(String, PathBuf, PathBuf)> {
    if !text.starts_with(HEADER) || text.contains("--private-users=") {
        return None;
    }
    let bind = |inside: &str| nixos_conf_bind(text, "--bind=", inside);
    let (runtime, state) = (bind(CONTAINER_RUNTIME_DIR)?, bind(CONTAINER_STATE_DIR)?);
    let isolating = format!(
        "EXTRA_NSPAWN_FLAGS=\"--private-users={base}:{USER_RANGE} --private-users-ownership=chown \
         --drop-capability={} ",
        DROPPED_CAPABILITIES.replace(' ', ",")
    );
    let text = text
        .replace("\nPRIVATE_NETWORK=0\n", "\nPRIVATE_NETWORK=1\n")
        .replace("EXTRA_NSPAWN_FLAGS=\"", &isolating);
    Some((text, state, runtime))
}

/// The host side of the bind to `inside` that a nixos config this daemon
/// wrote passes as `flag` (`--bind=` or `--bind-ro=`).
fn nixos_conf_bind(text: &str, flag: &str, inside: &str) -> Option<PathBuf> {
    if !text.starts_with(HEADER) {
        return None;
    }
    let flags = text
        .lines()
        .find_map(|l| l.strip_prefix("EXTRA_NSPAWN_FLAGS=\""))?;
    flags.split([' ', '"']).find_map(|f| {
        let (src, dst) = f.strip_prefix(flag)?.split_once(':')?;
        (dst == inside).then(|| PathBuf::from(src))
    })
}

/// What a nixos config this daemon wrote binds: its state and runtime
/// directories (`None`: not ours), and the manager's config repos if any.
pub fn nixos_conf_binds(text: &str) -> Option<(PathBuf, PathBuf, Option<RepoBinds>)> {
    let state = nixos_conf_bind(text, "--bind=", CONTAINER_STATE_DIR)?;
    let runtime = nixos_conf_bind(text, "--bind=", CONTAINER_RUNTIME_DIR)?;
    let proposed = nixos_conf_bind(text, "--bind=", MANAGER_PROPOSED_DIR);
    let applied = nixos_conf_bind(text, "--bind-ro=", MANAGER_APPLIED_DIR);
    let repos = proposed
        .zip(applied)
        .map(|(proposed, applied)| RepoBinds { proposed, applied });
    Some((state, runtime, repos))
}

/// Write `contents` to `path` through a temporary file in the same
/// directory, creating the directory if needed.
pub fn write_atomically(path: &Path, contents: &str) -> Result<(), FileError> {
    let io_err = |source| FileError::Io {
        path: path.to_path_buf(),
        source,
    };
    let dir = path.parent().unwrap_or(Path::new("/"));
    std::fs::create_dir_all(dir).map_err(io_err)?;
    let mut tmp_name = std::ffi::OsString::from(".");
    tmp_name.push(path.file_name().unwrap_or_default());
    tmp_name.push(".tmp");
    let tmp = dir.join(tmp_name);
    std::fs::write(&tmp, contents).map_err(io_err)?;
    std::fs::rename(&tmp, path).map_err(io_err)
}

/// Remove `path`; a file that is already gone is fine.
pub fn remove(path: &Path) -> Result<(), FileError> {
    match std::fs::remove_file(path) {
        Err(e) if e.kind() != io::ErrorKind::NotFound => Err(FileError::Io {
            path: path.to_path_buf(),
            source: e,
        }),
        _ => Ok(()),
    }
}

#[cfg(test)]
#[path = "settings_files_tests.rs"]
mod tests;
