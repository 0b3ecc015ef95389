# shellcheck shell=bash
# Socket activation, readiness and restarts of hive-c0re.service under the real systemd.

# Starts the socket unit and checks that systemd, not the daemon, is listening.
_listening() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  expect_eq "$TB_SOCKET_UNIT state" "active listening" \
    "$(unit_prop "$TB_SOCKET_UNIT" ActiveState) $(unit_prop "$TB_SOCKET_UNIT" SubState)"
}
_service_state() { echo "$(unit_prop "$TB_UNIT" ActiveState) $(unit_prop "$TB_UNIT" SubState)"; }
_service_is() { [ "$(_service_state)" = "$1" ]; }

the_first_request_activates_the_service_on_systemds_socket() {
  _listening
  expect_eq "service state before any request" "inactive dead" "$(_service_state)"
  local inode out rc=0
  inode=$(in_c stat -c %i /run/hyperhive/host.sock)
  out=$(hivectl_root status 2>&1) || rc=$?
  expect_eq "hivectl status exit code (output: $out)" 0 "$rc"
  expect_eq "service state after the first request" "active running" "$(_service_state)"
  # (TriggeredBy= lists every socket unit that can start it: the dashboard's too)
  expect_eq "the sockets that start the service" "$TB_WEB_SOCKET_UNIT $TB_SOCKET_UNIT" \
    "$(unit_prop "$TB_UNIT" TriggeredBy | tr ' ' '\n' | LC_ALL=C sort | paste -sd ' ' -)"
  # a daemon that ignored the passed fd and bound host.sock itself would have replaced the file
  expect_eq "host.sock inode (systemd's socket, not one the daemon bound)" "$inode" \
    "$(in_c stat -c %i /run/hyperhive/host.sock)"
  expect_eq "$TB_SOCKET_UNIT state while the service runs" "active running" \
    "$(unit_prop "$TB_SOCKET_UNIT" ActiveState) $(unit_prop "$TB_SOCKET_UNIT" SubState)"
}

the_service_is_active_only_after_ready_and_reports_its_status() {
  _listening
  hivectl_root status >/dev/null
  # Type=notify: systemd keeps the unit "activating" until READY=1 (and fails it after
  # TimeoutStartSec without one); only the main process may send it.
  expect_eq "Type NotifyAccess" "notify main" "$(unit_prop "$TB_UNIT" Type) $(unit_prop "$TB_UNIT" NotifyAccess)"
  wait_for 10 "$TB_UNIT active" _service_is "active running" || true
  expect_eq "service state" "active running" "$(_service_state)"
  expect_match "systemd's start line in the journal" "Started $TB_UNIT" \
    "$(in_c journalctl -b -u "$TB_UNIT" -o cat --no-pager)"
  expect_match "StatusText (STATUS= from the daemon)" "." "$(unit_prop "$TB_UNIT" StatusText)"
}

a_stopped_service_is_activated_again_by_the_next_request() {
  _listening
  hivectl_root status >/dev/null
  local first; first=$(unit_prop "$TB_UNIT" MainPID)
  in_c systemctl stop "$TB_UNIT"
  expect_eq "service state after stop" "inactive dead" "$(_service_state)"
  expect_eq "$TB_SOCKET_UNIT state after the service stopped" "active listening" \
    "$(unit_prop "$TB_SOCKET_UNIT" ActiveState) $(unit_prop "$TB_SOCKET_UNIT" SubState)"
  local out rc=0
  out=$(hivectl_root status 2>&1) || rc=$?
  expect_eq "hivectl status exit code after the stop (output: $out)" 0 "$rc"
  expect_eq "service state after the next request" "active running" "$(_service_state)"
  expect_ne "MainPID (a new daemon)" "$first" "$(unit_prop "$TB_UNIT" MainPID)"
}

_ok_count() { grep -cx ok "$TB_DIR/hammer.out" || true; }
_ok_count_at_least() { [ "$(_ok_count)" -ge "$1" ]; }
_gone() { ! kill -0 "$1" 2>/dev/null; }

a_restart_under_load_refuses_no_connection() {
  _listening
  hivectl_root status >/dev/null
  local old n
  old=$(unit_prop "$TB_UNIT" MainPID)
  rm -f "$TB_DIR/hammer.stop"
  # four clients on the host, through the host's path to the bed's host.sock
  "$TB_PYTHON" "$HERE/hammer.py" "$TB_DIR/host.sock" "$TB_DIR/hammer.stop" 4 >"$TB_DIR/hammer.out" &
  hammer=$!   # global: the EXIT trap runs after this function's locals are gone
  trap 'touch "$TB_DIR/hammer.stop"; kill "$hammer" 2>/dev/null || true' EXIT
  wait_for 10 "20 answers before the restart" _ok_count_at_least 20
  in_c systemctl restart "$TB_UNIT"
  expect_ne "MainPID after the restart" "$old" "$(unit_prop "$TB_UNIT" MainPID)"
  n=$(_ok_count)
  wait_for 10 "20 more answers after the restart" _ok_count_at_least $((n + 20))
  touch "$TB_DIR/hammer.stop"
  wait_for 10 "the clients to stop" _gone "$hammer"
  expect_eq "failed requests during the restart (of $(_ok_count) answered)" "" \
    "$(grep -vx ok "$TB_DIR/hammer.out" | sort | uniq -c)"
}

_restarted_since() { [ "$(unit_prop "$TB_UNIT" NRestarts)" -gt "$1" ] && _service_is "active running"; }

a_sigkilled_daemon_is_restarted_by_systemd_with_its_approvals_intact() {
  _listening
  local out rc=0 old restarts
  out=$(hivectl_root request-spawn crash-probe 2>&1) || rc=$?
  expect_eq "hivectl request-spawn crash-probe exit code (output: $out)" 0 "$rc"
  expect_match "hivectl pending before the crash" "crash-probe" "$(hivectl_root pending 2>&1)"
  old=$(unit_prop "$TB_UNIT" MainPID)
  restarts=$(unit_prop "$TB_UNIT" NRestarts)
  in_c kill -KILL "$old"
  # Restart=on-failure, RestartSec=1s: systemd itself brings it back, with no request
  wait_for 15 "systemd to restart the daemon" _restarted_since "$restarts" || true
  expect_eq "NRestarts, state" "$((restarts + 1)) active running" \
    "$(unit_prop "$TB_UNIT" NRestarts) $(_service_state)"
  expect_ne "MainPID" "$old" "$(unit_prop "$TB_UNIT" MainPID)"
  expect_match "hivectl pending after the restart" "crash-probe" "$(hivectl_root pending 2>&1)"
}

# With two sockets the order of LISTEN_FDS is systemd's choice: the daemon must take "host"
# by name. A second socket unit is added for this test only (a drop-in adds it to the
# service's Sockets=); the shipped files stay as they are.
_remove_extra_socket() {
  in_c systemctl stop "$TB_UNIT" hive-tb-extra.socket || true
  rm -rf "$TB_DIR/units/hive-tb-extra.socket" "$TB_DIR/units/$TB_UNIT.d"
  in_c systemctl daemon-reload
}
the_daemon_takes_host_sock_by_name_among_several_activated_sockets() {
  trap _remove_extra_socket EXIT
  printf '[Socket]\nListenStream=/run/hive-tb-extra.sock\nFileDescriptorName=extra\nService=%s\n' \
    "$TB_UNIT" > "$TB_DIR/units/hive-tb-extra.socket"
  mkdir -p "$TB_DIR/units/$TB_UNIT.d"
  printf '[Unit]\nRequires=hive-tb-extra.socket\nAfter=hive-tb-extra.socket\n[Service]\nSockets=hive-tb-extra.socket\n' \
    > "$TB_DIR/units/$TB_UNIT.d/tb-extra.conf"
  in_c systemctl daemon-reload
  in_c systemctl start hive-tb-extra.socket
  _listening
  local out rc=0 names
  out=$(hivectl_root status 2>&1) || rc=$?
  expect_eq "hivectl status exit code with two activated sockets (output: $out)" 0 "$rc"
  names=$(in_c sh -c "tr '\\0' '\\n' < /proc/\$(systemctl show -P MainPID $TB_UNIT)/environ" |
    sed -n 's/^LISTEN_FDNAMES=//p' | tr ':' '\n' | sort | paste -sd ' ' -)
  # (web: hive-c0re-web.socket, which the service Wants=)
  expect_eq "the fd names systemd passed (sorted)" "extra host web" "$names"
  expect_eq "service state" "active running" "$(_service_state)"
}
