# shellcheck shell=bash
# What the host has installed does not change what runs in the bed or in a hive's containers
# (issue 19: Chromium's recommends brought avahi-daemon, which failed in every nested container
# and left them "degraded"; 12 of 29 tests timed out). `run` boots the bed with a poison
# (tb_poison in lib.sh): a service that always fails, enabled by a preset, laid over the /usr
# the bed and its containers boot. Every other test of the tier runs with it too.

# _poison [-M MACHINE]: "LoadState UnitFileState ActiveState" of the poison unit.
_poison() {
  local p
  for p in LoadState UnitFileState ActiveState; do
    in_c systemctl "$@" show -P "$p" "$TB_POISON_UNIT"
  done | paste -sd' ' -
}
# _enabled_in IMAGE: the units enabled in IMAGE's /etc (its *.wants/ and *.requires/ links).
_enabled_in() {
  in_c find "/var/lib/machines/$1/etc/systemd/system" -path '*.wants/*' -o -path '*.requires/*' |
    sed 's|.*/||' | sort -u | paste -sd' ' -
}

a_failing_service_the_host_enables_by_preset_runs_neither_in_the_bed_nor_in_an_agent_container() {
  expect_eq "the poison in the bed's /usr (load, enablement, state)" "loaded disabled inactive" "$(_poison)"
  tb_hive; tb_agents clean
  tb_spawn clean
  expect_eq "the poison in h-clean (load, enablement, state)" "loaded disabled inactive" "$(_poison -M h-clean)"
  # Only what the container preset names is enabled in the clone's /etc (on Debian: nothing;
  # journald, dbus and logind are enabled statically by /usr).
  local allowed unit
  allowed=" $(tb_preset container | sed -n 's/^enable //p' | paste -sd' ' -) "
  for unit in $(_enabled_in h-clean); do
    expect_match "a unit enabled in h-clean's /etc (allowed:$allowed)" " $unit " "$allowed"
  done
}

# The counter-proof: the poison is real, and would reach a container without the preset. A
# degraded container still counts as ready (multi-user.target reached), and a wait that times
# out names the failed units inside.
without_the_preset_a_container_enables_the_failing_service_and_a_time_out_names_it() {
  trap 'tb_remove_machine h-nopreset' EXIT
  TB_NO_PRESET=1 tb_make_template h-nopreset
  tb_nspawn_settings h-nopreset
  sd1 StartUnit ss systemd-nspawn@h-nopreset.service replace >/dev/null
  wait_for 20 "machined to list h-nopreset" m1 GetMachine s h-nopreset
  tb_wait_machine 30 h-nopreset
  expect_eq "the poison in h-nopreset (load, enablement, state)" "loaded enabled failed" \
    "$(_poison -M h-nopreset)"
  expect_match "units enabled in h-nopreset's /etc" "(^| )$TB_POISON_UNIT( |$)" "$(_enabled_in h-nopreset)"
  expect_eq "h-nopreset's state" degraded "$(in_c systemctl -M h-nopreset is-system-running || true)"
  local out rc=0
  out=$(tb_wait_machine 1 h-nopreset "$TB_POISON_UNIT" 2>&1) || rc=$?
  expect_eq "exit code of a wait for the failed unit (output: $out)" 1 "$rc"
  expect_match "the time-out message" "inside h-nopreset: state: degraded; failed units: (.* )?$TB_POISON_UNIT( |;)" "$out"
}
