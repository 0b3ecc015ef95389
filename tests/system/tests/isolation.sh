# shellcheck shell=bash
# Issue 27, attacked from where the attacker sits: a command Claude's Bash tool would run, i.e.
# a child of `hive-agent run` in hive-agent.service inside a spawned agent's container, with
# the harness's user, capabilities, seccomp filter and namespaces. The stand-in Claude of this
# template runs /var/lib/hive/probe.sh (written by the test into the agent's state directory
# from the bed) before it answers, and leaves its output in /var/lib/hive/probe.out. The bed
# plays the host: its loopback, its abstract sockets, its /etc/shadow, its /root, its /usr.

# shellcheck source=../agent_image.sh
source "$HERE/agent_image.sh"

TB_ISO_PORT=47011                      # a TCP listener on the bed's loopback
TB_ISO_ABSTRACT=hive-tb-abstract       # an abstract unix socket of the bed

_iso_template() {
  tb_stand_in_template hive-iso-template <<'SH'
#!/bin/bash
prompt=$(cat)
body=$(printf '%s\n' "$prompt" | sed -n '/^--- message /{n;p;q}')
if [ -e /var/lib/hive/probe.sh ]; then
  /bin/bash /var/lib/hive/probe.sh > /var/lib/hive/probe.out.tmp 2>&1
  mv /var/lib/hive/probe.out.tmp /var/lib/hive/probe.out
fi
exec /usr/local/bin/hive-agent call send "{\"to\":\"operator\",\"body\":\"got: $body\"}"
SH
}

_iso_inbox_has() { hivectl_root inbox | grep -qF -- "$1"; }

# _iso_hive NAME...: the hive with the probe template, the agents spawned and their harness up.
# TB_ISO_CONFIG: more keys for the hive's config (JSON members, e.g. '"egress_allow": []').
_iso_hive() {
  _iso_template
  tb_hive "{\"stop_deadline_secs\": 2, \"template_image\": \"hive-iso-template\"${TB_ISO_CONFIG:+, $TB_ISO_CONFIG}}"
  tb_agents "$@"
  local n
  for n in "$@"; do
    tb_spawn "$n"
    tb_wait_machine 30 "h-$n" hive-agent.service ||
      { in_c journalctl -M "h-$n" -u hive-agent --no-pager -n 30; return 1; }
  done
}

# _iso_probe NAME SCRIPT: run SCRIPT in NAME as its harness's child (one turn); prints its output.
_iso_probe() {
  local n=$1 script=$2 state=/var/lib/hyperhive/agents/$1 word="probe-$RANDOM$RANDOM"
  in_c rm -f "$state/probe.out"
  printf '%s\n' "$script" | in_c sh -c "cat > $state/probe.sh"
  hivectl_root send "$n" "$word" >/dev/null
  wait_for 30 "$n's reply to $word" _iso_inbox_has "got: $word" ||
    { in_c journalctl -M "h-$n" -u hive-agent --no-pager -n 30; return 1; }
  in_c cat "$state/probe.out"
  in_c rm -f "$state/probe.sh"
}

# The bed's listeners, as a host service would have them: TCP on 127.0.0.1 and an abstract
# unix socket, in the bed's network namespace. Reachable from the bed itself (checked).
_iso_listeners() {
  in_c systemd-run -q --unit=tb-iso-listener "$TB_PYTHON" -c "
import socket, time
t = socket.socket(); t.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
t.bind(('127.0.0.1', $TB_ISO_PORT)); t.listen(8)
u = socket.socket(socket.AF_UNIX); u.bind('\0$TB_ISO_ABSTRACT'); u.listen(8)
time.sleep(600)"
  trap 'in_c systemctl stop tb-iso-listener 2>/dev/null || true; tb_forget_agents' EXIT
  wait_for 5 "the bed's listeners" in_c "$TB_PYTHON" -c "
import socket
socket.create_connection(('127.0.0.1', $TB_ISO_PORT), 1)
socket.socket(socket.AF_UNIX).connect('\0$TB_ISO_ABSTRACT')"
}

# shellcheck disable=SC2016  # the probe's $ are the agent's
an_agents_shell_is_an_unprivileged_user_in_its_own_user_range_and_network() {
  _iso_hive iso
  _iso_listeners
  in_c sh -c 'echo tb-host-secret > /root/tb-host-secret'
  local out
  out=$(_iso_probe iso '
echo "uid $(id -u) gid $(id -g) user $(id -un)"
echo "uid_map $(head -1 /proc/self/uid_map | tr -s " " | sed "s/^ //")"
echo "CapEff $(sed -n "s/^CapEff:\t//p" /proc/self/status) NoNewPrivs $(sed -n "s/^NoNewPrivs:\t//p" /proc/self/status)"
echo "interfaces $(tail -n +3 /proc/net/dev | cut -d: -f1 | tr -d " " | paste -sd, -)"
python3 - <<PY
import socket
def tr(what, f):
    try:
        f(); print(what, "OPEN")
    except OSError as e:
        print(what, "refused:", e.__class__.__name__)
tr("tcp-bed-loopback", lambda: socket.create_connection(("127.0.0.1", '"$TB_ISO_PORT"'), 2))
tr("abstract-bed", lambda: socket.socket(socket.AF_UNIX).connect("\0'"$TB_ISO_ABSTRACT"'"))
tr("af-packet", lambda: socket.socket(socket.AF_PACKET, socket.SOCK_RAW))
PY
grep -e host.sock -e hyperhive /proc/net/unix | sed "s/^/unix-socket: /"
echo "unix-sockets-seen $(grep -e host.sock -e hyperhive /proc/net/unix | grep -c -v -e "/iso\.[a-z]*\.sock\$" -e "/agents/iso/[a-z]*\.sock\$")"
test -e /run/hyperhive && echo "hyperhive VISIBLE" || echo "hyperhive absent"
test -e /var/lib/hyperhive && echo "state-root VISIBLE" || echo "state-root absent"
cat /etc/shadow >/dev/null 2>&1 && echo "shadow READABLE" || echo "shadow refused"
grep -qs hive-outsider /etc/shadow /etc/passwd && echo "bed-users VISIBLE" || echo "bed-users absent"
cat /root/tb-host-secret 2>/dev/null || echo "host-root absent"
')
  echo "$out" | sed 's/^/  /'
  expect_match "the harness's user" '^uid 1000 gid 1000 user agent$' "$(grep '^uid ' <<<"$out")"
  local map; map=$(grep '^uid_map ' <<<"$out")
  expect_match "its uid_map: 0 -> its range, 65536 ids" '^uid_map 0 [0-9]+ 65536$' "$map"
  expect_ne "its range's base on the host" "0" "$(cut -d' ' -f3 <<<"$map")"
  expect_eq "its capabilities and no_new_privs" "CapEff 0000000000000000 NoNewPrivs 1" \
    "$(grep '^CapEff ' <<<"$out")"
  expect_eq "its network interfaces" "interfaces lo" "$(grep '^interfaces ' <<<"$out")"
  expect_match "a TCP connect to the bed's loopback" '^tcp-bed-loopback refused' "$(grep '^tcp-bed' <<<"$out")"
  expect_match "a connect to the bed's abstract socket" '^abstract-bed refused' "$(grep '^abstract-bed' <<<"$out")"
  expect_match "an AF_PACKET socket" '^af-packet refused' "$(grep '^af-packet' <<<"$out")"
  # A connection's server end is made in the connecting socket's network namespace and
  # carries the listener's address, so the agent's own socket, which its harness holds
  # during a turn (the probe runs in one), is listed; nothing else of the hive may be.
  expect_eq "host.sock or the hive's sockets but its own in /proc/net/unix" "unix-sockets-seen 0" \
    "$(grep '^unix-sockets-seen' <<<"$out")"
  expect_eq "the hive's runtime directory" "hyperhive absent" "$(grep '^hyperhive ' <<<"$out")"
  expect_eq "the hive's state directory (other agents' state)" "state-root absent" \
    "$(grep '^state-root ' <<<"$out")"
  expect_eq "/etc/shadow" "shadow refused" "$(grep '^shadow ' <<<"$out")"
  expect_eq "the bed's users" "bed-users absent" "$(grep '^bed-users ' <<<"$out")"
  expect_eq "the bed's /root" "host-root absent" "$(grep -e '^host-root' -e tb-host-secret <<<"$out")"
  # Seen from the bed: no process of the container is the bed's root, its PID 1 included.
  local leader
  leader=$(in_c machinectl show -p Leader --value h-iso)
  expect_match "the container's PID 1 uid_map, seen from the bed" "^ *0 +[1-9][0-9]* +65536$" \
    "$(in_c cat "/proc/$leader/uid_map")"
}

# The read-only /usr and /proc/sys are the host's: remounting them writable in a mount
# namespace of one's own must fail, as the harness's user (which may create user namespaces)
# and as the container's root (CAP_SYS_ADMIN in the container's user namespace, no seccomp of
# the harness): the kernel locks mount flags set in a more privileged namespace.
# shellcheck disable=SC2016
an_agent_cannot_write_the_hosts_usr_or_core_pattern_even_after_remounting_them() {
  _iso_hive isorw
  local before out leader
  before=$(in_c cat /proc/sys/kernel/core_pattern)
  out=$(_iso_probe isorw '
touch /usr/tb-agent-was-here 2>/dev/null && echo "usr WRITTEN" || echo "usr refused"
echo x > /proc/sys/kernel/core_pattern 2>/dev/null && echo "core_pattern WRITTEN" || echo "core_pattern refused"
unshare -rm sh -c "mount -o remount,bind,rw /usr 2>&1; touch /usr/tb-agent-was-here" >/dev/null 2>&1 &&
  echo "usr-remounted WRITTEN" || echo "usr-remounted refused"
unshare -rm sh -c "mount -o remount,rw /proc/sys 2>&1; echo x > /proc/sys/kernel/core_pattern" >/dev/null 2>&1 &&
  echo "core_pattern-remounted WRITTEN" || echo "core_pattern-remounted refused"
')
  echo "$out" | sed 's/^/  /'
  local w
  for w in usr core_pattern usr-remounted core_pattern-remounted; do
    expect_eq "$w as the harness's user" "$w refused" "$(grep "^$w " <<<"$out")"
  done
  leader=$(in_c machinectl show -p Leader --value h-isorw)
  if in_c nsenter -t "$leader" -a -- unshare -m sh -c \
      'mount -o remount,bind,rw /usr && touch /usr/tb-agent-was-here' 2>/dev/null; then
    echo "  the container's root remounted /usr writable and wrote to it"; return 1
  fi
  if in_c nsenter -t "$leader" -a -- unshare -m sh -c \
      'mount -o remount,rw /proc/sys; echo x > /proc/sys/kernel/core_pattern' 2>/dev/null; then
    echo "  the container's root wrote core_pattern"; return 1
  fi
  expect_eq "no file of the agent's in the bed's /usr" "" "$(in_c ls /usr/tb-agent-was-here 2>/dev/null)"
  expect_eq "the bed's core_pattern" "$before" "$(in_c cat /proc/sys/kernel/core_pattern)"
}

# What the harness needs still works in its range: its socket (the reply reached the inbox in
# every probe above), its state directory is its own, `hivectl logs` shows its turn, and the
# socket is its user's alone.
an_isolated_agents_socket_state_and_logs_still_work() {
  _iso_hive isook
  local out
  out=$(_iso_probe isook '
stat -c "state %U %a" /var/lib/hive
stat -c "socket %U %a" /run/hive/mcp.sock
touch /var/lib/hive/tb-written && echo "write ok"')
  echo "$out" | sed 's/^/  /'
  expect_eq "the state directory inside" "state agent 700" "$(grep '^state ' <<<"$out")"
  expect_eq "the agent socket inside" "socket agent 600" "$(grep '^socket ' <<<"$out")"
  expect_eq "a write to its state" "write ok" "$(grep '^write ' <<<"$out")"
  wait_for 10 "the turn in hivectl logs" _iso_logs_show isook "turn acked" || true
  expect_match "hivectl logs isook" "turn acked" "$(hivectl_root logs isook -n 200 2>&1)"
}
_iso_logs_show() { hivectl_root logs "$1" -n 200 | grep -qF "$2"; }

# An agent made before user ranges: its .nspawn says PrivateUsers=no and host network, its
# state is the bed's root's, with a login and a message waiting. Its next start moves it into
# its range: the file is rewritten, the state is its user's, the login readable, the message
# answered.
an_agent_from_before_user_ranges_keeps_its_state_and_login_on_its_first_start_after_the_upgrade() {
  _iso_hive isoold
  local state=/var/lib/hyperhive/agents/isoold f=/etc/systemd/nspawn/h-isoold.nspawn out
  hivectl_root stop isoold >/dev/null
  wait_for 20 "isoold to stop" tb_row_is isoold stopped
  # What the earlier version wrote and left (its harness ran as the bed's root).
  in_c sh -c "sed -i -e 's/^PrivateUsers=.*/PrivateUsers=no/' -e '/^DropCapability=/d' \
    -e '/^PrivateUsersOwnership=/d' -e 's|^BindReadOnly=.*|BindReadOnly=/usr|' -e '/^Private=yes/d' $f"
  in_c mkdir -p "$state/claude"
  in_c sh -c "echo tb-login > $state/claude/.credentials.json && chmod 600 $state/claude/.credentials.json"
  in_c chown -R 0:0 "$state" "/run/hyperhive/agents/isoold"
  expect_match "the old file" "PrivateUsers=no" "$(in_c cat "$f")"
  hivectl_root send isoold "waiting-$$" >/dev/null
  hivectl_root start isoold >/dev/null
  tb_wait_machine 30 h-isoold hive-agent.service
  wait_for 30 "the waiting message answered" _iso_inbox_has "got: waiting-$$"
  expect_match "the rewritten file" "PrivateUsers=[0-9]+:65536" "$(in_c cat "$f")"
  out=$(_iso_probe isoold 'cat /var/lib/hive/claude/.credentials.json; stat -c "%U" /var/lib/hive/claude')
  expect_eq "the login, read by the agent's user" "tb-login
agent" "$out"
}
