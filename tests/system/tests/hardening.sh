# shellcheck shell=bash
# The shipped unit's sandbox (issue 14): systemd-analyze security scores it at most 3.0, and
# the daemon really runs inside it. That every behaviour still works under it is the rest of
# this tier, which runs the same unit.

# The score systemd-analyze security gives the loaded unit (a number like 2.1); UNIT: the
# daemon's by default.
_score() {
  in_c systemd-analyze security --no-pager "${1:-$TB_UNIT}" 2>&1 \
    | sed -n 's/.*Overall exposure level for [^:]*: \([0-9][0-9.]*\).*/\1/p'
}

the_shipped_unit_scores_at_most_3_0_in_systemd_analyze_security() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  hivectl_root status >/dev/null
  local score
  score=$(_score)
  expect_match "systemd-analyze security's overall exposure" '^[0-9]+(\.[0-9]+)?$' "$score"
  echo "  systemd-analyze security $TB_UNIT: $score"
  awk -v s="$score" 'BEGIN { exit !(s <= 3.0) }' || {
    echo "  expected an exposure of at most 3.0, saw $score:"
    in_c systemd-analyze security --no-pager "$TB_UNIT" | grep '✗' | sed 's/^/    /'
    return 1
  }
}

# Not just declared: the running daemon has exactly the unit's bounding set (CAP_CHOWN,
# CAP_DAC_OVERRIDE, CAP_FOWNER, CAP_SETGID, CAP_SYS_CHROOT, CAP_SYS_PTRACE, CAP_SYS_ADMIN), a seccomp
# filter, no new privileges, and a network namespace of its own (PrivateNetwork=yes).
the_running_daemon_has_the_units_capabilities_seccomp_filter_and_no_network() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  hivectl_root status >/dev/null
  local pid status
  pid=$(unit_prop "$TB_UNIT" MainPID)
  expect_ne "the daemon's MainPID" 0 "$pid"
  status=$(in_c cat "/proc/$pid/status")
  expect_eq "CapBnd" 00000000002c004b "$(awk '/^CapBnd:/ { print $2 }' <<<"$status")"
  expect_eq "Seccomp (2: filter)" 2 "$(awk '/^Seccomp:/ { print $2 }' <<<"$status")"
  expect_eq "NoNewPrivs" 1 "$(awk '/^NoNewPrivs:/ { print $2 }' <<<"$status")"
  expect_ne "the daemon's network namespace (the bed's is $(in_c readlink /proc/1/ns/net))" \
    "$(in_c readlink /proc/1/ns/net)" "$(in_c readlink "/proc/$pid/ns/net")"
}

# The unit's LimitNOFILE=65536 reaches the daemon, soft and hard (systemd caps it at its own
# hard limit: the bed's PID 1 inherits this machine's), it logs the limit at start, and it
# warns exactly when a full hive of the default 1,000 agents at 16 connections each (18,024
# fds) would not fit.
_fds() { awk '/^Max open files/ { print $4, $5 }'; }
the_running_daemon_gets_the_units_open_files_limit_and_warns_only_when_a_full_hive_would_not_fit() {
  in_c systemctl start "$TB_SOCKET_UNIT"
  hivectl_root status >/dev/null
  local pid log ceiling want
  pid=$(unit_prop "$TB_UNIT" MainPID)
  expect_ne "the daemon's MainPID" 0 "$pid"
  ceiling=$(in_c cat /proc/1/limits | _fds | cut -d' ' -f2)
  want=65536
  [ "$ceiling" != unlimited ] && [ "$ceiling" -lt "$want" ] && want=$ceiling
  echo "  open files: $want (the bed's PID 1 may have $ceiling)"
  expect_eq "Max open files (soft hard) under LimitNOFILE=65536, PID 1's hard limit $ceiling" \
    "$want $want" "$(in_c cat "/proc/$pid/limits" | _fds)"
  log=$(in_c journalctl -b -u "$TB_UNIT" -o cat --no-pager)
  expect_match "the daemon's open files line" "open files limit" "$log"
  if [ "$want" -ge 18024 ]; then
    if grep -q "a full hive may hold" <<<"$log"; then
      echo "  the daemon warned with $want open files, enough for 18,024:"
      grep "a full hive may hold" <<<"$log" | sed 's/^/    /'
      return 1
    fi
  else
    expect_match "the daemon's warning at $want open files" \
      "the open files limit $want is below the 18024 a full hive may hold" "$log"
  fi
}

# The one process of the hive with a network (agents' egress, issue 27) is the least privileged:
# a dynamic user, no capability at all, a seccomp filter, and a score of at most 1.5.
the_egress_service_has_the_network_and_nothing_else_no_root_no_capabilities() {
  in_c systemctl start hive-c0re-egress.socket hive-c0re-egress.service
  local score pid status
  score=$(_score hive-c0re-egress.service)
  echo "  systemd-analyze security hive-c0re-egress.service: $score"
  awk -v s="$score" 'BEGIN { exit !(s <= 1.5) }' || {
    echo "  expected an exposure of at most 1.5, saw $score"; return 1; }
  pid=$(unit_prop hive-c0re-egress.service MainPID)
  expect_ne "the egress service's MainPID" 0 "$pid"
  status=$(in_c cat "/proc/$pid/status")
  expect_ne "its uid (a dynamic user)" 0 "$(awk '/^Uid:/ { print $2 }' <<<"$status")"
  expect_eq "CapBnd" 0000000000000000 "$(awk '/^CapBnd:/ { print $2 }' <<<"$status")"
  expect_eq "Seccomp (2: filter)" 2 "$(awk '/^Seccomp:/ { print $2 }' <<<"$status")"
  expect_eq "its network namespace: the bed's" \
    "$(in_c readlink /proc/1/ns/net)" "$(in_c readlink "/proc/$pid/ns/net")"
}
