# shellcheck shell=bash
# The bed itself can run what the container driver will ask of it: a nested container cloned
# from a template image by machined and booted as systemd-nspawn@<machine>.service. When the
# driver's tests fail, this one says whether the bed or the daemon is to blame.

_machine_gone() { ! m1 GetMachine s "$1" >/dev/null 2>&1; }
_stop_probe() {
  sd1 StopUnit ss systemd-nspawn@h-bed-probe.service replace >/dev/null 2>&1 || true
  wait_for 20 "h-bed-probe to stop" _machine_gone h-bed-probe || true
  in_c machinectl remove h-bed-probe 2>/dev/null || true
  in_c rm -f /etc/systemd/nspawn/h-bed-probe.nspawn
}

the_bed_boots_a_nested_container_cloned_from_the_template() {
  trap _stop_probe EXIT
  tb_make_template hive-template
  m1 CloneImage ssb hive-template h-bed-probe false
  tb_nspawn_settings h-bed-probe
  sd1 StartUnit ss systemd-nspawn@h-bed-probe.service replace >/dev/null
  wait_for 20 "machined to list h-bed-probe" m1 GetMachine s h-bed-probe
  tb_wait_machine 30 h-bed-probe
  in_c timeout 20 systemd-run -q -M h-bed-probe --wait --unit=bed-hello sh -c 'echo hello-from-nested'
  wait_for 5 "the nested unit's line in journalctl -M" \
    in_c journalctl -M h-bed-probe -u bed-hello -g hello-from-nested --no-pager
  expect_match "journalctl -M h-bed-probe -u bed-hello" "^hello-from-nested$" \
    "$(in_c journalctl -M h-bed-probe -u bed-hello --no-pager -o cat 2>&1)"
  sd1 StopUnit ss systemd-nspawn@h-bed-probe.service replace >/dev/null
  wait_for 20 "h-bed-probe to leave machined's list" _machine_gone h-bed-probe
  expect_eq "unit state after StopUnit" inactive \
    "$(unit_prop systemd-nspawn@h-bed-probe.service ActiveState)"
}
