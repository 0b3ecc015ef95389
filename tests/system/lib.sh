# shellcheck shell=bash
# The real-systemd test-bed: a library sourced by tests/system/run and tests/system/hive-shell.
#
# What it builds: a real systemd (PID 1, system D-Bus, journald, machined) booted with
# `systemd-nspawn --boot` on a machine whose own PID 1 need not be systemd. The container's
# root is an empty tmpfs (`--volatile=yes`) over the host's own /usr, so nothing is downloaded
# and setup is one apt package (systemd-container). Into it go, unchanged, the project's
# shipped units (systemd/hive-c0re{,-web}.socket and .service -> /etc/systemd/system, the sysusers file
# -> /etc/sysusers.d, the sysctl file -> /etc/sysctl.d) and the freshly built binaries (a directory bound read-only on
# /usr/local/bin, where the shipped unit's ExecStart expects hive-c0re).
#
# Decision: boot the host's /usr rather than a debootstrapped Debian rootfs. Rejected
# alternative: debootstrap (the DESIGN's first plan) costs ~50 s and ~500 MB per fresh machine
# and a download; the host's /usr is the same Debian userland, ready in a second.
#
# Decision: the host reaches host.sock through /proc/<leader>/root/run/hyperhive (a symlink
# at $TB_DIR/host.sock), not through a host directory bound onto /run/hyperhive. Rejected
# alternative: with a bind, /run/hyperhive exists before systemd starts the socket unit, so
# its mode would be the bind's and the DirectoryMode= test could not fail. This way systemd
# creates the directory and the socket, as it does on a real host.
#
# Every bed has its own name and directory (TB_NAME, TB_DIR), and launches nspawn from its
# own cgroup, so two beds run side by side. tb_down leaves no process, cgroup or mount.
#
# Helpers for tests: in_c, hivectl_root, hivectl_as, wait_for, journal_tail, unit_prop,
# sd1/m1 (busctl on the contained bus from the host). Nested containers: tb_make_template;
# the hive's containers: tb_hive, tb_agents, tb_spawn, tb_row, tb_agent_unit.

TB_REPO=${TB_REPO:-$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)}
TB_PYTHON=/usr/bin/python3              # the host's /usr is the container's: same path inside
TB_PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin
TB_UNIT=hive-c0re.service
# shellcheck disable=SC2034  # used by the scripts that source this file
TB_SOCKET_UNIT=hive-c0re.socket
# shellcheck disable=SC2034
TB_WEB_SOCKET_UNIT=hive-c0re-web.socket   # the dashboard's web.sock
# shellcheck disable=SC2034
TB_EGRESS_UNITS="hive-c0re-egress.socket hive-c0re-egress.service"   # agents' egress proxy

# tb_subreaper SCRIPT ARGS...: re-exec SCRIPT with this process as a child subreaper.
# Why: an interrupted `nsenter` dies before its child in the bed; the orphan is reparented to
# the host's PID 1, which (on these VMs not systemd) may not reap it soon; the zombie sits in
# the bed's PID namespace and its halt waits ~10 s for it. As a subreaper, bash gets the
# orphans and reaps them. The attribute survives exec; python3 is the only tool needed.
tb_subreaper() {
  [ -n "${TB_SUBREAPER:-}" ] && return 0
  export TB_SUBREAPER=$$
  exec "$TB_PYTHON" -c 'import ctypes, os, sys
if ctypes.CDLL(None, use_errno=True).prctl(36, 1, 0, 0, 0) != 0:  # PR_SET_CHILD_SUBREAPER
    sys.exit("prctl(PR_SET_CHILD_SUBREAPER) failed")
os.execv("/bin/bash", ["bash"] + sys.argv[1:])' "$@"
}

tb_now() { echo "${EPOCHREALTIME/./}"; }        # microseconds
tb_log() { printf '%s\n' "$*" >&2; }
tb_die() { tb_log "test-bed: $*"; exit 1; }

# tb_need: install what the bed needs with apt, only when missing.
tb_need() {
  [ "$(id -u)" = 0 ] || tb_die "must run as root (it boots a container)"
  if [ ! -L /bin ] || [ ! -e /usr/lib/os-release ]; then
    tb_die "the host must be merged-usr (/bin -> usr/bin)"
  fi
  [ -d /usr/local/bin ] || tb_die "/usr/local/bin is missing (the binaries are bound onto it)"
  local pkgs=()
  command -v systemd-nspawn >/dev/null || pkgs+=(systemd-container)
  command -v busctl >/dev/null && [ -x /usr/lib/systemd/systemd ] || pkgs+=(systemd dbus)
  command -v nsenter >/dev/null && command -v setpriv >/dev/null || pkgs+=(util-linux)
  command -v mkfs.xfs >/dev/null || pkgs+=(xfsprogs)   # tests/quota.sh's XFS image
  [ -x "$TB_PYTHON" ] || pkgs+=(python3-minimal)
  [ ${#pkgs[@]} = 0 ] && return 0
  tb_log "test-bed: apt-get install ${pkgs[*]}"
  local _; for _ in 1 2 3 4 5 6 7 8 9 10; do   # another apt may hold the lists lock
    apt-get update -q >/dev/null && break; sleep 6; done
  DEBIAN_FRONTEND=noninteractive apt-get install -y -q -o DPkg::Lock::Timeout=600 \
    --no-install-recommends "${pkgs[@]}" >/dev/null || tb_die "apt-get install ${pkgs[*]} failed"
}

# tb_build: the release binaries, rebuilt when stale (cargo is incremental).
tb_build() {
  command -v cargo >/dev/null || tb_die "cargo not found (set TB_BIN to prebuilt binaries)"
  (cd "$TB_REPO" && cargo build --release --bins --quiet) || tb_die "cargo build --release failed"
}

# tb_init [NAME [DIR]]: names and paths of one bed; a fresh unique pair by default.
tb_init() {
  TB_NAME=${1:-}
  TB_DIR=${2:-}
  if [ -z "$TB_DIR" ]; then
    TB_DIR=$(mktemp -d "${TMPDIR:-/tmp}/hivetb.XXXXXX")
    chmod 0755 "$TB_DIR"
  fi
  if [ -z "$TB_NAME" ]; then
    TB_NAME=$(basename "$TB_DIR" | tr 'A-Z.' 'a-z-')
  fi
  TB_BUS=unix:path=$TB_DIR/dbus/system_bus_socket
  local target=${CARGO_TARGET_DIR:-target}
  case "$target" in /*) ;; *) target=$TB_REPO/$target ;; esac   # cargo runs in $TB_REPO
  TB_BIN=${TB_BIN:-$target/release}
}

tb_cgroups() {  # the cgroup(s) nspawn is launched from: hybrid v1+v2 (this VM) or pure v2
  if [ -e /sys/fs/cgroup/cgroup.controllers ]; then echo "/sys/fs/cgroup/$TB_NAME"
  else echo "/sys/fs/cgroup/unified/$TB_NAME /sys/fs/cgroup/systemd/$TB_NAME"; fi
}

tb_new_id() { local u; u=$(cat /proc/sys/kernel/random/uuid); echo "${u//-/}" > "$1"; }

# tb_prepare: the directories bound into the bed, with the shipped units and fresh binaries.
tb_prepare() {
  local d=$TB_DIR b
  mkdir -p "$d"/{dbus,units,journal,bin,sysusers.d,sysctl.d}
  touch "$d/.hive-testbed"       # tb_down removes only a directory that carries this mark
  [ -s "$d/machine-id" ] || tb_new_id "$d/machine-id"
  # /etc/machine-id is a read-only bind (else: first boot, a wizard on the console), so the
  # service that would commit it can only fail: mask it.
  ln -sfn /dev/null "$d/units/systemd-machine-id-commit.service"
  # The shipped units, byte for byte.
  cp "$TB_REPO/systemd/hive-c0re.socket" "$TB_REPO/systemd/hive-c0re-web.socket" \
    "$TB_REPO/systemd/hive-c0re.service" "$TB_REPO/systemd/hive-c0re-egress.socket" \
    "$TB_REPO/systemd/hive-c0re-egress.service" "$d/units/"
  # The shipped sysusers file, where an admin's would go (/etc is a fresh tmpfs each boot).
  cp "$TB_REPO/systemd/hive-c0re.sysusers" "$d/sysusers.d/hive-c0re.conf"
  # The shipped sysctl file, where README's install puts it. systemd-sysctl skips it in the
  # bed (nspawn mounts /proc/sys read-only: ConditionPathIsReadWrite=/proc/sys/), so the
  # machine's own limits stay; tests/inotify.sh says which it saw.
  cp "$TB_REPO/systemd/hive-c0re.sysctl" "$d/sysctl.d/60-hive-c0re.conf"
  # Test-bed users: one outside hive-admin, one member.
  cat > "$d/sysusers.d/zz-hive-testbed.conf" <<'EOF'
u hive-outsider - "test-bed user outside hive-admin"
u hive-member - "test-bed user in hive-admin"
m hive-member hive-admin
EOF
  # What may run inside, whatever the host has installed (see tb_preset).
  mkdir -p "$d/preset"
  tb_preset bed > "$d/preset/00-hive-testbed.preset"
  [ "${TB_POISON:-0}" = 1 ] && tb_poison
  # A copy, not the build directory: a rebuild during the run must not change the bed.
  for b in hive-c0re hivectl hive-agent; do
    [ -x "$TB_BIN/$b" ] || tb_die "$TB_BIN/$b is missing (cargo build --release --bins)"
    cp "$TB_BIN/$b" "$d/bin/$b"
  done
}

# tb_preset bed|container: the systemd preset file of the bed or of a template: `disable *`
# after the list of what a hive needs, so what the host's packages ship (avahi-daemon from
# Chromium's recommends, postgresql, redis-server, nftables...) is not enabled inside.
# Why: the bed and its nested containers boot the host's own /usr, and a template has no
# machine-id, so every boot of a clone is a first boot, on which systemd enables every unit
# its presets allow; Debian's default is "enable" for anything no preset names. One failing
# service was enough to leave every container "degraded" (issue 19).
# Units that /usr enables statically (journald, dbus.socket, logind: *.wants/ links in /usr)
# or that D-Bus activates (machined) run whatever a preset says; they are listed all the same,
# for distributions that enable them by preset (Fedora: dbus-broker). The first preset line
# matching a unit wins and files are read in name order across /etc and /usr, hence "00-".
# The bed itself is not a first boot (its /etc/machine-id is given), so presets are never
# applied there: its /etc starts empty and only what /usr enables statically runs. The file
# is in its /etc all the same (/etc/systemd/system-preset), for `systemctl preset` and as the
# record of what the bed is for.
# A container's is the agent image's own file (systemd/image/hive-container.preset).
tb_preset() {
  if [ "$1" = container ]; then cat "$TB_REPO/systemd/image/hive-container.preset"; return; fi
  echo "# written by tests/system/lib.sh (tb_preset $1): only what the hive needs"
  printf 'enable %s\n' systemd-journald.service systemd-journald.socket dbus.socket dbus.service \
    dbus-broker.service systemd-machined.service machines.target hive-c0re.socket \
    hive-c0re-web.socket hive-c0re-egress.socket
  echo 'disable *'
}

# tb_poison: a service that always fails, enabled by a preset the way a package would ship it,
# laid over the bed's /usr (nspawn overlays, read-only; the host's /usr is not touched). The
# bed's nested containers bind the bed's /usr, so they see it too. `run` boots every bed with
# it (TB_POISON=1): the whole tier then shows that a failing host service changes nothing.
TB_POISON_UNIT=hive-testbed-poison.service
tb_poison() {
  local d=$TB_DIR/poison
  mkdir -p "$d/system" "$d/system-preset"
  cat > "$d/system/$TB_POISON_UNIT" <<'EOF'
[Unit]
Description=test-bed poison: a host service that always fails (tests/system/lib.sh)

[Service]
Type=oneshot
ExecStart=/bin/false

[Install]
WantedBy=multi-user.target
EOF
  # like a distribution's preset; Debian's default (no preset names the unit) enables it too
  echo "enable $TB_POISON_UNIT" > "$d/system-preset/50-hive-testbed-poison.preset"
  TB_NSPAWN_EXTRA="${TB_NSPAWN_EXTRA:+$TB_NSPAWN_EXTRA }--overlay-ro=/usr/lib/systemd/system:$d/system:/usr/lib/systemd/system --overlay-ro=/usr/lib/systemd/system-preset:$d/system-preset:/usr/lib/systemd/system-preset"
}

tb_nspawn_pid() { [ -s "$TB_DIR/nspawn.pid" ] && cat "$TB_DIR/nspawn.pid"; }
tb_leader() { cat "$TB_DIR/leader.pid"; }
tb_is_up() { local p; p=$(tb_nspawn_pid) && kill -0 "$p" 2>/dev/null; }

# in_c CMD...: run CMD inside the bed as root, with a clean environment.
in_c() {
  nsenter -t "$(tb_leader)" -a -- /usr/bin/env -i PATH="$TB_PATH" LANG=C.UTF-8 \
    SYSTEMD_PAGER= SYSTEMD_COLORS=0 "$@"
}
# in_c_as USER CMD...: as USER with that user's groups (from the bed's /etc/group).
in_c_as() {
  local u=$1; shift
  in_c setpriv --reuid="$u" --regid="$u" --init-groups --reset-env -- "$@"
}
hivectl_root() { in_c timeout 10 hivectl "$@"; }
hivectl_as() { local u=$1; shift; in_c_as "$u" timeout 10 hivectl "$@"; }
hbus() { busctl --address="$TB_BUS" "$@"; }   # host-side busctl on the contained system bus
sd1() { hbus call org.freedesktop.systemd1 /org/freedesktop/systemd1 org.freedesktop.systemd1.Manager "$@"; }
m1() { hbus call org.freedesktop.machine1 /org/freedesktop/machine1 org.freedesktop.machine1.Manager "$@"; }
unit_prop() { in_c systemctl show -P "$2" "$1"; }   # unit_prop UNIT PROPERTY

# wait_for SECONDS DESCRIPTION CMD...: poll CMD (every 50 ms) until it succeeds.
wait_for() {
  local secs=$1 what=$2; shift 2
  local end=$(( $(tb_now) + secs * 1000000 ))
  until "$@" >/dev/null 2>&1; do
    if [ "$(tb_now)" -ge "$end" ]; then tb_log "timed out after ${secs}s waiting for: $what"; return 1; fi
    sleep 0.05
  done
}

# journal_mark: remember the journal's end; journal_tail then shows only what came after.
journal_mark() {
  TB_CURSOR=$(in_c journalctl -n 0 --show-cursor --no-pager 2>/dev/null | sed -n 's/^-- cursor: //p')
}

# journal_tail ["UNIT..." [N]]: the last N lines of the units' journal since journal_mark (on
# a live bed, or from its journal directory after it is down). UNIT is a space-separated list.
journal_tail() {
  local units=${1:-$TB_UNIT} n=${2:-20} args=() u
  for u in $units; do args+=(-u "$u"); done
  [ -n "${TB_CURSOR:-}" ] && args+=(--after-cursor="$TB_CURSOR")
  if tb_is_up; then
    in_c journalctl "${args[@]}" -n "$n" --no-pager -o short-monotonic 2>&1
  else
    journalctl -D "$TB_DIR/journal/$(cat "$TB_DIR/machine-id")" "${args[@]}" -n "$n" \
      --no-pager -o short-monotonic 2>&1
  fi
}

# tb_find_leader NSPAWN_PID: the bed's PID 1 as the host sees it: the child of nspawn that is
# PID 1 of its own PID namespace. (Not just "the child": nspawn first forks a short-lived
# helper, which a busy machine catches often enough.)
tb_find_leader() {
  local c
  for c in $(ps -o pid= --ppid "$1" 2>/dev/null); do
    [ "$(sed -n 's/^NSpid:.*[[:space:]]\([0-9]*\)$/\1/p' "/proc/$c/status" 2>/dev/null)" = 1 ] && { echo "$c"; return; }
  done
}

# tb_up: boot the bed and wait until its systemd has finished starting up (multi-user.target).
tb_up() {
  tb_is_up && return 0
  local d args cg
  args=(--quiet --boot --register=no --keep-unit -M "$TB_NAME" --console=read-only
        --private-network -D / --volatile=yes
        --bind-ro="$TB_DIR/machine-id:/etc/machine-id"
        --bind="$TB_DIR/units:/etc/systemd/system"
        --bind-ro="$TB_DIR/sysusers.d:/etc/sysusers.d"
        --bind-ro="$TB_DIR/sysctl.d:/etc/sysctl.d"
        --bind-ro="$TB_DIR/preset:/etc/systemd/system-preset"
        --bind="$TB_DIR/journal:/var/log/journal"
        --bind="$TB_DIR/dbus:/run/dbus"
        --bind-ro="$TB_DIR/bin:/usr/local/bin")
  # shellcheck disable=SC2206  # TB_NSPAWN_EXTRA: extra nspawn arguments, split on spaces
  args+=(${TB_NSPAWN_EXTRA:-})
  # --register=no --keep-unit: nspawn needs no systemd on the host. --keep-unit puts the
  # container in sub-cgroups of the caller's: give each bed a cgroup of its own.
  for cg in $(tb_cgroups); do mkdir -p "$cg"; done
  (
    for cg in $(tb_cgroups); do echo "$BASHPID" > "$cg/cgroup.procs"; done
    # own session: a Ctrl-C on the terminal reaches the harness (which tears down), not nspawn
    exec setsid systemd-nspawn "${args[@]}"
  ) </dev/null >"$TB_DIR/console.log" 2>&1 &
  local ns=$! leader="" end
  echo "$ns" > "$TB_DIR/nspawn.pid"
  end=$(( $(tb_now) + 20000000 ))
  while [ -z "$leader" ]; do
    leader=$(tb_find_leader "$ns")
    [ -n "$leader" ] && break
    kill -0 "$ns" 2>/dev/null || { cat "$TB_DIR/console.log" >&2; tb_log "test-bed: nspawn exited"; return 1; }
    [ "$(tb_now)" -lt "$end" ] || { tb_log "test-bed: no container leader after 20 s"; return 1; }
    sleep 0.05
  done
  echo "$leader" > "$TB_DIR/leader.pid"
  # the bus refuses connections for a moment after the leader appears: retry
  local st=""
  end=$(( $(tb_now) + 60000000 ))
  while :; do
    st=$(timeout 30 nsenter -t "$leader" -a -- systemctl is-system-running --wait 2>/dev/null || true)
    case "$st" in running|degraded) break ;; esac
    [ "$(tb_now)" -lt "$end" ] || break
    sleep 0.05
  done
  # What the tier needs of the bed: multi-user.target reached (its bus, journald; machined is
  # bus-activated). A unit of the host's that fails inside makes it "degraded": said, not fatal.
  local failed
  failed=$(in_c systemctl --failed --no-legend --plain --no-pager 2>/dev/null | cut -d' ' -f1 | paste -sd' ' -)
  if [ "$(in_c systemctl is-active multi-user.target 2>/dev/null)" != active ]; then
    tb_log "test-bed: the bed's systemd is '$st' and has not reached multi-user.target (failed units: ${failed:-none})"
    in_c systemctl list-jobs --no-pager >&2 || true
    tail -30 "$TB_DIR/console.log" >&2
    return 1
  fi
  [ -z "$failed" ] || tb_log "test-bed: note: failed units in the bed (not the hive's): $failed"
  # What a distro install does after dropping a sysusers file: create hive-admin (and the
  # test users). /etc is a tmpfs, so this happens on every boot.
  in_c systemd-sysusers || { tb_log "test-bed: systemd-sysusers failed"; return 1; }
  ln -sfn "/proc/$leader/root/run/hyperhive/host.sock" "$TB_DIR/host.sock"
}

# tb_kill_helpers: SIGKILL our host-side `nsenter -t <leader>` processes still running (after
# an interrupt). Why: at halt, systemd-shutdown SIGSTOPs everything in the bed; nsenter then
# stops itself too (it mirrors its child's stop) and never reaps its child, so the halt waits
# ~10 s on that zombie. Killed first, their children fall to the bed's PID 1, which reaps them.
tb_kill_helpers() {
  local leader p args
  leader=$(tb_leader 2>/dev/null) || return 0
  for p in /proc/[0-9]*; do
    [ "$(cat "$p/comm" 2>/dev/null)" = nsenter ] || continue
    args=$(tr '\0' ' ' < "$p/cmdline" 2>/dev/null) || continue
    case " $args" in *" -t $leader "*) kill -KILL "${p#/proc/}" 2>/dev/null || true ;; esac
  done
}

# tb_down: power the bed off and remove its cgroups; KEEP=1 keeps $TB_DIR (logs, journal).
tb_down() {
  local ns cg end
  tb_kill_helpers
  if ns=$(tb_nspawn_pid) && kill -0 "$ns" 2>/dev/null; then
    kill -TERM "$ns" 2>/dev/null || true     # nspawn: SIGTERM = clean poweroff of the bed
    end=$(( $(tb_now) + 30000000 ))
    while kill -0 "$ns" 2>/dev/null && [ "$(tb_now)" -lt "$end" ]; do sleep 0.05; done
    if kill -0 "$ns" 2>/dev/null; then
      tb_log "test-bed: nspawn $ns still running after 30 s: SIGKILL"
      kill -KILL "$ns" 2>/dev/null || true
      end=$(( $(tb_now) + 10000000 ))
      while kill -0 "$ns" 2>/dev/null && [ "$(tb_now)" -lt "$end" ]; do sleep 0.05; done
    fi
  fi
  # nothing can be left in them once the container's PID 1 is gone; remove depth-first
  for cg in $(tb_cgroups); do
    [ -d "$cg" ] && find "$cg" -depth -type d -exec rmdir {} + 2>/dev/null
  done
  # nspawn's host-side scratch directory for this machine (left when the host's /run is
  # not a tmpfs: "Attempted to remove disk file system under ..."): empty, remove it
  rmdir "/run/systemd/nspawn/propagate/$TB_NAME" 2>/dev/null || true
  rm -f "$TB_DIR/nspawn.pid" "$TB_DIR/leader.pid" "$TB_DIR/host.sock"
  if [ "${KEEP:-0}" != 1 ] && [ -e "$TB_DIR/.hive-testbed" ]; then rm -rf "$TB_DIR"; fi
  return 0
}

# tb_leftovers: print what this bed left on the host (processes, cgroups, mounts); empty = clean.
tb_leftovers() {
  local f
  for f in /proc/[0-9]*/cgroup; do
    grep -qE "/$TB_NAME(/|$)" "$f" 2>/dev/null && echo "process ${f#/proc/}: $({ tr '\0' ' ' < "${f%/cgroup}/cmdline"; } 2>/dev/null)"
  done
  for f in /proc/[0-9]*/cmdline; do   # e.g. nspawn itself, or a test's client left running
    [ "${f%/cmdline}" = "/proc/$$" ] || [ "${f%/cmdline}" = "/proc/$BASHPID" ] && continue
    # (the group catches the redirection's error: a process that exited meanwhile is no error)
    { tr '\0' ' ' < "$f"; } 2>/dev/null | grep -qF -- "$TB_DIR" && echo "process ${f#/proc/}: $({ tr '\0' ' ' < "$f"; } 2>/dev/null)"
  done
  find /sys/fs/cgroup -maxdepth 2 -name "$TB_NAME" 2>/dev/null | sed 's/^/cgroup /'
  grep -F -e "$TB_DIR" -e "/$TB_NAME" /proc/self/mountinfo | sed 's/^/mount /'
  [ -e "/run/systemd/nspawn/propagate/$TB_NAME" ] && echo "dir /run/systemd/nspawn/propagate/$TB_NAME"
  return 0
}

# tb_nspawn_settings MACHINE [EXTRA-LINES]: /etc/systemd/nspawn/MACHINE.nspawn in the bed, for
# containers a test makes behind the daemon's back (the driver's tests, the manager's): no user
# namespace, the bed's /usr bound read-only, no veth. Not what the daemon writes for an agent
# (its own user range and network: settings_files.rs, tests/isolation.sh). A file in /etc/systemd/nspawn is trusted: Bind= applies.
# The bed's /etc/systemd/nspawn is not bound from the host: like a fresh Debian host (whose
# systemd-container creates none), it does not exist until someone creates it, and the shipped
# unit must make it for the daemon (ProtectSystem=strict; ReadWritePaths= skips a missing path).
tb_nspawn_settings() {
  printf '[Exec]\nPrivateUsers=no\n[Files]\nBindReadOnly=/usr\n%s[Network]\nVirtualEthernet=no\n' \
    "${2:+$2$'\n'}" | in_c sh -c "mkdir -p /etc/systemd/nspawn && cat > /etc/systemd/nspawn/$1.nspawn"
}

# tb_make_template NAME: a nested-container template image under /var/lib/machines/NAME in
# the bed (os-release, an empty usr/ to bind the host's /usr on, the merged-usr symlinks).
# A host-/usr template, not the agent image (systemd/image/build, tests/agent_image.sh): the
# tier boots dozens of containers, and a clone of this boots in about a second.
tb_make_template() {
  local t=/var/lib/machines/$1
  in_c mkdir -p "$t/etc" "$t/usr"
  in_c cp /usr/lib/os-release "$t/etc/os-release"
  in_c ln -sfn usr/bin "$t/bin"
  in_c ln -sfn usr/sbin "$t/sbin"
  in_c ln -sfn usr/lib "$t/lib"
  in_c ln -sfn usr/lib64 "$t/lib64"
  # No machine-id (each clone gets its own at first boot), so every boot of a clone is a
  # "first boot": without this mask the First Boot Wizard waits on the console for ever.
  in_c mkdir -p "$t/etc/systemd/system"
  in_c ln -sfn /dev/null "$t/etc/systemd/system/systemd-firstboot.service"
  # ... and on that first boot systemd enables what the presets allow: only what a hive's
  # container needs, not what the host's packages ship (tb_preset). TB_NO_PRESET=1: none.
  in_c mkdir -p "$t/etc/systemd/system-preset"
  [ "${TB_NO_PRESET:-0}" = 1 ] ||
    tb_preset container | in_c sh -c "cat > $t/etc/systemd/system-preset/00-hive-container.preset"
}

# tb_machine_ready MACHINE [UNIT]: UNIT (default multi-user.target) is active in MACHINE's
# nested systemd: what a test needs of a container (its bus for `systemd-run -M`, its journal;
# later hive-agent.service). Not "is-system-running = running": one failed unit makes that
# "degraded" for ever, and what fails may be the host's business (issue 19).
tb_machine_ready() {
  [ "$(in_c systemctl -M "$1" is-active "${2:-multi-user.target}" 2>/dev/null)" = active ]
}

# tb_machine_report MACHINE: one line on what the nested systemd is doing, asked from within
# (nsenter into the container's PID 1, so it works without the container's bus): its state,
# its failed units, its queued jobs.
tb_machine_report() {
  local leader q=(systemctl --no-pager --no-legend --plain)
  leader=$(in_c machinectl show -p Leader --value "$1" 2>/dev/null) || { echo "not registered with machined"; return 0; }
  echo "state: $(in_c nsenter -t "$leader" -a -- systemctl is-system-running 2>&1);" \
    "failed units: $(in_c nsenter -t "$leader" -a -- "${q[@]}" --failed 2>&1 | cut -d' ' -f1 | paste -sd' ' -);" \
    "jobs: $(in_c nsenter -t "$leader" -a -- "${q[@]}" list-jobs 2>&1 | awk '{print $2 "/" $3}' | paste -sd' ' -)"
}

# tb_wait_machine SECS MACHINE [UNIT]: wait until tb_machine_ready; on time-out also say what
# is wrong inside (tb_machine_report).
tb_wait_machine() {
  local unit=${3:-multi-user.target}
  wait_for "$1" "$unit to be active in $2" tb_machine_ready "$2" "$unit" && return 0
  tb_log "  inside $2: $(tb_machine_report "$2")"
  return 1
}

# --- the hive's containers (tests/containers.sh, tests/logs.sh) -------------------------------

# tb_hive [CONFIG-JSON]: the daemon's /etc/hive-c0re/config.json in the bed (default: a 2 s
# stop deadline, everything else the daemon's defaults), the template image, the socket
# listening. The daemon reads the config when it starts: tb_reset stopped it before the test.
tb_hive() {
  local config=${1:-'{"stop_deadline_secs": 2}'}
  in_c mkdir -p /etc/hive-c0re
  printf '%s\n' "$config" | in_c sh -c 'cat > /etc/hive-c0re/config.json'
  in_c test -e /var/lib/machines/hive-template/etc/os-release || tb_make_template hive-template
  in_c systemctl start "$TB_SOCKET_UNIT"
}

# tb_agents NAME...: the agents this test spawns; an EXIT trap destroys them (and the manager's
# container, if tb_manager_container made one), so no container outlives its test.
tb_agents() {
  TB_AGENTS=("$@")
  trap tb_forget_agents EXIT
}
tb_forget_agents() {
  local n
  for n in "${TB_AGENTS[@]}"; do
    hivectl_root destroy --purge "$n" >/dev/null 2>&1 && continue
    tb_remove_machine "h-$n"      # the daemon could not: take it down behind its back
  done
  [ "${TB_MANAGER_CONTAINER:-0}" = 1 ] && tb_remove_machine h-ruth
  return 0
}
tb_machine_gone() { ! m1 GetMachine s "$1" >/dev/null 2>&1; }
# tb_remove_machine MACHINE: its unit stopped, its image and .nspawn file removed.
tb_remove_machine() {
  sd1 StopUnit ss "systemd-nspawn@$1.service" replace >/dev/null 2>&1 || true
  wait_for 20 "$1 to stop" tb_machine_gone "$1" || true
  in_c systemctl reset-failed "systemd-nspawn@$1.service" 2>/dev/null || true
  in_c machinectl remove "$1" 2>/dev/null || true
  in_c rm -f "/etc/systemd/nspawn/$1.nspawn"
}

# tb_manager_container: a container for the manager (ruth), which the daemon registers itself
# but does not create: an installation provides it. Removed by tb_agents' EXIT trap.
tb_manager_container() {
  TB_MANAGER_CONTAINER=1
  m1 CloneImage ssb hive-template h-ruth false
  tb_nspawn_settings h-ruth
}

# tb_row NAME: agent NAME's roster row from `hivectl --json status` as one word: running,
# failed (the unit failed, not running), stopped; nothing when NAME has no row.
tb_row() {
  hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
for r in json.load(sys.stdin).get("agent_statuses") or []:
    if r["name"] == sys.argv[1]:
        print("running" if r["running"] else "failed" if r["failed"] else "stopped")' "$1"
}
tb_row_is() { [ "$(tb_row "$1")" = "$2" ]; }
# tb_approval_field ID FIELD: FIELD of approval ID from `hivectl --json pending --all` (empty
# when the row has none or there is no such row); tb_approval_is ID STATUS: its status is STATUS.
tb_approval_field() {
  hivectl_root --json pending --all | "$TB_PYTHON" -c 'import json, sys
for a in json.load(sys.stdin).get("approvals") or []:
    if a["id"] == int(sys.argv[1]):
        print(a.get(sys.argv[2]) or "")' "$1" "$2"
}
tb_approval_is() { [ "$(tb_approval_field "$1" status)" = "$2" ]; }
# tb_agent_unit NAME: "ActiveState SubState" of systemd-nspawn@h-NAME.service.
tb_agent_unit() {
  in_c systemctl show -P ActiveState -P SubState "systemd-nspawn@h-$1.service" | paste -sd ' ' -
}
# tb_spawn NAME: `hivectl spawn NAME`, then wait until the nested systemd in h-NAME has reached
# multi-user.target (before that, `systemd-run -M h-NAME` may find no bus in it).
tb_spawn() {
  local out
  out=$(hivectl_root spawn "$1" 2>&1) || { echo "  hivectl spawn $1 failed: $out"; return 1; }
  tb_wait_machine 30 "h-$1"
}
