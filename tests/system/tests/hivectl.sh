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
hivectl_kill_signal_term_shuts_the_container_down_and_is_no_crash() {
  tb_hive; tb_agents hc-term
  tb_spawn hc-term
  local out rc=0
  out=$(hivectl_root kill hc-term --signal TERM 2>&1) || rc=$?
  expect_eq "hivectl kill --signal TERM: exit code and output" "0 hc-term: sent SIGTERM" "$rc $out"
  # KillUnit all: systemd-nspawn takes SIGTERM as "shut the container down".
  wait_for 30 "the unit to be down (inactive dead)" _hc_unit_is hc-term "inactive dead" || true
  expect_eq "unit after SIGTERM" "inactive dead" "$(tb_agent_unit hc-term)"
  expect_eq "STATE after SIGTERM" "stopped" "$(_hc_state hc-term)"
  expect_eq "crash lines for an operator's signal" "" "$(_hc_crash_lines hc-term)"
  rc=0; out=$(hivectl_root kill hc-term -s hup 2>&1) || rc=$?
  expect_match "a signal for a stopped container" "^1 .*hc-term.*not running" "$rc $out"
}

hivectl_status_shows_a_crash_as_failed_and_start_brings_it_back() {
  tb_hive; tb_agents hc-crash
  tb_spawn hc-crash
  in_c kill -KILL "$(unit_prop systemd-nspawn@h-hc-crash.service MainPID)"
  wait_for 2 "the row to say failed" tb_row_is hc-crash failed
  expect_match "status line after a crash" "^hc-crash +failed \(signal\)( |$)" \
    "$(hivectl_root status --no-legend | grep '^hc-crash ')"
  wait_for 5 "the crash line" test -n "$(_hc_crash_lines hc-crash)" || true
  expect_match "the daemon's crash line names the agent" "^hc-crash: container crashed \(unit result: signal\)$" \
    "$(_hc_crash_lines hc-crash)"
  local out rc=0
  out=$(hivectl_root start hc-crash 2>&1) || rc=$?
  expect_eq "hivectl start after the crash: exit code and output" "0 hc-crash: running" "$rc $out"
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
