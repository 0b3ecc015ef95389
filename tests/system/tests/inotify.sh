# shellcheck shell=bash
# Issue 44, kernel objects per agent: inotify. Linux charges a container's inotify instances and
# watches to root as well (the owner of its user namespace): an agent once took 105 of root's 128
# instances and the host's own services got "Too many open files". Every container the hive
# starts gets caps of its own in its user namespace (`hive-c0re limit-userns`, run by systemd as
# a transient unit), so an agent's flood from its shell (isolation.sh's probe, as Claude's Bash
# tool runs) stops at its cap, and another agent and the bed's root still get instances.
#
# The bed runs with small caps (8 instances, 1,000 watches): it shares root's count with the
# machine and every other bed on it, whose limit it cannot raise (nspawn mounts the bed's
# /proc/sys read-only, so systemd-sysctl skips the shipped file there); the test says which
# host limits it saw and checks the daemon's warning about them.

# _ino_journal UNIT: UNIT's journal lines of this test (since the run's cursor).
_ino_journal() {
  local args=(-b -u "$1" -o cat --no-pager)
  [ -n "${TB_CURSOR:-}" ] && args+=(--after-cursor="$TB_CURSOR")
  in_c journalctl "${args[@]}"
}

# One inotify instance, from wherever it runs: "inotify ok" or "inotify refused: EMFILE".
_INO_ONE='import ctypes, errno
libc = ctypes.CDLL(None, use_errno=True)
fd = libc.inotify_init1(0)
print("inotify ok" if fd >= 0 else "inotify refused: " + errno.errorcode.get(ctypes.get_errno(), "?"))'

# Instances and watches held by the processes of a unit's cgroup (argv[1]), as a sentence.
_INO_HELD='import glob, os, sys
cg = sys.argv[1]; pids = set()
for root in ("/sys/fs/cgroup", "/sys/fs/cgroup/unified", "/sys/fs/cgroup/systemd"):
    for f in glob.glob(root + cg + "/**/cgroup.procs", recursive=True):
        pids.update(open(f).read().split())
inst = watches = 0
for p in pids:
    for fd in glob.glob("/proc/%s/fd/*" % p):
        try:
            if os.readlink(fd) != "anon_inode:inotify": continue
            inst += 1
            info = open("/proc/%s/fdinfo/%s" % (p, os.path.basename(fd))).read()
            watches += info.count("inotify wd:")
        except OSError:
            pass
print("inob unit (%d processes, nspawn included) holds %d inotify instances and %d watches" % (len(pids), inst, watches))'

# The flood, run from the agent's shell and left holding what it got until flood.stop appears
# (bounded: 4,096 instances, 2,000 watches, 120 s).
# shellcheck disable=SC2016  # the probe's $ are the agent's
_INO_FLOOD='cat /proc/sys/user/max_inotify_instances /proc/sys/user/max_inotify_watches | paste -sd" " | sed "s/^/caps /"
cat > /var/lib/hive/flood.py <<"PY"
import ctypes, errno, os, sys, tempfile, time
libc = ctypes.CDLL(None, use_errno=True)
def why(): return errno.errorcode.get(ctypes.get_errno(), "?")
fds, stop = [], "none"
for _ in range(4096):
    fd = libc.inotify_init1(0)
    if fd < 0:
        stop = why(); break
    fds.append(fd)
print("instances", len(fds), "stopped", stop, flush=True)
base = tempfile.mkdtemp(dir="/var/tmp"); watches, wstop = 0, "none"
if fds:
    for i in range(2000):
        d = os.path.join(base, str(i)); os.mkdir(d)
        if libc.inotify_add_watch(fds[0], d.encode(), 0x100) < 0:
            wstop = why(); break
        watches += 1
print("watches", watches, "stopped", wstop, flush=True)
print("holding", flush=True)
for _ in range(1200):
    if os.path.exists("/var/lib/hive/flood.stop"): break
    time.sleep(0.1)
PY
rm -f /var/lib/hive/flood.out /var/lib/hive/flood.stop
setsid -f python3 /var/lib/hive/flood.py > /var/lib/hive/flood.out 2>&1 < /dev/null
for _ in $(seq 100); do grep -q "^holding" /var/lib/hive/flood.out 2>/dev/null && break; sleep 0.1; done
cat /var/lib/hive/flood.out'

an_agents_inotify_flood_stops_at_its_own_cap_and_another_agent_and_the_host_still_get_instances() {
  TB_ISO_CONFIG='"agent_inotify_instances": 8, "agent_inotify_watches": 1000' _iso_hive inoa inob
  trap 'in_c touch /var/lib/hyperhive/agents/inoa/flood.stop 2>/dev/null || true; tb_forget_agents' EXIT
  local out n log
  # Each start was followed by the helper's unit, which said what it set.
  log=$(_ino_journal "$TB_UNIT")
  expect_match "the daemon's line for inoa" "inoa: inotify caps set in its user namespace" "$log"
  expect_match "the helper's line for inoa" \
    "max_inotify_instances 8, max_inotify_watches 1000" \
    "$(_ino_journal hive-c0re-limits-h-inoa.service)"

  out=$(_iso_probe inoa "$_INO_FLOOD")
  echo "$out" | sed 's/^/  /'
  expect_eq "the caps inoa's shell reads in its namespace" "caps 8 1000" "$(grep '^caps ' <<<"$out")"
  expect_match "inoa's flood of instances" '^instances [0-9]+ stopped EMFILE$' "$(grep '^instances ' <<<"$out")"
  n=$(sed -n 's/^instances \([0-9]*\) .*/\1/p' <<<"$out")
  [ "$n" -ge 1 ] && [ "$n" -le 8 ] || { echo "  expected 1 to 8 instances, saw $n"; return 1; }
  expect_match "inoa's flood of watches" '^watches [0-9]+ stopped ENOSPC$' "$(grep '^watches ' <<<"$out")"
  local w; w=$(sed -n 's/^watches \([0-9]*\) .*/\1/p' <<<"$out")
  [ "$w" -le 1000 ] || { echo "  expected at most 1000 watches, saw $w"; return 1; }
  echo "figure: inoa's flood stopped at $n instances (cap 8) and $w watches (cap 1000)"

  # While inoa holds all it got: bob's shell and the bed's root still get an instance.
  out=$(_iso_probe inob "python3 -c '$_INO_ONE'")
  expect_eq "an instance in inob while inoa holds its cap" "inotify ok" "$out"
  expect_eq "an instance for the bed's root while inoa holds its cap" "inotify ok" \
    "$(in_c "$TB_PYTHON" -c "$_INO_ONE")"
  in_c touch /var/lib/hyperhive/agents/inoa/flood.stop
  # What a container's own services hold (the host's sums count 16 instances and 1,024 watches
  # per container for them): every process of inob's unit, nspawn included.
  echo "figure: $(in_c "$TB_PYTHON" -c "$_INO_HELD" "$(unit_prop systemd-nspawn@h-inob.service ControlGroup)")"
}

# The host's side: the shipped sysctl file is where the README installs it, and the daemon
# warns at start exactly when the limits it reads cannot hold max_agents (1,000) agents at their
# caps (here 8 + 16 instances and 1,000 + 1,024 watches each, plus the host's 128 and 65,536).
the_daemon_warns_when_the_hosts_inotify_limits_cannot_hold_a_full_hive() {
  tb_hive '{"stop_deadline_secs": 2, "agent_inotify_instances": 8, "agent_inotify_watches": 1000}'
  in_c systemctl start "$TB_SOCKET_UNIT"
  hivectl_root status >/dev/null
  expect_match "the shipped file in the bed's /etc/sysctl.d" \
    "fs.inotify.max_user_instances = 144128" "$(in_c cat /etc/sysctl.d/60-hive-c0re.conf)"
  local have_i have_w log
  have_i=$(in_c cat /proc/sys/fs/inotify/max_user_instances)
  have_w=$(in_c cat /proc/sys/fs/inotify/max_user_watches)
  echo "figure: host limits only configured in the bed: it runs with the machine's $have_i instances and $have_w watches (/proc/sys is read-only in the bed; the shipped file asks 144128 and 66625536)"
  log=$(_ino_journal "$TB_UNIT")
  if [ "$have_i" -lt 24128 ]; then
    expect_match "the warning about instances" \
      "fs.inotify.max_user_instances is $have_i, below the 24128 needed by max_agents agents" "$log"
  elif grep -q "fs.inotify.max_user_instances is" <<<"$log"; then
    echo "  the daemon warned with $have_i instances, enough for 24128"; return 1
  fi
  if [ "$have_w" -lt 2089536 ]; then
    expect_match "the warning about watches" \
      "fs.inotify.max_user_watches is $have_w, below the 2089536 needed by max_agents agents" "$log"
  elif grep -q "fs.inotify.max_user_watches is" <<<"$log"; then
    echo "  the daemon warned with $have_w watches, enough for 2089536"; return 1
  fi
}

# A container already running when the daemon starts (started by an older daemon, or with other
# caps) gets the daemon's caps then: the config changed from 8 to 6 instances and the daemon
# restarted, the running container's namespace reads 6 without a restart of its own.
# _ino_caps LEADER: max_inotify_instances of LEADER's user namespace, read from inside it.
_ino_caps() { in_c nsenter --user --target "$1" -- cat /proc/sys/user/max_inotify_instances; }
_ino_caps_are() { [ "$(_ino_caps "$1")" = "$2" ]; }

a_container_running_when_the_daemon_starts_gets_the_daemons_caps() {
  TB_ISO_CONFIG='"agent_inotify_instances": 8, "agent_inotify_watches": 1000' _iso_hive inoc
  local leader
  leader=$(in_c machinectl show -p Leader --value h-inoc)
  expect_eq "h-inoc's max_inotify_instances after its start" 8 "$(_ino_caps "$leader")"
  printf '%s\n' '{"stop_deadline_secs": 2, "template_image": "hive-iso-template", "agent_inotify_instances": 6, "agent_inotify_watches": 1000}' |
    in_c sh -c 'cat > /etc/hive-c0re/config.json'
  in_c systemctl restart "$TB_UNIT"
  hivectl_root status >/dev/null
  wait_for 10 "h-inoc's caps set by the restarted daemon" _ino_caps_are "$leader" 6 ||
    { echo "  h-inoc reads $(_ino_caps "$leader")"; return 1; }
  expect_eq "h-inoc's leader (not restarted)" "$leader" "$(in_c machinectl show -p Leader --value h-inoc)"
}
