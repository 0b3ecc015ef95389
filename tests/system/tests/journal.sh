# shellcheck shell=bash
# The daemon's logging under systemd.

_daemon_lines() {
  in_c journalctl -b -u "$TB_UNIT" -o json --no-pager | grep -F '"_COMM":"hive-c0re"'
}

the_daemons_own_log_lines_are_in_its_unit_journal() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  hivectl_root status >/dev/null
  wait_for 5 "a line logged by the hive-c0re process under $TB_UNIT" _daemon_lines || true
  expect_match "journalctl -u $TB_UNIT, lines with _COMM=hive-c0re" "MESSAGE" "$(_daemon_lines | head -3)"
}
