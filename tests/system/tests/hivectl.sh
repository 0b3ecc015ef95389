# shellcheck shell=bash
# hivectl as an operator uses it, against the real systemd of the bed: what `stop`, `kill` and a
# crash leave on real units and on the roster, and `hivectl watch` across a restart of the
# daemon (the socket stays with systemd; watch reconnects through it).

# "<agent>: container crashed ..." lines of the daemon about agent $1.
_hc_crash_lines() {
  in_c journalctl -u "$TB_UNIT" AGENT="$1" -o cat --no-pager | grep -F "$1: container crashed" || true
}

# The STATE cell of agent $1 in `hivectl status`.
_hc_state() {
  hivectl_root status --no-legend | awk -v n="$1" '$1 == n { print $2 }'
}

hivectl_stop_is_clean_and_kill_is_hard_and_neither_leaves_a_failed_unit_or_a_crash() {
  tb_hive; tb_agents hc-stop hc-kill
  tb_spawn hc-stop
  tb_spawn hc-kill
  local out rc=0
  out=$(hivectl_root stop hc-stop 2>&1) || rc=$?
  expect_eq "hivectl stop hc-stop: exit code and output" "0 hc-stop: stopped" "$rc $out"
  expect_eq "unit after stop: state, result" "inactive dead success" \
    "$(tb_agent_unit hc-stop) $(unit_prop systemd-nspawn@h-hc-stop.service Result)"
  out=$(hivectl_root kill hc-kill 2>&1) || rc=$?
  expect_eq "hivectl kill hc-kill: exit code and output" "0 hc-kill: stopped" "$rc $out"
  # SIGKILL leaves systemd's unit failed; the operator's kill clears it (reset-failed).
  expect_eq "unit after kill: state" "inactive dead" "$(tb_agent_unit hc-kill)"
  expect_eq "STATE column after stop and kill" "stopped stopped" "$(_hc_state hc-stop) $(_hc_state hc-kill)"
  expect_eq "crash lines for an operator's stop and kill" "" "$(_hc_crash_lines hc-stop)$(_hc_crash_lines hc-kill)"
}

_hc_unit_is() { test "$(tb_agent_unit "$1")" = "$2"; }
_hc_logs_have() { hivectl_root logs "$1" -n 1000 2>/dev/null | grep -qF "$2"; }
_hc_main_pid() { unit_prop "systemd-nspawn@h-$1.service" MainPID; }
_hc_came_back() {   # _hc_came_back AGENT OLD-PID: a new nspawn runs the container again
  # The pid first: between two reads the old unit can still say "active running" while its
  # MainPID is already 0 (nspawn exited); a new non-zero pid, then "active running", cannot.
  local pid; pid=$(_hc_main_pid "$1")
  [ "$pid" != 0 ] && [ "$pid" != "$2" ] && [ "$(tb_agent_unit "$1")" = "active running" ]
}
# `kill --signal` goes to the container's init, a systemd (machined's KillMachine "leader", as
# podman kill). What used to break: KillUnit "all" sent SIGTERM to nspawn and to every process
# inside; nspawn forwarded a halt to the init while the init took its own SIGTERM as "re-execute",
# and the container stayed `active running` for 30 s.
hivectl_kill_signal_goes_to_the_containers_systemd_which_reexecutes_on_term_and_reboots_on_int() {
  tb_hive; tb_agents hc-sig
  tb_spawn hc-sig
  local out rc=0 pid
  pid=$(_hc_main_pid hc-sig)
  out=$(hivectl_root kill hc-sig --signal TERM 2>&1) || rc=$?
  expect_eq "hivectl kill --signal TERM: exit code and output" "0 hc-sig: sent SIGTERM" "$rc $out"
  # systemd(1), SIGNALS: as PID 1 it takes SIGTERM as "serialize, re-execute, deserialize"
  wait_for 10 "the container's systemd to log its re-execution" _hc_logs_have hc-sig "Reexecuting." \
    || true
  expect_match "the container's journal" "systemd\[1\]: Reexecuting\.$" \
    "$(hivectl_root logs hc-sig -n 1000 2>&1)"
  expect_eq "unit and nspawn after SIGTERM" "active running $pid" \
    "$(tb_agent_unit hc-sig) $(_hc_main_pid hc-sig)"
  expect_eq "STATE after SIGTERM" "running" "$(_hc_state hc-sig)"
  # SIGINT is ctrl-alt-del: the container reboots, nspawn exits 133 and the unit restarts it
  rc=0; out=$(hivectl_root kill hc-sig -s int 2>&1) || rc=$?
  expect_eq "hivectl kill -s int: exit code and output" "0 hc-sig: sent SIGINT" "$rc $out"
  wait_for 30 "the container to come back under a new nspawn" _hc_came_back hc-sig "$pid" || true
  expect_eq "unit after SIGINT" "active running" "$(tb_agent_unit hc-sig)"
  expect_ne "nspawn's pid after the reboot" "$pid" "$(_hc_main_pid hc-sig)"
  wait_for 5 "the row to say running" tb_row_is hc-sig running || true
  expect_eq "STATE after the reboot" "running" "$(_hc_state hc-sig)"
  expect_eq "crash lines for an operator's signals" "" "$(_hc_crash_lines hc-sig)"
}

# host.sock's `signal` with KILL (hivectl's `kill` without --signal is the hard stop instead):
# the init dies, nspawn exits non-zero, the unit fails; an operator's deed, so no crash and the
# failed state is reset.
_raw_signal_kill() {
  in_c "$TB_PYTHON" -c 'import socket, sys
s = socket.socket(socket.AF_UNIX); s.settimeout(10); s.connect("/run/hyperhive/host.sock")
s.sendall(b"{\"cmd\":\"signal\",\"name\":\"" + sys.argv[1].encode() + b"\",\"signal\":\"KILL\"}\n")
buf = b""
while not buf.endswith(b"\n"):
    chunk = s.recv(65536)
    if not chunk: break
    buf += chunk
print(buf.decode().strip())' "$1"
}
a_signal_kill_to_the_init_ends_the_container_stopped_and_is_no_crash() {
  tb_hive; tb_agents hc-sigkill
  tb_spawn hc-sigkill
  expect_eq "the signal verb's answer" '{"version":1,"ok":true}' "$(_raw_signal_kill hc-sigkill)"
  wait_for 10 "the unit to be down (inactive dead)" _hc_unit_is hc-sigkill "inactive dead" || true
  expect_eq "unit after SIGKILL of the init" "inactive dead" "$(tb_agent_unit hc-sigkill)"
  expect_eq "STATE after SIGKILL of the init" "stopped" "$(_hc_state hc-sigkill)"
  expect_eq "crash lines for an operator's signal" "" "$(_hc_crash_lines hc-sigkill)"
  local out rc=0
  out=$(hivectl_root kill hc-sigkill -s hup 2>&1) || rc=$?
  expect_match "a signal for a stopped container" "^1 .*hc-sigkill.*not running" "$rc $out"
}

hivectl_status_shows_a_crash_as_crashed_and_start_brings_it_back() {
  tb_hive; tb_agents hc-crash
  tb_spawn hc-crash
  in_c kill -KILL "$(unit_prop systemd-nspawn@h-hc-crash.service MainPID)"
  wait_for 2 "the row to say failed" tb_row_is hc-crash failed
  expect_match "status line after a crash" "^hc-crash +crashed \(signal\)( |$)" \
    "$(hivectl_root status --no-legend | grep '^hc-crash ')"
  wait_for 5 "the crash line" test -n "$(_hc_crash_lines hc-crash)" || true
  expect_match "the daemon's crash line names the agent" "^hc-crash: container crashed \(unit result: signal\)$" \
    "$(_hc_crash_lines hc-crash)"
  local out rc=0
  out=$(hivectl_root start hc-crash 2>&1) || rc=$?
  expect_eq "hivectl start after the crash: exit code and output" "0 hc-crash: running" "$rc $out"
  expect_eq "STATE after the start" "running" "$(_hc_state hc-crash)"
}

# Used to be: restart-all also started every stopped agent (the manager too).
hivectl_restart_all_restarts_the_running_agents_and_leaves_a_stopped_one_stopped() {
  tb_hive; tb_agents hc-ra-up hc-ra-down
  tb_spawn hc-ra-up
  tb_spawn hc-ra-down
  hivectl_root stop hc-ra-down >/dev/null
  local pid out rc=0
  pid=$(_hc_main_pid hc-ra-up)
  out=$(hivectl_root restart-all 2>&1) || rc=$?
  expect_eq "hivectl restart-all: exit code" "0" "$rc"
  expect_eq "restart-all's answer" "every running agent restarted" "$out"
  wait_for 20 "hc-ra-up to run in a new nspawn" _hc_came_back hc-ra-up "$pid"
  expect_eq "the stopped agent's unit after restart-all" "inactive dead" "$(tb_agent_unit hc-ra-down)"
  expect_eq "STATE of both after restart-all" "running stopped" "$(_hc_state hc-ra-up) $(_hc_state hc-ra-down)"
}

_hc_watch_has() { in_c grep -qF "$1" /run/tb-watch.out; }
_hc_stop_watch() { in_c systemctl stop tb-watch.service >/dev/null 2>&1 || true; tb_forget_agents; }
hivectl_watch_prints_the_roster_then_changes_and_survives_a_restart_of_the_daemon() {
  tb_hive; tb_agents hc-watch
  tb_spawn hc-watch
  trap _hc_stop_watch EXIT
  in_c systemd-run -q --unit=tb-watch -p StandardOutput=file:/run/tb-watch.out \
    -p StandardError=file:/run/tb-watch.err /usr/local/bin/hivectl watch
  wait_for 5 "watch to print the roster" _hc_watch_has "hc-watch: running"
  in_c systemctl restart "$TB_UNIT"
  wait_for 10 "watch to say it lost the daemon" in_c grep -qF "reconnecting" /run/tb-watch.err
  hivectl_root stop hc-watch >/dev/null
  wait_for 10 "watch to print the stop after the daemon's restart" _hc_watch_has "Z hc-watch: stopped"
  expect_eq "watch still running" active "$(in_c systemctl is-active tb-watch.service || true)"
  expect_eq "roster lines printed twice in a row" "" \
    "$(in_c sed -E 's/^[0-9TZ:-]+ //' /run/tb-watch.out | uniq -d)"
}

# The roster's uptime is systemd's ActiveEnterTimestamp: from the PropertiesChanged of the start,
# and read again by the resync of a restarted daemon.
_hc_since() {
  hivectl_root --json status | "$TB_PYTHON" -c 'import json, sys
for r in json.load(sys.stdin).get("agent_statuses") or []:
    if r["name"] == sys.argv[1]:
        print(r.get("running_since", "-"))' "$1"
}
hivectl_status_shows_the_uptime_systemd_stamped_also_after_a_daemon_restart() {
  tb_hive; tb_agents hc-up
  tb_spawn hc-up
  local unit_ts since
  unit_ts=$(in_c systemctl show -P ActiveEnterTimestamp --timestamp=unix systemd-nspawn@h-hc-up.service)
  since=$(_hc_since hc-up)
  expect_eq "running_since against the unit's ActiveEnterTimestamp" "$unit_ts" "@$(date -u -d "$since" +%s)"
  expect_match "the UPTIME column" "^NAME +STATE +UPTIME" "$(hivectl_root status)"
  expect_match "hc-up's uptime" "^hc-up +running +[0-9]+(s|m)( |$)" \
    "$(hivectl_root status | grep '^hc-up ')"
  in_c systemctl restart "$TB_UNIT"
  expect_eq "running_since after a daemon restart (the resync's read)" "$since" "$(_hc_since hc-up)"
}

# `hivectl inspect` on a real agent: the limits it reports are the ones systemd holds its unit
# to (TasksMax=), and its egress list names the hive's entry as the hive's.
_hc_inspect() {
  hivectl_root --json inspect "$1" | "$TB_PYTHON" -c 'import json, sys
f = json.load(sys.stdin)["inspect"]
print(f["name"], f["status"]["running"], f["limits"].get("tasks_max", "-"),
      f["egress"][0]["source"], "sha" if f["config"].get("deployed_sha") else "nosha")'
}
hivectl_inspect_reports_the_limits_systemd_holds_a_real_agent_to() {
  # The hive's allow-list is empty by default (the model goes through the gateway): one entry
  # so that inspect has an egress row whose source is the hive.
  tb_hive '{"egress_allow": ["pypi.org:443"]}'; tb_agents hc-in
  tb_spawn hc-in
  local tasks
  tasks=$(unit_prop systemd-nspawn@h-hc-in.service TasksMax)
  expect_eq "inspect's name, running, tasks_max, first egress source, sha" \
    "hc-in True $tasks hive sha" "$(_hc_inspect hc-in)"
  expect_match "the human form's limits section" "tasks max: +$tasks" "$(hivectl_root inspect hc-in)"
  local rc=0
  hivectl_root inspect hc-nobody >/dev/null 2>&1 || rc=$?
  expect_eq "inspect of an unknown agent: exit code" 1 "$rc"
}
