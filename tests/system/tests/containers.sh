# shellcheck shell=bash
# The daemon's D-Bus container driver against the real systemd and machined of the bed: what
# `spawn`, `stop`, `start`, `destroy` do to real systemd-nspawn@h-<n>.service units and
# machined images, and how fast the roster follows them (nspawn profile, the template from
# tb_make_template, config from tb_hive_config). Every test names agents of its own and
# destroys them on exit (tb_agents), so a failure leaves no container running for the next.

# The daemon's "<agent>: container crashed (unit result: ...)" lines about agent $1. Agent names are unique per bed (a
# fresh journal), so no --after-cursor: journalctl 252 combines it badly with a field match
# (`journalctl AGENT=x --after-cursor=C` printed nothing while the line was there).
_crash_lines() {
  in_c journalctl -u "$TB_UNIT" AGENT="$1" -o cat --no-pager |
    grep -xE "$1: container crashed \(unit result: [a-z-]+\)"
}

# Debian's systemd-container creates no /etc/systemd/nspawn, and under ProtectSystem=strict a
# ReadWritePaths= entry missing at start stays read-only: the shipped unit creates it
# (ConfigurationDirectory=). Without that line this spawn failed with EROFS.
a_spawn_works_on_a_host_without_etc_systemd_nspawn() {
  in_c rm -rf /etc/systemd/nspawn      # as after a fresh install (earlier tests made it)
  tb_hive; tb_agents fresh
  local out rc=0
  out=$(hivectl_root spawn fresh 2>&1) || rc=$?
  expect_eq "hivectl spawn fresh exit code (output: $out)" 0 "$rc"
  expect_eq "/etc/systemd/nspawn: mode owner, and h-fresh.nspawn in it" "755 root:root h-fresh.nspawn" \
    "$(in_c stat -c '%a %U:%G' /etc/systemd/nspawn) $(in_c ls /etc/systemd/nspawn)"
  expect_eq "roster row" running "$(tb_row fresh)"
}

spawning_an_agent_boots_its_container_and_the_roster_follows_its_unit_within_a_second() {
  tb_hive; tb_agents boot
  local out rc=0
  out=$(hivectl_root spawn boot 2>&1) || rc=$?
  expect_eq "hivectl spawn boot exit code (output: $out)" 0 "$rc"
  expect_match "machinectl list" "^h-boot +container +systemd-nspawn" \
    "$(in_c machinectl list --no-legend --no-pager)"
  expect_eq "unit state once spawn answered" "active running" "$(tb_agent_unit boot)"
  expect_eq "roster row once spawn answered" running "$(tb_row boot)"
  tb_wait_machine 30 h-boot
  # Behind the daemon's back: the roster follows systemd's signals, not the daemon's verbs.
  in_c systemctl stop systemd-nspawn@h-boot.service
  wait_for 1 "the row to say stopped within 1 s of the unit going inactive" tb_row_is boot stopped
  in_c systemctl start systemd-nspawn@h-boot.service   # returns once active (Type=notify)
  wait_for 1 "the row to say running within 1 s of the unit going active" tb_row_is boot running
}

a_graceful_stop_leaves_the_unit_inactive_and_the_row_not_running() {
  tb_hive; tb_agents grace
  tb_spawn grace
  local out rc=0
  out=$(hivectl_root stop grace 2>&1) || rc=$?
  expect_eq "hivectl stop grace exit code (output: $out)" 0 "$rc"
  expect_eq "unit state, result" "inactive dead success" \
    "$(tb_agent_unit grace) $(unit_prop systemd-nspawn@h-grace.service Result)"
  expect_eq "roster row" stopped "$(tb_row grace)"
  expect_eq "machined's machines named h-grace" "" "$(in_c machinectl list --no-legend --no-pager | grep '^h-grace ' || true)"
  expect_eq "crash lines for an operator's stop" "" "$(_crash_lines grace || true)"
}

# The deadline path: the unit's stop signal must do nothing, so only the daemon's SIGKILL at
# stop_deadline_secs (2 s, tb_hive) can end the stop. A drop-in makes systemd's stop signal
# SIGCONT (KillMode=mixed sends it to nspawn alone, which carries on) and moves systemd's own
# TimeoutStopSec= to 60 s, so systemd's SIGKILL cannot be what ends it within the test.
# Rejected: a container whose init ignores SIGRTMIN+3 — nspawn turns SIGTERM into that, but a
# bare nested systemd cannot be told to ignore it without its own unit files.
_drop_deaf() {
  rm -rf "$TB_DIR/units/systemd-nspawn@h-deaf.service.d"
  in_c systemctl daemon-reload
}
a_container_that_ignores_the_stop_signal_is_killed_at_the_stop_deadline() {
  tb_hive; tb_agents deaf
  tb_spawn deaf
  trap '_drop_deaf; tb_forget_agents' EXIT
  mkdir -p "$TB_DIR/units/systemd-nspawn@h-deaf.service.d"
  printf '[Service]\nKillSignal=SIGCONT\nTimeoutStopSec=60s\n' \
    > "$TB_DIR/units/systemd-nspawn@h-deaf.service.d/tb-deaf.conf"
  in_c systemctl daemon-reload
  expect_eq "the unit's stop settings" "SIGCONT 1min" \
    "$(unit_prop systemd-nspawn@h-deaf.service KillSignal | sed 's/^18$/SIGCONT/') $(unit_prop systemd-nspawn@h-deaf.service TimeoutStopUSec)"
  local out rc=0 t ms
  t=$(tb_now)
  out=$(hivectl_root stop deaf 2>&1) || rc=$?
  ms=$(( ($(tb_now) - t) / 1000 ))
  expect_eq "hivectl stop deaf exit code (output: $out)" 0 "$rc"
  if [ "$ms" -lt 1900 ] || [ "$ms" -ge 4000 ]; then
    echo "  expected the stop to take the 2 s deadline (1900-4000 ms); it took $ms ms"; false
  fi
  expect_match "the daemon's line at the deadline" "stop deadline passed, sending SIGKILL" \
    "$(in_c journalctl -u "$TB_UNIT" --after-cursor="$TB_CURSOR" -o cat --no-pager)"
  expect_match "unit state after the SIGKILL" "^(inactive|failed) " "$(tb_agent_unit deaf)"
  expect_ne "roster row" running "$(tb_row deaf)"
  expect_eq "machined's machines named h-deaf" "" "$(in_c machinectl list --no-legend --no-pager | grep '^h-deaf ' || true)"
  expect_eq "crash lines for an operator's stop" "" "$(_crash_lines deaf || true)"
}

a_sigkilled_container_leader_is_recorded_as_a_crash_and_the_row_fails_within_a_second() {
  tb_hive; tb_agents crash
  hivectl_root spawn crash >/dev/null
  local leader
  leader=$(unit_prop systemd-nspawn@h-crash.service MainPID)
  expect_ne "MainPID of the running unit" 0 "$leader"
  in_c kill -KILL "$leader"
  wait_for 1 "the row to say failed within 1 s of the SIGKILL" tb_row_is crash failed
  expect_eq "unit state, result" "failed failed signal" \
    "$(tb_agent_unit crash) $(unit_prop systemd-nspawn@h-crash.service Result)"
  # The store's crash record and the manager's container_crash are written together with this
  # line (service/roster.rs); the broker's inbox cannot be read over host.sock yet.
  wait_for 5 "the daemon's crash line with AGENT=crash" _crash_lines crash || true
  expect_eq "the daemon's crash lines with AGENT=crash" "crash: container crashed (unit result: signal)" "$(_crash_lines crash || true)"
  expect_match "the crash line's RESULT field" '"RESULT":"signal"' \
    "$(in_c journalctl -u "$TB_UNIT" AGENT=crash -o json --no-pager | grep -F 'crash: container crashed')"
}

# `hivectl start --all` sends the names of the stopped agents; a raw {"cmd":"start","scope":{}}
# selects every agent. "Every agent" includes the manager (ruth, registered by the daemon itself),
# so the bed gives ruth a container as an installation would.
_raw_start_empty_scope() {
  in_c "$TB_PYTHON" -c 'import json, socket
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect("/run/hyperhive/host.sock")
s.sendall(b"{\"cmd\":\"start\",\"scope\":{}}\n")
buf = b""
while not buf.endswith(b"\n"):
    chunk = s.recv(65536)
    if not chunk: break
    buf += chunk
print(buf.decode().strip())'
}
start_all_and_a_raw_empty_scope_each_start_every_agent() {
  tb_hive; tb_agents all-a all-b
  tb_manager_container
  tb_spawn all-a
  tb_spawn all-b
  local out rc=0 n
  # `stop` is graceful: units end inactive
  out=$(hivectl_root stop --all 2>&1) || rc=$?
  expect_eq "hivectl stop --all exit code (output: $out)" 0 "$rc"
  for n in all-a all-b ruth; do expect_eq "row of $n after stop --all" stopped "$(tb_row "$n")"; done
  out=$(hivectl_root start --all 2>&1) || rc=$?
  expect_eq "hivectl start --all exit code (output: $out)" 0 "$rc"
  for n in all-a all-b ruth; do
    expect_eq "unit of $n after start --all" "active running" "$(tb_agent_unit "$n")"
    expect_eq "row of $n after start --all" running "$(tb_row "$n")"
  done
  # a hard stop (SIGKILL) of an operator leaves units stopped too, not failed
  hivectl_root stop --force --all >/dev/null
  for n in all-a all-b ruth; do expect_eq "row of $n after stop --force --all" stopped "$(tb_row "$n")"; done
  out=$(_raw_start_empty_scope)
  expect_match "the answer to {\"cmd\":\"start\",\"scope\":{}}" '"ok":true' "$out"
  for n in all-a all-b ruth; do
    expect_eq "unit of $n after scope {}" "active running" "$(tb_agent_unit "$n")"
    expect_eq "row of $n after scope {}" running "$(tb_row "$n")"
  done
}

restarting_the_daemon_leaves_containers_running_and_the_roster_resyncs() {
  tb_hive; tb_agents keep
  hivectl_root spawn keep >/dev/null
  local leader
  leader=$(unit_prop systemd-nspawn@h-keep.service MainPID)
  in_c systemctl restart "$TB_UNIT"
  expect_eq "the container's MainPID after the daemon's restart" "$leader" \
    "$(unit_prop systemd-nspawn@h-keep.service MainPID)"
  expect_eq "roster row from the new daemon" running "$(tb_row keep)"
  # What happened while no daemon ran is picked up by the next one's resync.
  in_c systemctl stop "$TB_UNIT"
  in_c systemctl stop systemd-nspawn@h-keep.service
  expect_eq "roster row after a stop the daemon did not see" stopped "$(tb_row keep)"
  in_c systemctl stop "$TB_UNIT"
  in_c systemctl start systemd-nspawn@h-keep.service
  expect_eq "roster row after a start the daemon did not see" running "$(tb_row keep)"
}

destroy_with_purge_removes_the_image_the_nspawn_file_and_the_row() {
  tb_hive; tb_agents purge
  hivectl_root spawn purge >/dev/null
  expect_match "machinectl list-images before" "^h-purge " "$(in_c machinectl list-images --no-legend --no-pager)"
  expect_eq "h-purge.nspawn after spawn" yes "$(in_c test -e /etc/systemd/nspawn/h-purge.nspawn && echo yes || echo no)"
  local out rc=0
  out=$(hivectl_root destroy --purge purge 2>&1) || rc=$?
  expect_eq "hivectl destroy --purge purge exit code (output: $out)" 0 "$rc"
  expect_eq "machinectl list-images lines for h-purge" "" \
    "$(in_c machinectl list-images --no-legend --no-pager | grep '^h-purge ' || true)"
  expect_eq "h-purge.nspawn after destroy --purge" no "$(in_c test -e /etc/systemd/nspawn/h-purge.nspawn && echo yes || echo no)"
  expect_eq "unit state" inactive "$(unit_prop systemd-nspawn@h-purge.service ActiveState)"
  expect_eq "agent state and runtime dirs left" "" \
    "$(in_c ls -d /var/lib/hyperhive/agents/purge /run/hyperhive/agents/purge 2>/dev/null || true)"
  expect_eq "roster row" "" "$(tb_row purge)"
}

each_agent_sees_only_its_own_run_hive() {
  tb_hive; tb_agents own-a own-b
  tb_spawn own-a
  tb_spawn own-b
  in_c sh -c 'echo for-own-a > /run/hyperhive/agents/own-a/tb-marker'
  expect_eq "/run/hive/tb-marker in h-own-a" for-own-a \
    "$(in_c timeout 20 systemd-run -q -M h-own-a --wait -P cat /run/hive/tb-marker 2>&1)"
  # h-own-b sees its own directory: its sockets, and not a's marker
  expect_eq "/run/hive in h-own-b" "egress.sock mcp.sock" \
    "$(in_c timeout 20 systemd-run -q -M h-own-b --wait -P ls -A /run/hive 2>&1 | xargs)"
  # and the other way round, from inside: h-own-b's write lands in its own directory only
  in_c timeout 20 systemd-run -q -M h-own-b --wait sh -c 'echo from-own-b > /run/hive/tb-back'
  expect_eq "host side of each agent's /run/hive" "own-a: egress.sock mcp.sock tb-marker own-b: egress.sock mcp.sock tb-back" \
    "own-a: $(in_c ls -A /run/hyperhive/agents/own-a | xargs) own-b: $(in_c ls -A /run/hyperhive/agents/own-b | xargs)"
}

# Regression: a read of a unloaded unit's properties loads it (UnitNew) and systemd unloads it
# again at once (UnitRemoved). The driver once read every new unit's state that way, so a
# single `systemctl show` of a stopped agent's unit set off an endless UnitNew/UnitRemoved
# exchange (~2000 a second, PID 1, dbus-daemon and hive-c0re at 100% CPU, then every D-Bus
# call of the daemon refused with LimitsExceeded).
_unit_signals() { grep -c "STRING \"$1\";" "$TB_DIR/monitor.out" || true; }   # UnitNew/UnitRemoved of $1
_monitoring() { [ -s "$TB_DIR/monitor.out" ]; }
_unloaded() { ! sd1 GetUnit s "$1" >/dev/null 2>&1; }
looking_at_a_stopped_agents_unit_sets_off_no_unit_signal_storm() {
  tb_hive; tb_agents quiet
  tb_spawn quiet
  hivectl_root stop quiet >/dev/null
  # systemd unloads the stopped unit (garbage collection); only then does a read load it again
  wait_for 5 "systemd to unload the stopped unit" _unloaded systemd-nspawn@h-quiet.service
  in_c timeout 1.5 busctl monitor --no-pager \
    --match "type='signal',sender='org.freedesktop.systemd1',interface='org.freedesktop.systemd1.Manager'" \
    >"$TB_DIR/monitor.out" 2>&1 &
  local mon=$!
  wait_for 5 "busctl monitor to start" _monitoring
  in_c systemctl show -P ActiveState systemd-nspawn@h-quiet.service >/dev/null   # loads it
  wait "$mon" || true
  local n; n=$(_unit_signals systemd-nspawn@h-quiet.service)
  if [ "$n" -lt 1 ] || [ "$n" -gt 4 ]; then
    echo "  expected 1-4 UnitNew/UnitRemoved of h-quiet's unit in 1.5 s after one systemctl show; saw $n"; false
  fi
  expect_eq "roster row" stopped "$(tb_row quiet)"
}

# Regression: systemd's daemon-reload sends UnitRemoved (for running units too) and UnitNew
# for every unit; the driver once applied the removal, and the roster recorded a crash of every
# running container on each reload.
a_daemon_reload_is_not_recorded_as_a_crash() {
  tb_hive; tb_agents reload
  hivectl_root spawn reload >/dev/null
  in_c systemctl daemon-reload
  expect_eq "roster row after the reload" running "$(tb_row reload)"
  # A real crash after it: its line comes after any the reload caused (one task, in order).
  in_c kill -KILL "$(unit_prop systemd-nspawn@h-reload.service MainPID)"
  wait_for 5 "the crash line of the SIGKILL" _crash_lines reload || true
  expect_eq "the daemon's crash lines with AGENT=reload (the SIGKILL's only)" "reload: container crashed (unit result: signal)" \
    "$(_crash_lines reload || true)"
}
