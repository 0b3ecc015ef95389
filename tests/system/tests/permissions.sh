# shellcheck shell=bash
# Who may use host.sock: the file modes systemd gives it, as the shipped socket unit says.

_modes() { in_c stat -c '%a %U:%G' /run/hyperhive/host.sock /run/hyperhive | paste -sd ' ' -; }

systemd_creates_host_sock_0660_root_hive_admin_in_a_0751_directory() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  expect_eq "host.sock, /run/hyperhive made by the socket unit" "660 root:hive-admin 751 root:root" "$(_modes)"
  hivectl_root status >/dev/null
  # the service's RuntimeDirectory= must not widen or narrow them
  expect_eq "host.sock, /run/hyperhive once the service runs" "660 root:hive-admin 751 root:root" "$(_modes)"
}

a_user_outside_hive_admin_gets_eacces_and_the_group_hint() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  expect_eq "the connect errno for hive-outsider" "EACCES" "$(in_c_as hive-outsider "$TB_PYTHON" -c '
import errno, socket, sys
try:
    socket.socket(socket.AF_UNIX).connect("/run/hyperhive/host.sock"); print("connected")
except OSError as e:
    print(errno.errorcode.get(e.errno, e.errno))')"
  local out rc=0
  out=$(hivectl_as hive-outsider status 2>&1) || rc=$?
  expect_eq "hivectl exit code for hive-outsider (output: $out)" 3 "$rc"
  expect_match "hivectl's hint" "hive-admin" "$out"
  # refused by the file mode: the daemon was never even started
  expect_eq "service state" "inactive" "$(unit_prop "$TB_UNIT" ActiveState)"
}

a_member_of_hive_admin_is_served() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  local out rc=0
  out=$(hivectl_as hive-member status 2>&1) || rc=$?
  expect_eq "hivectl exit code for hive-member (output: $out)" 0 "$rc"
}
