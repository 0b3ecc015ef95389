# shellcheck shell=bash
# Container starts slower than the daemon's answer budget (4 s), under the real systemd: a
# drop-in gives systemd-nspawn@h-<n>.service an `ExecStartPost=/bin/sleep 6`, so its start job
# lasts 6 s as a container whose boot systemd waits for does (the nixos profile's
# container@.service runs nspawn with --notify-ready=yes: every start job lasts the boot).
# What used to break: the driver waited 4 s for the job, then answered "still running" as an
# error; an approved spawn was recorded failed and the manager heard spawned{ok:false} while
# the container came up. The fast tier has the same with the fake driver (tests/slow_jobs.rs).

_slow_dropin() {   # _slow_dropin NAME: the drop-in that makes h-NAME's start job last 6 s
  mkdir -p "$TB_DIR/units/systemd-nspawn@h-$1.service.d"
  printf '[Service]\nExecStartPost=/bin/sleep 6\n' \
    > "$TB_DIR/units/systemd-nspawn@h-$1.service.d/tb-slow.conf"
  in_c systemctl daemon-reload
}
_drop_slow() {
  rm -rf "$TB_DIR/units/systemd-nspawn@h-$1.service.d"
  in_c systemctl daemon-reload
}

an_approved_spawn_of_a_container_slower_than_the_answer_budget_ends_approved_once_it_runs() {
  tb_hive; tb_agents slowspawn
  trap '_drop_slow slowspawn; tb_forget_agents' EXIT
  _slow_dropin slowspawn
  local out id rc=0 t
  out=$(hivectl_root request-spawn slowspawn 2>&1)
  id=$(sed -n 's/^approval \([0-9]*\): spawn slowspawn, pending.*/\1/p' <<<"$out")
  expect_match "request-spawn's answer" '^[0-9]+$' "$id"
  t=$(tb_now)
  out=$(hivectl_root approve "$id" 2>&1) || rc=$?
  expect_eq "approve answered within the 5 s protocol budget" 1 "$(( ($(tb_now) - t) < 5000000 ))"
  expect_match "approve's answer (exit $rc)" "still in progress" "$out"
  expect_eq "approve's exit status: in progress" 4 "$rc"
  expect_eq "the unit while its start job runs" "activating start-post" "$(tb_agent_unit slowspawn)"
  wait_for 20 "approval $id to end approved" tb_approval_is "$id" approved
  expect_eq "roster row" running "$(tb_row slowspawn)"
  expect_eq "the daemon's log of the approval" "" \
    "$(in_c journalctl -u "$TB_UNIT" AGENT=slowspawn -o cat --no-pager | grep -i 'failed' || true)"
}

a_start_slower_than_the_answer_budget_answers_in_progress_and_the_row_goes_running() {
  tb_hive; tb_agents slowstart
  trap '_drop_slow slowstart; tb_forget_agents' EXIT
  tb_spawn slowstart
  hivectl_root stop slowstart >/dev/null
  _slow_dropin slowstart
  local out rc=0
  out=$(hivectl_root start --no-block slowstart 2>&1) || rc=$?
  expect_eq "hivectl start --no-block exit status (output: $out)" 4 "$rc"
  expect_eq "roster row while the job runs" stopped "$(tb_row slowstart)"
  # Not running yet, but not stopped either: the row says so (it used to read "stopped").
  expect_eq "STATE column while the job runs" starting \
    "$(hivectl_root status --no-legend | awk '$1 == "slowstart" { print $2 }')"
  wait_for 20 "the row to say running" tb_row_is slowstart running
  expect_eq "unit" "active running" "$(tb_agent_unit slowstart)"
}
