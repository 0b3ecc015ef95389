# shellcheck shell=bash
# An agent's container reaches the hive through /run/hive/mcp.sock: the daemon's
# /run/hyperhive/agents/<n>/ bound as a directory by the .nspawn file the daemon writes. These
# tests spawn real nested containers through the daemon (systemd driver, nspawn profile) and
# talk to the socket from a process inside the container, as the agent's harness would.
#
# Each test uses agent names of its own: the daemon's state directory is kept between tests.

# _as_client MACHINE REQUEST-JSON...: inside MACHINE, one connection to /run/hive/mcp.sock;
# sends each request as a line and prints each answer line. Socket timeout 10 s, whole call 30 s.
_as_client() {
  local m=$1; shift
  in_c timeout 30 systemd-run -q -M "$m" --wait -P "$TB_PYTHON" -c '
import socket, sys
s = socket.socket(socket.AF_UNIX)
s.settimeout(10)
s.connect("/run/hive/mcp.sock")
f = s.makefile("rwb")
for req in sys.argv[1:]:
    f.write(req.encode() + b"\n")
    f.flush()
    line = f.readline()
    if not line:
        sys.exit("the socket closed before answering " + req)
    sys.stdout.write(line.decode())
' "$@"
}

# _as_field JSON PATH: the value at PATH (dot-separated keys/indices) of a JSON line, or
# "<missing PATH>" so an expect_eq shows what was absent.
_as_field() {
  "$TB_PYTHON" -c '
import json, sys
v = json.loads(sys.argv[1])
try:
    for k in sys.argv[2].split("."):
        v = v[int(k)] if isinstance(v, list) else v[k]
except (KeyError, IndexError, TypeError, ValueError):
    v = "<missing " + sys.argv[2] + ">"
print(v if isinstance(v, str) else json.dumps(v))' "$1" "$2"
}

_as_machine_gone() { ! m1 GetMachine s "$1" >/dev/null 2>&1; }

# _as_spawn NAME...: hivectl spawn each, then wait until its nested systemd has reached
# multi-user.target (the client needs the container's bus) and its socket exists.
_as_spawn() {
  local n
  in_c systemctl start "$TB_SOCKET_UNIT"
  tb_make_template hive-template
  for n in "$@"; do hivectl_root spawn "$n" >/dev/null; done
  for n in "$@"; do
    tb_wait_machine 30 "h-$n"
    wait_for 5 "the daemon's socket for $n" in_c test -S "/run/hyperhive/agents/$n/mcp.sock"
  done
}

# _as_cleanup NAME...: forget the agents and leave no container, image or settings file.
_as_cleanup() {
  local n
  for n in "$@"; do
    hivectl_root destroy "$n" --purge >/dev/null 2>&1 || true
    sd1 StopUnit ss "systemd-nspawn@h-$n.service" replace >/dev/null 2>&1 || true
    wait_for 20 "h-$n to stop" _as_machine_gone "h-$n" || true
    in_c machinectl remove "h-$n" 2>/dev/null || true
    rm -f "$TB_DIR/nspawn/h-$n.nspawn"
  done
}

a_process_in_an_agent_container_is_served_on_run_hive_mcp_sock_as_that_agent() {
  trap '_as_cleanup a b' EXIT
  _as_spawn a b
  expect_eq "get_agent_meta name inside h-a" a \
    "$(_as_field "$(_as_client h-a '{"cmd":"get_agent_meta"}')" name)"
  expect_eq "get_agent_meta name inside h-b" b \
    "$(_as_field "$(_as_client h-b '{"cmd":"get_agent_meta"}')" name)"
  local sent got
  sent=$(_as_client h-a '{"cmd":"send","to":"b","body":"hi"}')
  expect_eq "kind of send's answer (line: $sent)" ok "$(_as_field "$sent" kind)"
  got=$(_as_client h-b '{"cmd":"recv","wait_seconds":5}')
  expect_eq "kind of recv's answer (line: $got)" messages "$(_as_field "$got" kind)"
  expect_eq "sender of the message b received" a "$(_as_field "$got" messages.0.from)"
  expect_eq "body of the message b received" hi "$(_as_field "$got" messages.0.body)"
}

after_a_daemon_restart_the_same_path_in_the_container_is_served_again() {
  trap '_as_cleanup ra' EXIT
  _as_spawn ra
  local before after
  before=$(in_c stat -c %i /run/hyperhive/agents/ra/mcp.sock)
  expect_eq "get_agent_meta name before the restart" ra \
    "$(_as_field "$(_as_client h-ra '{"cmd":"get_agent_meta"}')" name)"
  in_c systemctl restart "$TB_UNIT"
  expect_eq "daemon state after the restart" active "$(unit_prop "$TB_UNIT" ActiveState)"
  after=$(in_c stat -c %i /run/hyperhive/agents/ra/mcp.sock)
  # Was: a new socket inode at every restart. Now the socket lives in systemd's fd store
  # (issue 14): the same socket, never bound again, and still what the container sees.
  expect_eq "the socket's inode after the restart (the one systemd kept)" "$before" "$after"
  expect_eq "the socket's inode seen inside h-ra" "$after" \
    "$(in_c timeout 30 systemd-run -q -M h-ra --wait -P stat -c %i /run/hive/mcp.sock)"
  expect_eq "get_agent_meta name after the restart" ra \
    "$(_as_field "$(_as_client h-ra '{"cmd":"get_agent_meta"}')" name)"
}

# _as_pid1_env MACHINE: the container's PID 1 environment, one VAR=value a line.
_as_pid1_env() {
  in_c timeout 30 systemd-run -q -M "$1" --wait -P sh -c "tr '\\0' '\\n' < /proc/1/environ"
}

the_env_handed_to_a_container_carries_its_grants() {
  trap '_as_cleanup ea' EXIT
  _as_spawn ea
  local env
  env=$(_as_pid1_env h-ea)
  expect_match "PID 1's env in h-ea before the grant" '^HIVE_CAPABILITIES=$' "$env"
  expect_match "PID 1's env in h-ea before the grant" \
    '^HIVE_TOOL_GROUPS=messaging,meta,inbox,execution$' "$env"
  hivectl_root grant ea --capability read_host_journal >/dev/null
  hivectl_root rebuild ea >/dev/null
  hivectl_root restart ea >/dev/null
  tb_wait_machine 30 h-ea
  env=$(_as_pid1_env h-ea)
  expect_match "PID 1's env in h-ea after grant, rebuild, restart" \
    '^HIVE_CAPABILITIES=read_host_journal$' "$env"
  expect_match "PID 1's env in h-ea after grant, rebuild, restart" \
    '^HIVE_TOOL_GROUPS=messaging,meta,inbox,execution$' "$env"
}

_fd_ok_count() { grep -cx ok "$TB_DIR/fd-hammer.out" || true; }
_fd_ok_at_least() { [ "$(_fd_ok_count)" -ge "$1" ]; }
_fd_restarted_since() {
  [ "$(unit_prop "$TB_UNIT" NRestarts)" -gt "$1" ] &&
    [ "$(unit_prop "$TB_UNIT" ActiveState) $(unit_prop "$TB_UNIT" SubState)" = "active running" ]
}

# Used to be: the daemon bound agent sockets itself, so during every restart an agent's
# connects failed (ECONNREFUSED, then ENOENT) until the new daemon had bound them again. Now
# they live in systemd's fd store: connects wait in the kept socket's backlog. Four clients
# hammer one agent's socket through 20 `systemctl restart`s (no failure of any kind) and one
# SIGKILL (requests in flight in the killed daemon may be cut; no connect is refused).
an_agents_socket_refuses_no_connect_through_20_restarts_and_a_sigkill() {
  trap '_as_cleanup fdst; touch "$TB_DIR/fd-hammer.stop"; kill "$fd_hammer" 2>/dev/null || true' EXIT
  _as_spawn fdst
  local sock n i main restarts
  sock="/proc/$(cat "$TB_DIR/leader.pid")/root/run/hyperhive/agents/fdst/mcp.sock"
  expect_match "the unit keeps fds" "4096" "$(unit_prop "$TB_UNIT" FileDescriptorStoreMax)"
  rm -f "$TB_DIR/fd-hammer.stop"
  "$TB_PYTHON" "$HERE/hammer.py" "$sock" "$TB_DIR/fd-hammer.stop" 4 \
    '{"cmd":"status"}' '{"kind":"status"' >"$TB_DIR/fd-hammer.out" &
  fd_hammer=$!
  wait_for 10 "20 answers before the restarts" _fd_ok_at_least 20
  # reset-failed between restarts: it resets the start rate limit (StartLimitBurst=5 per
  # 10 s by default), which 20 restarts in a row would hit.
  for i in $(seq 20); do
    in_c systemctl restart "$TB_UNIT"
    in_c systemctl reset-failed "$TB_UNIT"
  done
  n=$(_fd_ok_count)
  wait_for 10 "20 more answers after the restarts" _fd_ok_at_least $((n + 20))
  expect_eq "failed requests during 20 restarts (of $(_fd_ok_count) answered)" "" \
    "$(grep -vx ok "$TB_DIR/fd-hammer.out" | sort | uniq -c)"
  restarts=$(unit_prop "$TB_UNIT" NRestarts)
  main=$(unit_prop "$TB_UNIT" MainPID)
  in_c kill -9 "$main"
  wait_for 15 "systemd to restart the killed daemon" _fd_restarted_since "$restarts"
  n=$(_fd_ok_count)
  wait_for 10 "20 more answers after the SIGKILL" _fd_ok_at_least $((n + 20))
  touch "$TB_DIR/fd-hammer.stop"
  wait_for 10 "the clients to stop" _as_gone "$fd_hammer"
  expect_eq "refused or missing connects through 20 restarts and a SIGKILL" "" \
    "$(grep -E '^(ECONNREFUSED|ENOENT)' "$TB_DIR/fd-hammer.out" | sort | uniq -c)"
}

_as_gone() { ! kill -0 "$1" 2>/dev/null; }

# Used to be: `rm mcp.sock; mkdir mcp.sock` inside a container's /run/hive made every later
# daemon start exit 1 ("Is a directory"). Now the stored fd is served whatever is at the path,
# and a fresh start (fd store emptied by a stop) replaces the directory.
a_directory_an_agent_puts_at_its_socket_path_cannot_stop_the_daemon_starting() {
  trap '_as_cleanup dirat' EXIT
  _as_spawn dirat
  in_c rm /run/hyperhive/agents/dirat/mcp.sock
  in_c mkdir -p /run/hyperhive/agents/dirat/mcp.sock/inner
  in_c systemctl stop "$TB_UNIT"
  in_c systemctl start "$TB_UNIT"
  expect_eq "the unit after a start over the planted directory" "active running" \
    "$(unit_prop "$TB_UNIT" ActiveState) $(unit_prop "$TB_UNIT" SubState)"
  expect_eq "get_agent_meta name inside h-dirat" dirat \
    "$(_as_field "$(_as_client h-dirat '{"cmd":"get_agent_meta"}')" name)"
}
