# shellcheck shell=bash
# The shipped unit's sandbox (issue 14): systemd-analyze security scores it at most 3.0, and
# the daemon really runs inside it. That every behaviour still works under it is the rest of
# this tier, which runs the same unit.

# The score systemd-analyze security gives the loaded unit (a number like 2.1).
_score() {
  in_c systemd-analyze security --no-pager "$TB_UNIT" 2>&1 \
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
