# shellcheck shell=bash
# The daemon's reaction to systemd's UnitNew must not load the unit again: systemd loads a unit
# for anyone who reads it (`systemctl status`), unloads it when it is inactive, and announces
# every load with UnitNew. A daemon that answers UnitNew by reading the unit's properties
# reloads it, and the two feed each other (seen: 537 dbus-daemon "maximum number of pending
# replies" warnings in 3 s after one `systemctl show`, then the daemon's own CloneImage
# refused with LimitsExceeded).

_ul_monitor_ready() { grep -q "Monitoring bus message stream" "$TB_DIR/unitnew.err"; }

one_read_of_a_stopped_container_unit_loads_it_once_not_in_a_loop_with_the_daemon() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  hivectl_root status >/dev/null    # the daemon runs and is subscribed to systemd's signals
  # Every UnitNew on the bed's bus for 2 s (the loop, when there is one, makes hundreds a second).
  timeout 2 busctl --address="$TB_BUS" monitor \
    --match "type='signal',interface='org.freedesktop.systemd1.Manager',member='UnitNew'" \
    >"$TB_DIR/unitnew.out" 2>"$TB_DIR/unitnew.err" &
  local mon=$!
  wait_for 3 "busctl monitor to listen" _ul_monitor_ready
  in_c systemctl show -p ActiveState systemd-nspawn@h-ul-probe.service >/dev/null
  wait "$mon" || true               # timeout's exit status 124 is the normal end
  expect_eq "UnitNew signals for systemd-nspawn@h-ul-probe.service (one: systemctl's load)" 1 \
    "$(grep -c 'STRING "systemd-nspawn@h-ul-probe.service"' "$TB_DIR/unitnew.out" || true)"
  expect_eq "dbus-daemon's pending-replies warnings" 0 \
    "$(in_c journalctl -u dbus.service --after-cursor="$TB_CURSOR" --no-pager -o cat | grep -c 'maximum number of pending replies' || true)"
}
