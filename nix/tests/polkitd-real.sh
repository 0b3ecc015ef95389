#!/usr/bin/env bash
# nix/tests/polkitd-real.sh RULES_FILE   (root; Debian: polkitd, dbus-daemon,
#                                          systemd-container, util-linux)
#
# Asks the real polkitd (polkit 122 with its duktape JavaScript engine on
# Debian 12; NixOS ships a newer polkit) about the module's rule, for real
# processes of a member and a non-member of hive-admin, with the details
# machined passes for `machinectl shell` ("machine"). pkcheck's exit status
# says what polkitd decided: 0 granted, 1 denied, 2 left to the action's
# default (auth_admin for machine1 actions). The rule must grant exactly
# machine1.shell by hive-admin on h-<agent>, and leave everything else to the
# default (2) - never deny.
#
# Isolation: it re-runs itself in private mount and PID namespaces. Its
# rules directory, /etc/passwd and /etc/group (with two test users and the
# hive-admin group added) are bind mounts there, polkitd is started by D-Bus
# activation on a private bus, and every process it started is killed when
# the namespace's first process exits. The host's files are not touched.
set -euo pipefail
if [ "${1:-}" != --inside ]; then
  exec unshare --mount --pid --fork --mount-proc --propagation private "$0" --inside "$@"
fi
rules=$2

W=$(mktemp -d)
trap 'rm -rf "$W"' EXIT
chmod 755 "$W" # polkitd drops to its own user and must reach the bus socket
mkdir -m 755 "$W/rules.d" "$W/services"
install -m 644 "$rules" "$W/rules.d/50-hive-c0re.rules"
admin_uid=64901 other_uid=64902
{ cat /etc/passwd; echo "hive-test-admin:x:$admin_uid:$admin_uid::/nonexistent:/usr/sbin/nologin"
  echo "hive-test-other:x:$other_uid:$other_uid::/nonexistent:/usr/sbin/nologin"; } >"$W/passwd"
{ grep -v '^hive-admin:' /etc/group; echo "hive-test-admin:x:$admin_uid:"; echo "hive-test-other:x:$other_uid:"
  echo "hive-admin:x:64900:hive-test-admin"; } >"$W/group"
chmod 644 "$W/passwd" "$W/group"
mount --bind "$W/rules.d" /etc/polkit-1/rules.d
mount --bind "$W/passwd" /etc/passwd
mount --bind "$W/group" /etc/group

cat >"$W/services/org.freedesktop.PolicyKit1.service" <<EOF
[D-BUS Service]
Name=org.freedesktop.PolicyKit1
Exec=/usr/lib/polkit-1/polkitd --no-debug
EOF
cat >"$W/bus.conf" <<EOF
<!DOCTYPE busconfig PUBLIC "-//freedesktop//DTD D-Bus Bus Configuration 1.0//EN"
 "http://www.freedesktop.org/standards/dbus/1.0/busconfig.dtd">
<busconfig>
  <listen>unix:path=$W/bus</listen>
  <auth>EXTERNAL</auth>
  <servicedir>$W/services</servicedir>
  <policy context="default">
    <allow user="*"/>
    <allow own="*"/>
    <allow send_destination="*"/>
    <allow receive_sender="*"/>
  </policy>
</busconfig>
EOF
# polkitd and pkcheck take this bus as the system bus.
export DBUS_SYSTEM_BUS_ADDRESS=unix:path=$W/bus
# --print-address returns once the bus listens; polkitd starts on first use.
dbus-daemon --config-file="$W/bus.conf" --fork --print-address=1 >/dev/null

setpriv --reuid=$admin_uid --regid=$admin_uid --clear-groups sleep 300 &
admin=$!
setpriv --reuid=$other_uid --regid=$other_uid --clear-groups sleep 300 &
other=$!

failures=0
# expect WANT ACTION PID [MACHINE]
expect() {
  local want=$1 action=$2 pid=$3 machine=${4-} rc=0 who
  who=$([ "$pid" = "$admin" ] && echo "hive-admin member" || echo "non-member")
  if [ $# -ge 4 ]; then
    timeout 20 pkcheck --action-id "$action" --process "$pid" --detail machine "$machine" >/dev/null 2>"$W/err" || rc=$?
  else
    timeout 20 pkcheck --action-id "$action" --process "$pid" >/dev/null 2>"$W/err" || rc=$?
  fi
  if [ "$rc" -eq "$want" ]; then
    echo "ok   - real polkitd: $action by $who on ${machine:-(no machine detail)} -> $rc"
  else
    echo "FAIL - real polkitd: $action by $who on ${machine:-(no machine detail)} -> $rc, want $want: $(head -c 300 "$W/err")"
    failures=$((failures + 1))
  fi
}
shell=org.freedesktop.machine1.shell
expect 0 $shell "$admin" h-alice
expect 0 $shell "$admin" h-ruth-2
expect 2 $shell "$admin" alice
expect 2 $shell "$admin" h-Alice
expect 2 $shell "$admin" .host
expect 2 $shell "$admin"
expect 2 $shell "$other" h-alice
expect 2 org.freedesktop.machine1.login "$admin" h-alice
expect 2 org.freedesktop.machine1.host-shell "$admin" .host
expect 2 org.freedesktop.machine1.manage-machines "$admin" h-alice
exit $((failures > 0))
