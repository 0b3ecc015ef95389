# shellcheck shell=bash
# The operator's dashboard under the real systemd: the shipped hive-c0re-web.socket owns
# web.sock, the first browser request starts the daemon, which takes the socket by its fd
# name ("web"), and who may connect is who may use host.sock.

_web_listening() {
  in_c systemctl start "$TB_WEB_SOCKET_UNIT"
  expect_eq "$TB_WEB_SOCKET_UNIT state" "active listening" \
    "$(unit_prop "$TB_WEB_SOCKET_UNIT" ActiveState) $(unit_prop "$TB_WEB_SOCKET_UNIT" SubState)"
}

# _web_get USER PATH: an HTTP/1.1 GET over web.sock inside the bed as USER, printed as
# "<status> <bytes>" and then the body; "ERRNO <name>" if the connect is refused.
_web_get() {
  in_c_as "$1" "$TB_PYTHON" - "$2" <<'PY'
import errno, socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
try:
    s.connect("/run/hyperhive/web.sock")
except OSError as e:
    print("ERRNO", errno.errorcode.get(e.errno, e.errno)); sys.exit(0)
s.sendall(("GET %s HTTP/1.1\r\nHost: localhost\r\nConnection: close\r\n\r\n" % sys.argv[1]).encode())
data = b""
while True:
    chunk = s.recv(65536)
    if not chunk:
        break
    data += chunk
head, _, body = data.partition(b"\r\n\r\n")
print(head.split(b" ")[1].decode(), len(body))
print(body.decode(errors="replace"))
PY
}

# The roster page, as the daemon renders it (the page's <title> and its live agent count).
_is_roster() { grep -q '<title>Roster · hive</title>' <<<"$1" && grep -q 'id="count-agents"' <<<"$1"; }

the_web_socket_unit_starts_the_daemon_which_serves_the_roster_on_its_fd_named_web() {
  _web_listening
  expect_eq "service state before any request" "inactive dead" \
    "$(unit_prop "$TB_UNIT" ActiveState) $(unit_prop "$TB_UNIT" SubState)"
  expect_eq "web.sock as the unit says (SocketMode=0660, root:hive-admin), /run/hyperhive 0751" \
    "660 root:hive-admin 751" "$(in_c stat -c '%a %U:%G' /run/hyperhive/web.sock | tr '\n' ' ')$(in_c stat -c %a /run/hyperhive)"
  local inode out
  inode=$(in_c stat -c %i /run/hyperhive/web.sock)
  out=$(_web_get hive-member /)
  expect_eq "status of GET / by hive-member" "200" "$(head -n1 <<<"$out" | cut -d' ' -f1)"
  _is_roster "$out" || { printf '  expected the roster page, saw:\n%s\n' "$(head -c 600 <<<"$out")"; return 1; }
  expect_eq "service state after the first request" "active running" \
    "$(unit_prop "$TB_UNIT" ActiveState) $(unit_prop "$TB_UNIT" SubState)"
  # only web.sock's unit was started, so it is what started the daemon
  expect_eq "the sockets that start the service" "$TB_WEB_SOCKET_UNIT $TB_SOCKET_UNIT" \
    "$(unit_prop "$TB_UNIT" TriggeredBy | tr ' ' '\n' | LC_ALL=C sort | paste -sd ' ' -)"
  # a daemon that bound web.sock itself would have replaced the file (and made it root:root)
  expect_eq "web.sock inode (systemd's socket, not one the daemon bound)" "$inode" \
    "$(in_c stat -c %i /run/hyperhive/web.sock)"
  local names
  names=$(in_c sh -c "tr '\\0' '\\n' < /proc/\$(systemctl show -P MainPID $TB_UNIT)/environ" |
    sed -n 's/^LISTEN_FDNAMES=//p' | tr ':' '\n' | sort | paste -sd ' ' -)
  expect_eq "the fd names systemd passed (sorted)" "host web" "$names"
  expect_match "the daemon's log" "web.sock handed over by systemd" \
    "$(in_c journalctl -b -u "$TB_UNIT" -o cat --no-pager)"
}

web_sock_refuses_a_user_outside_hive_admin_before_the_daemon_runs() {
  _web_listening
  expect_eq "GET / by hive-outsider" "ERRNO EACCES" "$(_web_get hive-outsider /)"
  expect_eq "service state (never started)" "inactive" "$(unit_prop "$TB_UNIT" ActiveState)"
}

the_dashboard_answers_again_after_the_daemon_restarts() {
  _web_listening
  local out old inode
  out=$(_web_get hive-member /)
  expect_eq "status of GET / before the restart" "200" "$(head -n1 <<<"$out" | cut -d' ' -f1)"
  old=$(unit_prop "$TB_UNIT" MainPID)
  inode=$(in_c stat -c %i /run/hyperhive/web.sock)
  in_c systemctl restart "$TB_UNIT"
  expect_ne "MainPID after the restart" "$old" "$(unit_prop "$TB_UNIT" MainPID)"
  out=$(_web_get hive-member /)
  expect_eq "status of GET / after the restart" "200" "$(head -n1 <<<"$out" | cut -d' ' -f1)"
  _is_roster "$out" || { printf '  expected the roster page, saw:\n%s\n' "$(head -c 600 <<<"$out")"; return 1; }
  expect_eq "web.sock inode across the restart (systemd kept it)" "$inode" \
    "$(in_c stat -c %i /run/hyperhive/web.sock)"
  expect_eq "$TB_WEB_SOCKET_UNIT state while the service runs" "active running" \
    "$(unit_prop "$TB_WEB_SOCKET_UNIT" ActiveState) $(unit_prop "$TB_WEB_SOCKET_UNIT" SubState)"
}
